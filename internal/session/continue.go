package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// A turn survives the daemon. A turn's claim (its input, started, with
// its turn id and attempt) is written with its user_message; its end
// with its turn_complete. A daemon that finds claims a dead one left
// (ContinueInterrupted, at its start) goes on with each such turn under
// the same id, calling the model again with the conversation as
// recorded (a tool call that had started and not finished is never run
// again: its result says so), then runs the prompts that were queued
// behind it, in order, each once. A turn is continued at most
// [daemon] continue_attempts times: one that keeps killing the daemon
// ends failed.

// interruptedCall is the result of a tool call a daemon's end cut.
const interruptedCall = "interrupted by a daemon restart: the command may or may not have run to the end"

// continuation is a cut turn to go on: its id, and this run's attempt
// (2 for the first continuation).
type continuation struct {
	turnID  string
	attempt int
	// since is the seq the cut attempt began at (its user_message or
	// turn_resumed); partial the reply the model was streaming when
	// it was cut (not in the transcript: it is kept as what the model
	// had said).
	since   int64
	partial string
	// calls are the cut attempt's tool calls that had started and not
	// ended (by id: their tool's name).
	calls map[string]string
}

// readCut reads the cut attempt's events: the reply it was streaming
// (c.partial) and the tool calls that waited for an approval no one had
// given (left open by the transcript's repair, to be asked again).
func (s *Session) readCut(ctx context.Context, c *continuation) {
	if c.since <= 0 {
		return
	}
	var partial strings.Builder
	asked := map[string]string{} // requestId → toolCallId
	c.calls = map[string]string{}
	for from := c.since - 1; ; {
		page, err := s.m.store.Events(ctx, s.id, from, 512, 1<<20)
		if err != nil || len(page) == 0 {
			break
		}
		for _, ev := range page {
			from = ev.Seq
			var e struct {
				TurnID     string `json:"turnId"`
				Text       string `json:"text"`
				RequestID  string `json:"requestId"`
				ToolCallID string `json:"toolCallId"`
				Name       string `json:"name"`
			}
			switch ev.Type {
			case protocol.EventAgentMessageChunk, protocol.EventApprovalRequest, protocol.EventApprovalResolved, protocol.EventToolCall, protocol.EventToolResult:
				if json.Unmarshal(ev.Body, &e) != nil || (e.TurnID != c.turnID && ev.Type != protocol.EventApprovalResolved) {
					continue
				}
			}
			switch ev.Type {
			case protocol.EventToolCall:
				c.calls[e.ToolCallID] = e.Name
			case protocol.EventToolResult:
				delete(c.calls, e.ToolCallID)
			}
			switch ev.Type {
			case protocol.EventAgentMessageChunk:
				partial.WriteString(e.Text)
			case protocol.EventContextUsage, protocol.EventToolCall, protocol.EventToolResult, protocol.EventUserMessage, protocol.EventTurnResumed:
				// A model call that ended (its reply is in the
				// transcript), or a message after it.
				partial.Reset()
			case protocol.EventApprovalRequest:
				asked[e.RequestID] = e.ToolCallID
			case protocol.EventApprovalResolved:
				delete(asked, e.RequestID)
			}
		}
	}
	c.partial = partial.String()
	open := map[string]bool{}
	for _, id := range asked {
		open[id] = true
	}
	s.mu.Lock()
	s.asked = open
	s.mu.Unlock()
}

// startTurn writes a prompt's turn start: its input_update and its
// user_message with the turn's claim (one transaction), and returns the
// user_message's seq.
func (s *Session) startTurn(j *job, turnID string) int64 {
	in := j.input()
	s.inputUpdate(in, protocol.InputStarted, turnID, "", nil)
	return s.emitInput(userMessage(j.prompt, j.client, false), ptr(j.record(protocol.InputStarted, turnID, 1, nil)))
}

// continueTurn goes on with the cut turn j.cont names: turn_interrupted,
// then turn_resumed with the claim's new attempt, then the model again;
// past the attempts allowed, the turn fails instead.
func (s *Session) continueTurn(ctx context.Context, j *job, turnID string) agent.Outcome {
	s.emit(protocol.TurnInterruptedEvent{Reason: "daemon_exit"})
	allowed := s.m.conf().cfg.Daemon.ContinueAttempts
	s.mu.Lock()
	cut, held := s.cutCalls, s.held
	s.cutCalls, s.held = nil, nil
	s.mu.Unlock()
	if j.cont.partial != "" {
		// What the model had said is kept as said.
		s.Record(provider.Message{Role: provider.RoleAssistant, Text: j.cont.partial})
	}
	if j.cont.attempt-1 > allowed {
		for _, tc := range held {
			s.Record(provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Text: "not run: the daemon stopped while it waited (for an approval or a sub-agent), and the turn is not continued again", IsError: true})
		}
		return agent.Outcome{StopReason: agent.StopError, Err: fmt.Errorf("the daemon stopped during this turn %d times; it is not continued again ([daemon] continue_attempts = %d)",
			j.cont.attempt-1, allowed)}
	}
	seq := s.emitInput(protocol.TurnResumedEvent{Attempt: j.cont.attempt}, ptr(j.record(protocol.InputStarted, turnID, j.cont.attempt, nil)))
	// The calls the daemon's end cut: their results, as the model
	// will read them.
	for _, tc := range cut {
		s.emit(protocol.ToolResultEvent{ToolCallID: tc.ID, Name: tc.Name, RawOutput: interruptedCall, IsError: true})
	}
	note := "[The daemon stopped during this turn and was restarted; the turn goes on (attempt " + fmt.Sprint(j.cont.attempt) +
		"). A tool call that was running then was not run again: its result says so. Check what it did before relying on it.]"
	cp := s.beginCheckpoint(j.prompt, seq)
	// Calls that waited for an approval never ran: they are asked again.
	out := s.turnAgent().Continue(ctx, s, s.cwd, note, held)
	s.endCheckpoint(cp)
	return out
}

// ContinueInterrupted finds the inputs a dead daemon left open and, for
// each session that has some, loads it and goes on: its cut turn
// continued, its queued prompts run after it ([daemon]
// continue_interrupted), or each ended interrupted. A sub-agent's cut
// turn goes on with its parent's: the child is its parent's again (its
// end told as before), and a parent's task call that waited for it
// waits again (the call is held open, not answered interrupted).
func (m *Manager) ContinueInterrupted(ctx context.Context) {
	if !m.conf().cfg.Daemon.ContinueInterrupted {
		return // each session's are ended when it is next loaded (resume)
	}
	ids, err := m.store.OpenInputSessions(ctx)
	if err != nil {
		m.log.Error("the inputs a dead daemon left could not be read", "err", err)
		return
	}
	loaded := map[string]*Session{}
	revive := func(id string) *Session {
		if s, ok := loaded[id]; ok {
			return s
		}
		loaded[id] = nil
		rec, err := m.store.GetSession(ctx, id)
		if err != nil {
			m.log.Warn("inputs of a session that is gone", "sessionId", id, "err", err)
			return nil
		}
		s, err := m.resume(ctx, rec)
		if err != nil {
			m.log.Error("a session with interrupted inputs could not be loaded", "sessionId", id, "err", err)
			return nil
		}
		m.mu.Lock()
		m.live[s.id] = s
		m.mu.Unlock()
		loaded[id] = s
		return s
	}
	var order []*Session
	jobs := map[*Session][]*job{}
	for _, id := range ids {
		if s := revive(id); s != nil {
			order = append(order, s)
			jobs[s] = s.openJobs(ctx)
		}
	}
	// Children are their parents' again before any turn starts.
	for _, s := range order {
		js := jobs[s]
		if s.lineage.ParentSessionID == "" || len(js) == 0 || js[0].cont == nil {
			continue
		}
		parent := revive(s.lineage.ParentSessionID)
		if parent == nil {
			continue
		}
		var waited bool
		// The parent's cut turn still holds the call that started the
		// child: it waits for it again.
		if pj := jobs[parent]; len(pj) > 0 && pj[0].cont != nil && pj[0].cont.calls[s.lineage.ParentToolCallID] != "" {
			waited = true
			parent.mu.Lock()
			if parent.asked == nil {
				parent.asked = map[string]bool{}
			}
			parent.asked[s.lineage.ParentToolCallID] = true
			parent.mu.Unlock()
		}
		p := &Pending{Done: js[0].done, s: s, j: js[0]}
		for _, part := range m.participants() {
			part.Continuing(parent, s, p, !waited)
		}
	}
	for _, s := range order {
		s.continueInputs(jobs[s])
	}
}

// openJobs are the session's open inputs as jobs: its cut turn first
// (with what its cut attempt left, see readCut), then what was queued.
func (s *Session) openJobs(ctx context.Context) []*job {
	open, err := s.m.store.OpenInputs(ctx, s.id)
	if err != nil {
		return nil
	}
	var jobs []*job
	for _, rec := range open {
		var sp storedPrompt
		json.Unmarshal(rec.Prompt, &sp)
		in := &input{id: rec.ID, cmid: rec.ClientMessageID, kind: rec.Kind, turnID: rec.TurnID, ended: make(chan struct{})}
		j := &job{id: protocol.NewID("q_", 6), prompt: sp.Text, images: sp.Images, resources: sp.Resources, queued: time.Now(),
			done: make(chan protocol.SessionPromptResult, 1), in: in}
		if rec.State == protocol.InputStarted {
			j.cont = &continuation{turnID: rec.TurnID, attempt: rec.Attempts + 1, since: rec.Seq}
			s.readCut(ctx, j.cont) // before the transcript's repair
			// The cut turn first, then what was queued.
			jobs = append([]*job{j}, jobs...)
		} else {
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// continueInputs queues the session's open inputs again (see
// ContinueInterrupted).
func (s *Session) continueInputs(jobs []*job) {
	for _, j := range jobs {
		if j.in.cmid != "" {
			// Sent again meanwhile, it is this one.
			s.imu.Lock()
			s.rememberLocked(j.in)
			s.imu.Unlock()
		}
		if err := s.enqueue(j); err != nil {
			s.m.log.Warn("an interrupted input could not be queued again", "sessionId", s.id, "inputId", j.in.id, "err", err)
			s.neverRan(j, protocol.InputDiscarded, err.Error())
		}
	}
	if len(jobs) > 0 {
		s.m.log.Info("interrupted inputs go on", "sessionId", s.id, "inputs", len(jobs))
	}
}
