package session

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/zeroclaw/zeroclaw/internal/cut"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Resuming a stored session: its transcript read and repaired (results
// for calls a crash or a fence left open) before its first turn.

func (m *Manager) resume(ctx context.Context, rec *store.Session) (*Session, error) {
	s, err := m.newSession(rec.ID, rec.AgentAlias, rec.Mode, rec.Cwd, rec.Owner)
	if err != nil {
		return nil, err
	}
	// The transcript is read at the first turn, not here: attaching to a
	// session costs the same whatever its length.
	s.unloaded, s.storedMessages = true, rec.MessageCount
	s.events.Resume(rec.LastSeq)
	s.model, s.risk, s.reasoning = rec.Model, rec.Risk, rec.Reasoning
	s.spent = rec.Usage
	s.sbMode, s.noNetwork = rec.Sandbox, rec.NoNetwork
	s.lineage = protocol.Lineage{ParentSessionID: rec.ParentID, ParentToolCallID: rec.ParentToolCallID, Depth: rec.Depth}
	s.description = rec.Description
	if m.conf().Config().Daemon.ContinueInterrupted {
		// Said before anything else is written: turn_interrupted is the
		// next seq after the dead daemon's last event.
		s.sayInterrupted(ctx)
	} else {
		// The inputs a dead daemon left end, interrupted (their
		// callers learn it with their clientMessageId).
		s.interruptInputs(ctx)
	}
	if rec.State == store.StateInterrupted {
		m.store.SetState(rec.ID, store.StateIdle, m.list.ChangedAfter(rec.ID, s.written))
		// Prompts queued when the daemon died are not run (their callers
		// went with it): the history says the queue is empty.
		s.queueChanged()
	}
	s.reportLost()
	m.each(func(p Participant) { p.Resumed(s, rec) })
	m.log.Info("session resumed", "sessionId", rec.ID, "messages", rec.MessageCount, "lastSeq", rec.LastSeq)
	return s, nil
}

// LoadTranscript reads the transcript of a resumed session that is
// still only in the store (repairing what an interrupted turn left
// open), once, before its first turn: nothing once it is read.
func (s *Session) LoadTranscript(ctx context.Context) error {
	s.mu.Lock()
	unloaded := s.unloaded
	s.mu.Unlock()
	if !unloaded {
		return nil
	}
	raw, err := s.m.store.Messages(ctx, s.id)
	if err != nil {
		return err
	}
	history := make([]provider.Message, 0, len(raw)+8)
	for _, b := range raw {
		var msg provider.Message
		if err := json.Unmarshal(b, &msg); err != nil {
			return fmt.Errorf("session %s: transcript: %w", s.id, err)
		}
		history = append(history, msg)
	}
	s.mu.Lock()
	s.history, s.unloaded = provider.NewTranscript(history), false
	s.mu.Unlock()
	return s.repairStored()
}

// repairStored repairs the session's transcript (see repair) and writes
// the repaired part to the store, so the transcript the model sees and
// the stored one stay the same, message for message.
func (s *Session) repairStored() error {
	s.mu.Lock()
	old := s.history.Messages
	fixed, r := cut.Repair(old, s.asked, s.started)
	s.history = provider.NewTranscript(fixed)
	s.cutCalls, s.unrun, s.held, s.asked, s.started = r.Cut, r.Unrun, r.Held, nil, nil
	s.mu.Unlock()
	from := 0
	for from < len(old) && from < len(fixed) && reflect.DeepEqual(old[from], fixed[from]) {
		from++
	}
	if from == len(old) && from == len(fixed) {
		return nil
	}
	bodies := make([][]byte, 0, len(fixed)-from)
	for _, m := range fixed[from:] {
		bodies = append(bodies, mustJSON(m))
	}
	return s.m.store.ReplaceMessages(s.id, int64(from), bodies)
}

// closeCut gives each tool call a cut turn that is not continued had
// started and not ended (turnID, its attempt begun at seq since) its
// tool_result, so no client waits for one: "interrupted" for a call that
// ran, "not run" for one that waited for an approval. It returns the
// calls that ran (ended or not), for the transcript's repair (see
// repair's started), or nil when the history could not be read.
func (s *Session) closeCut(ctx context.Context, turnID string, since int64) map[string]bool {
	if since <= 0 {
		return nil
	}
	l, err := cut.Read(ctx, s.m.store, s.id, turnID, since)
	if err != nil {
		return nil
	}
	ran := map[string]bool{}
	for _, c := range l.Calls {
		result := cut.Interrupted
		if l.Asked[c.ID] {
			result = cut.UnrunAsked
		} else {
			ran[c.ID] = true
		}
		if !l.Ended[c.ID] {
			s.write(protocol.ToolResultEvent{ToolCallID: c.ID, Name: c.Name, RawOutput: result, IsError: true}, &turnID, nil)
			l.Ended[c.ID] = true
		}
	}
	return ran
}
