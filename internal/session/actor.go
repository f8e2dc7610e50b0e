package session

import (
	"cmp"

	"github.com/zeroclaw/zeroclaw/internal/gate"
)

// Who acts, as the gate (internal/gate) is told: a client is the user's
// or a paired device's (its connection says which); a turn's tool calls
// are its model's, a sub-agent's or a scheduled run's.

// SetActor records who the client acts for (rpc sets it from the
// connection's peer).
func (c *Client) SetActor(a gate.Actor) {
	c.mu.Lock()
	c.actor = a
	c.mu.Unlock()
}

// Actor is who the client acts for: the daemon itself (a nil client)
// and a client never told otherwise act for the user.
func (c *Client) Actor() gate.Actor {
	if c == nil {
		return gate.User
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return cmp.Or(c.actor, gate.User)
}

// Actor is who makes the running turn's tool calls: a scheduled run's
// model (nobody to ask), a sub-agent's, or the session's model.
func (s *Session) Actor() gate.Actor {
	if s.t.NoAsk() {
		return gate.Scheduled
	}
	s.mu.Lock()
	depth := s.lineage.Depth
	s.mu.Unlock()
	if depth > 0 {
		return gate.Subagent
	}
	return gate.Model
}

// Mode is the session's mode in force now.
func (s *Session) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cmp.Or(s.risk, s.agent.Risk)
}
