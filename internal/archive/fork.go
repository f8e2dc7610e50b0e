package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/checkpoint"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// forkPage is how many events a fork copies at a time: memory stays
// bounded whatever the session's size.
const forkPage = 1000

// Fork makes a new session whose history is the source's up to atSeq
// (copied, seqs from 1) and whose model sees the conversation up to
// there: same agent, directory, model, risk and reasoning. A seq inside
// a turn forks at that turn's start. The source is left as it was.
func (m *Archive) Fork(ctx context.Context, owner string, p protocol.SessionForkParams) (*protocol.SessionForkResult, error) {
	src, err := m.Store.GetSession(ctx, p.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, p.SessionID)
	}
	if err != nil {
		return nil, err
	}
	id, err := m.forkID(ctx, p.NewSessionID)
	if err != nil {
		return nil, err
	}
	if err := m.Store.Sync(); err != nil { // what the source wrote is readable
		return nil, err
	}
	if src, err = m.Store.GetSession(ctx, p.SessionID); err != nil {
		return nil, err
	}
	at, err := forkAt(src, p.AtSeq)
	if err != nil {
		return nil, err
	}
	end, turns, err := m.forkEnd(ctx, src.ID, at)
	if err != nil {
		return nil, err
	}
	msgs, err := m.forkMessages(ctx, src, end, turns)
	if err != nil {
		return nil, err
	}
	rec := &store.Session{ID: id, AgentAlias: src.AgentAlias, Mode: src.Mode, Cwd: src.Cwd, Owner: owner, Title: src.Title,
		Model: src.Model, Risk: src.Risk, Reasoning: src.Reasoning, ForkedFrom: src.ID, ForkedSeq: at}
	if err := m.Store.CreateSession(rec); err != nil {
		return nil, err
	}
	// The first write that failed (told on the store's writer
	// goroutine) and a read that failed (here) are both the fork's
	// failure: wmu orders them.
	var (
		wmu  sync.Mutex
		werr error
	)
	written := func(err error) {
		wmu.Lock()
		defer wmu.Unlock()
		if err != nil && werr == nil {
			werr = err
		}
	}
	if err := m.forkEvents(ctx, src.ID, id, end, written); err != nil {
		wmu.Lock()
		werr = errors.Join(werr, err)
		wmu.Unlock()
	}
	for i, b := range msgs {
		m.Store.AppendMessage(id, int64(i), b, written)
	}
	serr := m.Store.Sync()
	wmu.Lock()
	failed := werr
	wmu.Unlock()
	if serr != nil || failed != nil {
		m.Store.DeleteSession(id)
		return nil, fmt.Errorf("fork: %w", errors.Join(serr, failed))
	}
	m.Changed(id)
	m.Log.Info("session forked", "sessionId", id, "from", src.ID, "atSeq", at, "events", end, "messages", len(msgs))
	return &protocol.SessionForkResult{SessionID: id}, nil
}

// forkID is the new session's id: the one asked for, valid and not
// taken, or a new one.
func (m *Archive) forkID(ctx context.Context, asked string) (string, error) {
	if asked == "" {
		return protocol.NewID("ses_", 8), nil
	}
	if !protocol.ValidID(asked) {
		return "", &protocol.ParamsError{Field: "newSessionId", Reason: "1-128 of [A-Za-z0-9._-]"}
	}
	if _, err := m.Store.GetSession(ctx, asked); err == nil {
		return "", &protocol.ParamsError{Field: "newSessionId", Reason: fmt.Sprintf("a session %s exists already", asked)}
	}
	return asked, nil
}

// forkAt is the seq a fork is asked at: atSeq, one of the source's
// events, or its last when 0.
func forkAt(src *store.Session, atSeq int64) (int64, error) {
	if atSeq == 0 {
		return src.LastSeq, nil
	}
	if atSeq < 0 || atSeq > src.LastSeq {
		return 0, &protocol.ParamsError{Field: "atSeq", Reason: fmt.Sprintf("%d: the session's events run from 1 to %d", atSeq, src.LastSeq)}
	}
	return atSeq, nil
}

// forkEnd is where the fork ends, at or the start of the turn at is
// inside, and the number of turns begun by then.
func (m *Archive) forkEnd(ctx context.Context, srcID string, at int64) (end int64, turns int, err error) {
	end = at
	open := int64(0) // the user_message of a turn not complete by at
	for since := int64(0); since < at; {
		evs, err := m.Store.Events(ctx, srcID, since, forkPage, 0)
		if err != nil {
			return 0, 0, err
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.Seq > at {
				break
			}
			// An event that does not read (not even its header) is
			// copied as it is: only prompts and turns' ends place the cut.
			u, _ := protocol.ParseUpdate(ev.Body)
			switch e := u.Event.(type) {
			case protocol.UserMessageEvent:
				if !e.Steered { // a steer joins the turn it steers
					open = ev.Seq
					turns++
				}
			case protocol.TurnCompleteEvent:
				open = 0
			}
		}
		since = evs[len(evs)-1].Seq
	}
	if open != 0 {
		end, turns = open-1, turns-1
	}
	return end, turns, nil
}

// forkEvents queues the source's events up to end, as the source has
// them, under the new id; written gets each write's error. The error
// returned is reading the source's.
func (m *Archive) forkEvents(ctx context.Context, srcID, id string, end int64, written func(error)) error {
	from, to := []byte(`{"sessionId":`+string(marshal(srcID))), []byte(`{"sessionId":`+string(marshal(id)))
	for since := int64(0); since < end; {
		evs, err := m.Store.Events(ctx, srcID, since, forkPage, 0)
		if err != nil || len(evs) == 0 {
			return err
		}
		for _, ev := range evs {
			if ev.Seq > end {
				break
			}
			m.Store.AppendEvent(id, store.Event{Seq: ev.Seq, Type: ev.Type, Body: reowned(ev.Body, from, to, id)}, written)
		}
		since = evs[len(evs)-1].Seq
	}
	return nil
}

// reowned is an event's body with the new session's id: its opening
// member swapped as bytes (the way the daemon writes them), else the
// body decoded and written again; one that does not decode is kept as
// it is.
func reowned(body, from, to []byte, id string) []byte {
	if bytes.HasPrefix(body, from) {
		return append(append([]byte(nil), to...), body[len(from):]...)
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) == nil {
		fields["sessionId"] = marshal(id)
		return marshal(fields)
	}
	return body
}

// forkMessages is the source's transcript as the model saw it before
// its turn number turns+1 began (the event at seq end is the last one
// the fork keeps): cut where the checkpoints say that turn started,
// else after the turns-th prompt.
func (m *Archive) forkMessages(ctx context.Context, src *store.Session, end int64, turns int) ([][]byte, error) {
	all, err := m.Store.Messages(ctx, src.ID)
	if err != nil {
		return nil, err
	}
	if m.CheckpointDir != "" {
		if cp, err := checkpoint.Open(filepath.Join(m.CheckpointDir, src.ID), src.Cwd, checkpoint.Options{}); err == nil {
			ts := cp.Turns()
			// Trusted when no turn before the first kept one was pruned,
			// or the cut comes after it.
			if len(ts) > 0 && (ts[0].N == 1 || ts[0].Seq <= end) {
				for _, t := range ts {
					if t.Seq > end {
						return all[:min(t.Messages, len(all))], nil
					}
				}
				return all, nil
			}
		}
	}
	// No checkpoints: count the prompts.
	seen := 0
	for i, b := range all {
		var msg provider.Message
		if json.Unmarshal(b, &msg) == nil && msg.Role == provider.RoleUser {
			seen++
			if seen > turns {
				return all[:i], nil
			}
		}
	}
	return all, nil
}

// marshal is v as JSON (an id, a decoded event's members: never fails).
func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
