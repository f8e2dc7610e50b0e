// Package store keeps sessions, their events and their transcripts in one
// SQLite file (WAL). Every write goes through one writer goroutine that
// groups what is queued into a transaction, so a stream of events costs one
// commit per batch, and each write's completion callback runs only once it
// is committed: what a client is shown is already on disk.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Session states as stored.
const (
	StateIdle        = "idle"
	StateRunning     = "running"
	StateInterrupted = "interrupted" // a turn was running when the daemon died
)

// Session is one stored session.
type Session struct {
	ID           string
	AgentAlias   string
	Mode         string
	Cwd          string
	Owner        string // the clientId that created it
	Title        string
	State        string
	CreatedMs    int64
	UpdatedMs    int64
	LastSeq      int64
	MessageCount int64
}

// Event is one stored session/update: its params exactly as sent.
type Event struct {
	Seq  int64
	Type string
	Body []byte
}

// ErrNotFound is returned for an unknown session.
var ErrNotFound = errors.New("session not found")

// Store is an open database.
type Store struct {
	path string
	wdb  *sql.DB // one connection, used only by the writer goroutine
	rdb  *sql.DB // readers

	ops     chan op
	done    chan struct{}
	inserts map[int]*sql.Stmt // prepared multi-row event inserts, by rows; writer only
	closed  sync.Once
	mu      sync.RWMutex // guards stopping against late writes
	stop    bool
}

// op is one queued write. run executes it inside the batch's transaction;
// after, if set, runs once the batch is committed (with the batch's error).
// An event append has no run but sid and ev: the writer inserts runs of
// them with multi-row statements, the streaming hot path.
type op struct {
	run   func(tx *sql.Tx) error
	after func(error)
	sid   string
	ev    Event
}

// eventRows is how many events one INSERT statement carries.
const eventRows = 64

// batchMax bounds the writes grouped into one transaction.
const batchMax = 1024

// Open opens (creating if needed) the database at path and brings its
// schema up to date.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	dsn := "file:" + path + "?" + q.Encode()
	wdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	if err := migrate(wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	rdb.SetMaxOpenConns(4)
	if err := os.Chmod(path, 0o600); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{path: path, wdb: wdb, rdb: rdb, ops: make(chan op, 4*batchMax), done: make(chan struct{}),
		inserts: map[int]*sql.Stmt{}}
	if err := s.prepare(); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	go s.writer()
	return s, nil
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Close commits what is queued and closes the database.
func (s *Store) Close() error {
	s.closed.Do(func() {
		s.mu.Lock()
		s.stop = true
		close(s.ops)
		s.mu.Unlock()
		<-s.done
		for _, st := range s.inserts {
			st.Close()
		}
	})
	err := s.wdb.Close()
	if e := s.rdb.Close(); err == nil {
		err = e
	}
	return err
}

var errClosed = errors.New("store: closed")

// enqueue queues a write. It blocks while the queue is full, which slows a
// producer down to the disk's pace instead of growing memory.
func (s *Store) enqueue(o op) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stop {
		if o.after != nil {
			o.after(errClosed)
		}
		return
	}
	s.ops <- o
}

// do runs a write through the writer and waits for its commit.
func (s *Store) do(run func(tx *sql.Tx) error) error {
	ch := make(chan error, 1)
	var runErr error
	s.enqueue(op{run: func(tx *sql.Tx) error { runErr = run(tx); return nil }, after: func(err error) { ch <- err }})
	if err := <-ch; err != nil {
		return err
	}
	return runErr
}

func (s *Store) writer() {
	defer close(s.done)
	batch := make([]op, 0, batchMax)
	for o := range s.ops {
		batch = append(batch[:0], o)
	fill:
		for len(batch) < batchMax {
			select {
			case o, ok := <-s.ops:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		err := s.commit(batch)
		for _, o := range batch {
			if o.after != nil {
				o.after(err)
			}
		}
	}
}

func (s *Store) commit(batch []op) error {
	tx, err := s.wdb.Begin()
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	fail := func(err error) error {
		tx.Rollback()
		return fmt.Errorf("store: %w", err)
	}
	for i := 0; i < len(batch); {
		if batch[i].run != nil {
			if err := batch[i].run(tx); err != nil {
				return fail(err)
			}
			i++
			continue
		}
		j := i
		for j < len(batch) && batch[j].run == nil {
			j++
		}
		if err := s.insertEvents(tx, batch[i:j]); err != nil {
			return fail(err)
		}
		i = j
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// insertEvents inserts a run of event appends, eventRows at a time, and
// moves each session's last_seq once.
func (s *Store) insertEvents(tx *sql.Tx, evs []op) error {
	last := map[string]int64{}
	args := make([]any, 0, 4*eventRows)
	for len(evs) > 0 {
		n := eventRows // the largest prepared size that fits
		for n > len(evs) {
			n /= 2
		}
		args = args[:0]
		for _, o := range evs[:n] {
			args = append(args, o.sid, o.ev.Seq, o.ev.Type, o.ev.Body)
			if o.ev.Seq > last[o.sid] {
				last[o.sid] = o.ev.Seq
			}
		}
		stmt, err := s.insertStmt(n)
		if err != nil {
			return err
		}
		if _, err := tx.Stmt(stmt).Exec(args...); err != nil {
			return err
		}
		evs = evs[n:]
	}
	now := nowMs()
	for sid, seq := range last {
		if _, err := tx.Exec(`UPDATE sessions SET last_seq = ?, updated_ms = ? WHERE id = ? AND last_seq < ?`, seq, now, sid, seq); err != nil {
			return err
		}
	}
	return nil
}

// insertStmt returns the prepared INSERT of n event rows (a power of two
// up to eventRows, prepared at Open: the writer's transaction holds the
// only connection, so nothing can be prepared while it runs).
func (s *Store) insertStmt(n int) (*sql.Stmt, error) {
	if st := s.inserts[n]; st != nil {
		return st, nil
	}
	return nil, fmt.Errorf("no prepared insert of %d rows", n)
}

func (s *Store) prepare() error {
	for n := 1; n <= eventRows; n *= 2 {
		q := "INSERT INTO events (session_id, seq, type, body) VALUES (?, ?, ?, ?)" + strings.Repeat(", (?, ?, ?, ?)", n-1)
		st, err := s.wdb.Prepare(q)
		if err != nil {
			return err
		}
		s.inserts[n] = st
	}
	return nil
}

func nowMs() int64 { return time.Now().UnixMilli() }

// CreateSession stores a new session; its CreatedMs and UpdatedMs are set
// to now when zero.
func (s *Store) CreateSession(ss *Session) error {
	if ss.CreatedMs == 0 {
		ss.CreatedMs = nowMs()
	}
	if ss.UpdatedMs == 0 {
		ss.UpdatedMs = ss.CreatedMs
	}
	if ss.State == "" {
		ss.State = StateIdle
	}
	return s.do(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO sessions (id, agent_alias, mode, cwd, owner, title, state, created_ms, updated_ms, last_seq, message_count)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ss.ID, ss.AgentAlias, ss.Mode, ss.Cwd, ss.Owner, ss.Title, ss.State, ss.CreatedMs, ss.UpdatedMs, ss.LastSeq, ss.MessageCount)
		return err
	})
}

// SetState records a session's state.
func (s *Store) SetState(id, state string) {
	s.enqueue(op{run: func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE sessions SET state = ?, updated_ms = ? WHERE id = ?`, state, nowMs(), id)
		return err
	}})
}

// SetTitle records a session's title.
func (s *Store) SetTitle(id, title string) {
	s.enqueue(op{run: func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE sessions SET title = ? WHERE id = ?`, title, id)
		return err
	}})
}

// AppendEvent queues one event; after (if not nil) runs once it is
// committed, with the commit's error.
func (s *Store) AppendEvent(sessionID string, ev Event, after func(error)) {
	s.enqueue(op{sid: sessionID, ev: ev, after: after})
}

// AppendMessage queues one transcript message (JSON) at index idx.
func (s *Store) AppendMessage(sessionID string, idx int64, body []byte) {
	s.enqueue(op{run: func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO messages (session_id, idx, body) VALUES (?, ?, ?)`, sessionID, idx, body); err != nil {
			return err
		}
		_, err := tx.Exec(`UPDATE sessions SET message_count = ? WHERE id = ? AND message_count < ?`, idx+1, sessionID, idx+1)
		return err
	}})
}

// Sync waits until every write queued before it is committed.
func (s *Store) Sync() error { return s.do(func(*sql.Tx) error { return nil }) }

// DeleteSession removes a session with its events and transcript.
func (s *Store) DeleteSession(id string) (bool, error) {
	var n int64
	err := s.do(func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM events WHERE session_id = ?`, `DELETE FROM messages WHERE session_id = ?`} {
			if _, err := tx.Exec(q, id); err != nil {
				return err
			}
		}
		r, err := tx.Exec(`DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err = r.RowsAffected()
		return err
	})
	return n > 0, err
}

// MarkInterrupted marks every session stored as running as interrupted
// (their daemon died mid-turn) and returns their ids.
func (s *Store) MarkInterrupted() ([]string, error) {
	var ids []string
	err := s.do(func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT id FROM sessions WHERE state = ?`, StateRunning)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE sessions SET state = ? WHERE state = ?`, StateInterrupted, StateRunning)
		return err
	})
	return ids, err
}

const sessionCols = `id, agent_alias, mode, cwd, owner, title, state, created_ms, updated_ms, last_seq, message_count`

func scanSession(sc interface{ Scan(...any) error }) (*Session, error) {
	var ss Session
	err := sc.Scan(&ss.ID, &ss.AgentAlias, &ss.Mode, &ss.Cwd, &ss.Owner, &ss.Title, &ss.State, &ss.CreatedMs, &ss.UpdatedMs, &ss.LastSeq, &ss.MessageCount)
	return &ss, err
}

// GetSession reads one session.
func (s *Store) GetSession(ctx context.Context, id string) (*Session, error) {
	ss, err := scanSession(s.rdb.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return ss, nil
}

// ListSessions returns sessions, most recently updated first, skipping
// offset and returning at most limit.
func (s *Store) ListSessions(ctx context.Context, offset, limit int) ([]*Session, int, error) {
	var total int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: %w", err)
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions ORDER BY updated_ms DESC, id LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: %w", err)
		}
		out = append(out, ss)
	}
	return out, total, rows.Err()
}

// Events returns a session's events with seq > since, at most limit
// (0: all), in order.
func (s *Store) Events(ctx context.Context, sessionID string, since int64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT seq, type, body FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, sessionID, since, limit)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		if err := rows.Scan(&ev.Seq, &ev.Type, &ev.Body); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

// Messages returns a session's transcript, in order.
func (s *Store) Messages(ctx context.Context, sessionID string) ([][]byte, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT body FROM messages WHERE session_id = ? ORDER BY idx`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
