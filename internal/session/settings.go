package session

import (
	"github.com/zeroclaw/zeroclaw/internal/agentkit"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// A session's settings (its model, mode, reasoning level, sandbox and
// network) change by session/configure (Manager.Configure) and by the
// plan mode's end (SetMode). Each change that changes what is in force
// is told to every attached client as a config_update, written, then
// delivered, like every event: a mode binds the session from the moment
// it changes, and every client shows it then.

// settings says what the session runs on now: its agent's, with the
// session's own model, mode and reasoning level, in its sandbox (its
// ancestors' narrowing it). It asks no participant.
func (s *Session) settings() *protocol.SessionConfigureResult {
	s.refreshAgent()
	s.mu.Lock()
	a := *s.agent
	if s.model != "" {
		a.Model = s.model
	}
	if s.risk != "" {
		a.Risk = s.risk
	}
	if s.reasoning != "" {
		a.Reasoning = s.reasoning
	}
	s.mu.Unlock()
	a.Commands.Sandbox = s.sandbox()
	res := agentkit.Describe(&a)
	res.SessionID = s.id
	return res
}

// changed names the settings that differ between before and after, in
// protocol.ConfigSettings' order.
func changed(before, after *protocol.SessionConfigureResult) []string {
	var out []string
	for _, c := range []struct {
		name string
		diff bool
	}{
		{"model", before.Model != after.Model},
		{"risk", before.Risk != after.Risk},
		{"reasoning", before.Reasoning != after.Reasoning},
		{"sandbox", before.Sandbox != after.Sandbox},
		{"network", before.Network != after.Network},
	} {
		if c.diff {
			out = append(out, c.name)
		}
	}
	return out
}

// tellConfig emits config_update when the settings in force differ from
// before, which the caller read under setMu before it changed them (and
// holds it still, so that the updates come in the order of the changes);
// by is who changed them, c the client when one did. A change made while
// a turn runs is the session's, not the turn's (no turnId), but for the
// agent's own (the plan mode's end, a tool call of the turn).
func (s *Session) tellConfig(before *protocol.SessionConfigureResult, by string, c *Client) *protocol.SessionConfigureResult {
	after := s.settings()
	diff := changed(before, after)
	if len(diff) == 0 {
		return after
	}
	ev := protocol.ConfigUpdateEvent{Provider: after.Provider, Model: after.Model, URL: after.URL, Risk: after.Risk,
		ContextWindow: after.ContextWindow, Reasoning: after.Reasoning, Sandbox: after.Sandbox, Network: after.Network,
		Changed: diff, By: by}
	if c != nil {
		ev.ClientID, ev.ClientName = c.ID(), c.Name()
	}
	if by == protocol.ConfigByAgent {
		s.emit(ev)
	} else {
		none := ""
		s.write(ev, &none, nil)
	}
	return after
}
