package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

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
	id := p.NewSessionID
	if id == "" {
		id = protocol.NewID("ses_", 8)
	} else if !protocol.ValidID(id) {
		return nil, &protocol.ParamsError{Field: "newSessionId", Reason: "1-128 of [A-Za-z0-9._-]"}
	} else if _, err := m.Store.GetSession(ctx, id); err == nil {
		return nil, &protocol.ParamsError{Field: "newSessionId", Reason: fmt.Sprintf("a session %s exists already", id)}
	}
	if err := m.Store.Sync(); err != nil { // what the source wrote is readable
		return nil, err
	}
	if src, err = m.Store.GetSession(ctx, p.SessionID); err != nil {
		return nil, err
	}
	at := src.LastSeq
	if p.AtSeq != 0 {
		if p.AtSeq < 0 || p.AtSeq > src.LastSeq {
			return nil, &protocol.ParamsError{Field: "atSeq", Reason: fmt.Sprintf("%d: the session's events run from 1 to %d", p.AtSeq, src.LastSeq)}
		}
		at = p.AtSeq
	}
	// Where the fork ends: at, or the start of the turn at is inside.
	end, turns := at, 0
	open := int64(0) // the user_message of a turn not complete by at
	for since := int64(0); since < at; {
		evs, err := m.Store.Events(ctx, src.ID, since, forkPage, 0)
		if err != nil {
			return nil, err
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
	msgs, err := m.forkMessages(ctx, src, end, turns)
	if err != nil {
		return nil, err
	}
	rec := &store.Session{ID: id, AgentAlias: src.AgentAlias, Mode: src.Mode, Cwd: src.Cwd, Owner: owner, Title: src.Title,
		Model: src.Model, Risk: src.Risk, Reasoning: src.Reasoning, ForkedFrom: src.ID, ForkedSeq: at}
	if err := m.Store.CreateSession(rec); err != nil {
		return nil, err
	}
	// The events, as the source has them, under the new id.
	var werr error
	written := func(err error) {
		if err != nil && werr == nil {
			werr = err
		}
	}
	from, to := []byte(`{"sessionId":`+string(marshal(src.ID))), []byte(`{"sessionId":`+string(marshal(id)))
	for since := int64(0); since < end; {
		evs, err := m.Store.Events(ctx, src.ID, since, forkPage, 0)
		if err != nil || len(evs) == 0 {
			werr = errors.Join(werr, err)
			break
		}
		for _, ev := range evs {
			if ev.Seq > end {
				break
			}
			body := ev.Body
			if bytes.HasPrefix(body, from) {
				body = append(append([]byte(nil), to...), body[len(from):]...)
			} else {
				var fields map[string]json.RawMessage
				if json.Unmarshal(body, &fields) == nil {
					fields["sessionId"] = marshal(id)
					body = marshal(fields)
				}
			}
			m.Store.AppendEvent(id, store.Event{Seq: ev.Seq, Type: ev.Type, Body: body}, written)
		}
		since = evs[len(evs)-1].Seq
	}
	for i, b := range msgs {
		m.Store.AppendMessage(id, int64(i), b, written)
	}
	if err := m.Store.Sync(); err != nil || werr != nil {
		m.Store.DeleteSession(id)
		return nil, fmt.Errorf("fork: %w", errors.Join(err, werr))
	}
	m.Changed(id)
	m.Log.Info("session forked", "sessionId", id, "from", src.ID, "atSeq", at, "events", end, "messages", len(msgs))
	return &protocol.SessionForkResult{SessionID: id}, nil
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
