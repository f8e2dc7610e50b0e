package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
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
	if j.cont.attempt-1 > allowed {
		return agent.Outcome{StopReason: agent.StopError, Err: fmt.Errorf("the daemon stopped during this turn %d times; it is not continued again ([daemon] continue_attempts = %d)",
			j.cont.attempt-1, allowed)}
	}
	seq := s.emitInput(protocol.TurnResumedEvent{Attempt: j.cont.attempt}, ptr(j.record(protocol.InputStarted, turnID, j.cont.attempt, nil)))
	// The calls the daemon's end cut: their results, as the model
	// will read them.
	s.mu.Lock()
	cut := s.cutCalls
	s.cutCalls = nil
	s.mu.Unlock()
	for _, tc := range cut {
		s.emit(protocol.ToolResultEvent{ToolCallID: tc.ID, Name: tc.Name, RawOutput: interruptedCall, IsError: true})
	}
	note := "[The daemon stopped during this turn and was restarted; the turn goes on (attempt " + fmt.Sprint(j.cont.attempt) +
		"). A tool call that was running then was not run again: its result says so. Check what it did before relying on it.]"
	cp := s.beginCheckpoint(j.prompt, seq)
	out := s.turnAgent().Continue(ctx, s, s.cwd, note)
	s.endCheckpoint(cp)
	return out
}

// ContinueInterrupted finds the inputs a dead daemon left open and, for
// each session that has some, loads it and goes on: its cut turn
// continued, its queued prompts run after it ([daemon]
// continue_interrupted), or each ended interrupted.
func (m *Manager) ContinueInterrupted(ctx context.Context) {
	if !m.conf().cfg.Daemon.ContinueInterrupted {
		return // each session's are ended when it is next loaded (resume)
	}
	ids, err := m.store.OpenInputSessions(ctx)
	if err != nil {
		m.log.Error("the inputs a dead daemon left could not be read", "err", err)
		return
	}
	for _, id := range ids {
		rec, err := m.store.GetSession(ctx, id)
		if err != nil {
			m.log.Warn("inputs of a session that is gone", "sessionId", id, "err", err)
			continue
		}
		s, err := m.resume(ctx, rec)
		if err != nil {
			m.log.Error("a session with interrupted inputs could not be loaded", "sessionId", id, "err", err)
			continue
		}
		m.mu.Lock()
		m.live[s.id] = s
		m.mu.Unlock()
		s.continueInputs(ctx)
	}
}

// continueInputs goes on with the session's open inputs (see
// ContinueInterrupted).
func (s *Session) continueInputs(ctx context.Context) {
	open, err := s.m.store.OpenInputs(ctx, s.id)
	if err != nil {
		return
	}
	var jobs []*job
	for _, rec := range open {
		var sp storedPrompt
		json.Unmarshal(rec.Prompt, &sp)
		in := &input{id: rec.ID, cmid: rec.ClientMessageID, kind: rec.Kind, turnID: rec.TurnID, ended: make(chan struct{})}
		j := &job{prompt: sp.Text, images: sp.Images, resources: sp.Resources, done: make(chan protocol.SessionPromptResult, 1), in: in}
		if rec.State == protocol.InputStarted {
			j.cont = &continuation{turnID: rec.TurnID, attempt: rec.Attempts + 1}
			// The cut turn first, then what was queued.
			jobs = append([]*job{j}, jobs...)
		} else {
			jobs = append(jobs, j)
		}
	}
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
	s.m.log.Info("interrupted inputs go on", "sessionId", s.id, "inputs", len(jobs))
}
