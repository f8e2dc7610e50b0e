package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Steering (session/steer): text for the running turn joins the model's
// view at its next model call; a turn that would end takes the steers
// waiting first, and only when there are none does it stop taking them,
// under the same lock a steer is taken under: each steer is injected or
// answered promptRequired, exactly once.

// TurnMismatch is a steer for a turn that is not the one running.
type TurnMismatch struct{ Expected, Running string }

func (e *TurnMismatch) Error() string {
	if e.Running == "" {
		return fmt.Sprintf("turn %s is not running (no turn is)", e.Expected)
	}
	return fmt.Sprintf("turn %s is not running; turn %s is", e.Expected, e.Running)
}

// Is makes a mismatch a busy session's error.
func (e *TurnMismatch) Is(target error) bool { return target == ErrBusy }

// Steers implements agent.Host: the steers waiting, each said in the
// history as a user_message with steered: true where it joins. final:
// the turn would end: with none waiting, it takes no more.
func (s *Session) Steers(final bool) []string {
	s.mu.Lock()
	st, turn := s.steers, s.turnID
	s.steers = nil
	if final && len(st) == 0 {
		s.steerClosed = true
	}
	s.mu.Unlock()
	for _, text := range st {
		s.emit(protocol.EventUserMessage, mustJSON(protocol.UserMessageEvent{Text: text, TurnID: turn, Steered: true}))
	}
	return st
}

// Steer serves session/steer.
func (m *Manager) Steer(ctx context.Context, c *Client, p protocol.SessionSteerParams) (*protocol.SessionSteerResult, error) {
	if p.Prompt == nil || strings.TrimSpace(*p.Prompt) == "" {
		return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
	}
	switch p.IdleBehavior {
	case "", "promptRequired", "start":
	default:
		return nil, &protocol.ParamsError{Field: "idleBehavior", Reason: fmt.Sprintf("%q: promptRequired or start", p.IdleBehavior)}
	}
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	running := s.turnID != "" && !s.steerClosed
	if p.ExpectedTurnID != "" && (!running || s.turnID != p.ExpectedTurnID) {
		cur := ""
		if running {
			cur = s.turnID
		}
		s.mu.Unlock()
		return nil, &TurnMismatch{Expected: p.ExpectedTurnID, Running: cur}
	}
	if running {
		s.steers = append(s.steers, *p.Prompt)
		turn := s.turnID
		s.mu.Unlock()
		return &protocol.SessionSteerResult{Outcome: protocol.SteerInjected, TurnID: turn}, nil
	}
	s.mu.Unlock()
	if p.IdleBehavior != "start" {
		return &protocol.SessionSteerResult{Outcome: protocol.SteerPromptRequired}, nil
	}
	j := &job{prompt: *p.Prompt, client: c, done: make(chan protocol.SessionPromptResult, 1)}
	if err := s.enqueue(j); err != nil {
		return nil, err
	}
	return &protocol.SessionSteerResult{Outcome: protocol.SteerStartedNewTurn}, nil
}

// runningTurn is the turn running now ("": none).
func (s *Session) runningTurn() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steerClosed {
		return ""
	}
	return s.turnID
}
