package session

import (
	"context"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/cut"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// A turn's attempts. A turn's claim (its input, started, with its turn
// id and attempt) is written with its user_message; its end with its
// turn_complete. A turn a dead daemon cut (found at the next start, see
// internal/continuation and face_cont.go) runs another attempt under the
// same id: turn_interrupted (as its session is loaded), turn_resumed,
// then the model again with the conversation as recorded (a tool call
// that had started and not finished is never run again: its result
// says so). A turn is continued
// at most [daemon] continue_attempts times: one that keeps killing the
// daemon ends failed.

// startTurn writes a prompt's turn start: its input_update and its
// user_message with the turn's claim (one transaction), and returns the
// user_message's seq.
func (s *Session) startTurn(j *job, turnID string) int64 {
	in := j.input()
	s.inputUpdate(in, protocol.InputStarted, turnID, "", nil)
	return s.write(userMessage(j.prompt, j.client, false), nil, ptr(j.record(protocol.InputStarted, turnID, 1, nil)))
}

// sayInterrupted appends turn_interrupted for the turn a dead daemon
// cut (its input left started), as the session is loaded: the first
// event this daemon writes in it, the next seq after the dead daemon's
// last (before the queue, the lost processes or anything else is told).
// internal/continuation goes on with the turn.
func (s *Session) sayInterrupted(ctx context.Context) {
	open, err := s.m.store.OpenInputs(ctx, s.id)
	if err != nil {
		return // the turn still goes on; only its mark is missing
	}
	for _, rec := range open {
		if rec.State == protocol.InputStarted {
			s.write(protocol.TurnInterruptedEvent{Reason: "daemon_exit"}, &rec.TurnID, nil)
		}
	}
}

// continueTurn goes on with the cut turn j.cont names (said interrupted
// when its session was loaded, see sayInterrupted): turn_resumed with
// the claim's new attempt, then the model again; past the attempts
// allowed, the turn fails instead.
func (s *Session) continueTurn(ctx context.Context, j *job, turnID string) agent.Outcome {
	allowed := s.m.conf().Config().Daemon.ContinueAttempts
	s.mu.Lock()
	cutCalls, unrun, held := s.cutCalls, s.unrun, s.held
	s.cutCalls, s.unrun, s.held = nil, nil, nil
	s.mu.Unlock()
	if j.cont.Partial != "" {
		// What the model had said is kept as said.
		s.Record(provider.Message{Role: provider.RoleAssistant, Text: j.cont.Partial})
	}
	if j.cont.Attempt-1 > allowed {
		for _, tc := range held {
			s.Record(provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Text: cut.UnrunHeld, IsError: true})
		}
		return agent.Outcome{StopReason: agent.StopError, Err: fmt.Errorf("the daemon stopped during this turn %d times; it is not continued again ([daemon] continue_attempts = %d)",
			j.cont.Attempt-1, allowed)}
	}
	seq := s.write(protocol.TurnResumedEvent{Attempt: j.cont.Attempt}, nil, ptr(j.record(protocol.InputStarted, turnID, j.cont.Attempt, nil)))
	// The calls the daemon's end cut, and those it kept from starting:
	// their results, as the model will read them.
	for _, tc := range cutCalls {
		s.emit(protocol.ToolResultEvent{ToolCallID: tc.ID, Name: tc.Name, RawOutput: cut.Interrupted, IsError: true})
	}
	for _, tc := range unrun {
		s.emit(protocol.ToolResultEvent{ToolCallID: tc.ID, Name: tc.Name, RawOutput: cut.Unrun, IsError: true})
	}
	note := cut.Note(j.cont.Attempt, len(cutCalls) > 0)
	ended := s.running(j.prompt, seq)
	// Calls that waited for an approval never ran: they are asked again.
	out := s.turnAgent().Continue(ctx, s, s.cwd, note, held)
	ended()
	return out
}
