package session

import (
	"context"
	"slices"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The face that the plan mode's end (internal/plan) and the approvals'
// reviewer (internal/review) drive a session through.

// Reviewer is asked about each approval request before the user
// (Options.Reviewer). Review answers "allow" (the call runs unasked),
// "deny" (refused; why is told the model) or "ask" (the user decides;
// rv, when not nil, is the rating the request shows). The request's id
// is id. It is called with none of the session's locks held, on the
// turn's goroutine, and may wait (ctx ends with the turn).
type Reviewer interface {
	Review(ctx context.Context, s *Session, id string, req agent.ApprovalRequest) (decision string, rv *protocol.Review, why string)
}

// review is the reviewer's answer about req (its request id: id);
// "ask" when no reviewer is set.
func (s *Session) review(ctx context.Context, id string, req agent.ApprovalRequest) (decision string, rv *protocol.Review, why string) {
	if s.m.reviewer == nil {
		return "ask", nil, ""
	}
	return s.m.reviewer.Review(ctx, s, id, req)
}

// Config is the configuration in force (the Manager's).
func (s *Session) Config() *config.Config { return s.m.conf().Config() }

// BuildAgent builds the config's agent alias as a new session of mode
// in this session's directory would run it.
func (s *Session) BuildAgent(alias, mode string) (*agent.Agent, error) {
	a, _, err := s.m.conf().Build(alias, mode, s.cwd)
	return a, err
}

// Recent is the last n messages of the session's conversation (all of
// them when it has fewer).
func (s *Session) Recent(n int) []provider.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.history.Messages
	if len(msgs) > n {
		msgs = msgs[len(msgs)-n:]
	}
	return slices.Clone(msgs)
}

// Sandbox is the sandbox the session's commands run in (nil: none),
// the config's, tightened as the session asked.
func (s *Session) Sandbox() *tool.Sandbox { return s.sandbox() }

// SetMode switches the session's mode to risk and stores it, as
// session/configure does, from the next tool call on (also in the
// running turn), and tells every attached client (config_update, by the
// agent: the running turn's). The gate is not asked: the caller has the
// user's word (the plan mode's end asks them).
func (s *Session) SetMode(risk string) error {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	before := s.settings()
	s.mu.Lock()
	model, reasoning := s.model, s.reasoning
	s.mu.Unlock()
	if err := s.m.store.SetConfig(s.id, model, risk, reasoning); err != nil {
		return err
	}
	s.mu.Lock()
	s.risk = risk
	s.mu.Unlock()
	s.tellConfig(before, protocol.ConfigByAgent, nil)
	return nil
}
