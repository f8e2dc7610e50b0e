package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Input is one input of a session (a prompt or a steer) and its fate:
// the row a clientMessageId is checked against, a turn's claim (state
// started, its turn and attempts) and its end (the prompt's result).
type Input struct {
	ID              string // in_<hex>
	ClientMessageID string // "": the client gave none
	Kind            string // prompt or steer
	// State is queued, started, steered, completed, cancelled or
	// discarded (a refused input is not kept: it was not taken).
	State    string
	TurnID   string
	Attempts int
	// Prompt is what it asked (JSON, the session's to read back);
	// Result its answer once it ended (JSON).
	Prompt, Result []byte
	CreatedMs      int64
	// Ord is its place in the session's inputs: set when its row is
	// first written (the session's last plus one), kept by every later
	// write. Open inputs are read in this order.
	Ord int64
	// Seq is the seq of the event its claim was last written with (see
	// AppendEventWithInput); 0 when none.
	Seq int64
}

// InputKeep is how long an ended input's clientMessageId is remembered.
const InputKeep = 24 * time.Hour

// PutInput writes in (inserted, or replacing the row of its id), queued
// behind the session's earlier writes; after (if not nil) gets its
// error.
func (s *Store) PutInput(sessionID string, in Input, after func(error)) {
	s.enqueue(op{sid: sessionID, after: after, run: putInput(sessionID, in)})
}

// AppendEventWithInput appends ev and writes in in the same transaction
// (a turn's claim with its user_message, its result with its
// turn_complete): a crash keeps both or neither.
func (s *Store) AppendEventWithInput(sessionID string, ev Event, in Input, after func(error)) {
	in.Seq = ev.Seq
	s.enqueue(op{sid: sessionID, ev: ev, isEvent: true, with: putInput(sessionID, in), after: after})
}

func putInput(sid string, in Input) func(ctx context.Context, c *sql.Conn) error {
	now := nowMs()
	created := in.CreatedMs
	if created == 0 {
		created = now
	}
	var cmid any
	if in.ClientMessageID != "" {
		cmid = in.ClientMessageID
	}
	return func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO inputs (session_id, input_id, client_message_id, kind, state, turn_id, attempts, prompt, result, created_ms, updated_ms, seq, ord)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, (SELECT coalesce(max(ord), 0) + 1 FROM inputs WHERE session_id = ?1))
			ON CONFLICT (session_id, input_id) DO UPDATE SET state = excluded.state, turn_id = excluded.turn_id, attempts = excluded.attempts,
				prompt = coalesce(excluded.prompt, prompt), result = excluded.result, updated_ms = excluded.updated_ms,
				seq = CASE WHEN excluded.seq > 0 THEN excluded.seq ELSE seq END`,
			sid, in.ID, cmid, in.Kind, in.State, in.TurnID, in.Attempts, in.Prompt, in.Result, created, now, in.Seq)
		return err
	}
}

const inputCols = `input_id, coalesce(client_message_id, ''), kind, state, turn_id, attempts, prompt, result, created_ms, seq, ord`

func scanInput(sc interface{ Scan(...any) error }) (*Input, error) {
	var in Input
	err := sc.Scan(&in.ID, &in.ClientMessageID, &in.Kind, &in.State, &in.TurnID, &in.Attempts, &in.Prompt, &in.Result, &in.CreatedMs, &in.Seq, &in.Ord)
	return &in, err
}

// InputByClientID is the session's input with that clientMessageId
// (ErrNotFound: none within InputKeep).
func (s *Store) InputByClientID(ctx context.Context, sessionID, clientMessageID string) (*Input, error) {
	row := s.rdb.QueryRowContext(ctx, `SELECT `+inputCols+` FROM inputs WHERE session_id = ? AND client_message_id = ? AND updated_ms >= ?`,
		sessionID, clientMessageID, nowMs()-InputKeep.Milliseconds())
	in, err := scanInput(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return in, nil
}

// OpenInputs are the session's inputs left queued or started (a dead
// daemon's), in the order their rows were first written (Ord): the
// order they were queued in, whatever their creation times.
func (s *Store) OpenInputs(ctx context.Context, sessionID string) ([]*Input, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+inputCols+` FROM inputs WHERE session_id = ? AND state IN ('queued', 'started') ORDER BY ord, input_id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []*Input
	for rows.Next() {
		in, err := scanInput(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// OpenInputSessions are the sessions with inputs left queued or started
// (a dead daemon's).
func (s *Store) OpenInputSessions(ctx context.Context) ([]string, error) {
	return s.ids(ctx, `SELECT DISTINCT session_id FROM inputs WHERE state IN ('queued', 'started') ORDER BY session_id`)
}

// PruneInputs forgets the ended inputs older than InputKeep.
func (s *Store) PruneInputs() error {
	return s.do("", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `DELETE FROM inputs WHERE updated_ms < ? AND state NOT IN ('queued', 'started')`, nowMs()-InputKeep.Milliseconds())
		return err
	})
}
