package session

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

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

// load reads the transcript of a resumed session (repairing what an
// interrupted turn left open), once, before its first turn.
func (s *Session) load(ctx context.Context) error {
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
	fixed, r := repair(old, s.asked, s.started)
	s.history = provider.NewTranscript(fixed)
	s.cutCalls, s.unrun, s.held, s.asked, s.started = r.cut, r.unrun, r.held, nil, nil
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

// repaired is what repair did with the calls it found open: answered
// interrupted (cut: they had started), answered not run (unrun: they
// had not), or left open (held).
type repaired struct {
	cut, unrun, held []provider.ToolCall
}

// repair gives every tool call of an interrupted turn a result, so the
// transcript is one a model accepts: results follow their assistant
// message, and a call without one gets an "interrupted" result (cut),
// except in the transcript's last reply: a call that asks holds (one
// that waited for an approval, never run) is left open (held), for a
// continuation to ask again and answer, and where started says which
// calls had started (non-nil), one that had not gets a "not run" result
// (unrun).
func repair(h []provider.Message, asks, started map[string]bool) (out []provider.Message, r repaired) {
	out = make([]provider.Message, 0, len(h))
	for i := 0; i < len(h); i++ {
		m := h[i]
		out = append(out, m)
		if m.Role != provider.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for i+1 < len(h) && h[i+1].Role == provider.RoleTool {
			i++
			out = append(out, h[i])
			answered[h[i].ToolCallID] = true
		}
		last := i == len(h)-1
		for _, tc := range m.ToolCalls {
			switch {
			case answered[tc.ID]:
			case last && asks[tc.ID]:
				r.held = append(r.held, tc)
			case last && started != nil && !started[tc.ID]:
				out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name,
					Text: unrunCall, IsError: true})
				r.unrun = append(r.unrun, tc)
			default:
				out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name,
					Text: interruptedCall, IsError: true})
				r.cut = append(r.cut, tc)
			}
		}
	}
	return out, r
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
	type call struct{ id, name string }
	var open []call
	ended := map[string]bool{}
	asked := map[string]string{} // requestId → toolCallId
	for from := since - 1; ; {
		page, err := s.m.store.Events(ctx, s.id, from, 512, 1<<20)
		if err != nil {
			return nil
		}
		if len(page) == 0 {
			break
		}
		for _, ev := range page {
			from = ev.Seq
			var e struct {
				TurnID     string `json:"turnId"`
				RequestID  string `json:"requestId"`
				ToolCallID string `json:"toolCallId"`
				Name       string `json:"name"`
			}
			if json.Unmarshal(ev.Body, &e) != nil || (e.TurnID != turnID && ev.Type != protocol.EventApprovalResolved) {
				continue
			}
			switch ev.Type {
			case protocol.EventToolCall:
				open = append(open, call{e.ToolCallID, e.Name})
			case protocol.EventToolResult:
				ended[e.ToolCallID] = true
			case protocol.EventApprovalRequest:
				asked[e.RequestID] = e.ToolCallID
			case protocol.EventApprovalResolved:
				delete(asked, e.RequestID)
			}
		}
	}
	waited := map[string]bool{}
	for _, id := range asked {
		waited[id] = true
	}
	ran := map[string]bool{}
	for _, c := range open {
		if waited[c.id] {
			if !ended[c.id] {
				s.write(protocol.ToolResultEvent{ToolCallID: c.id, Name: c.name, RawOutput: unrunAsked, IsError: true}, &turnID, nil)
				ended[c.id] = true
			}
			continue
		}
		ran[c.id] = true
		if !ended[c.id] {
			s.write(protocol.ToolResultEvent{ToolCallID: c.id, Name: c.name, RawOutput: interruptedCall, IsError: true}, &turnID, nil)
			ended[c.id] = true
		}
	}
	return ran
}
