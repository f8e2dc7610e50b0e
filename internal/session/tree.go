package session

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/spend"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// The session tree. A session a task started (internal/subagents) is a
// child: it knows its lineage and its live parent, is never wider than
// it (the narrower mode, the parent's sandbox), charges its cost to its
// ancestors too, shows its approvals in them (approvals.go), and is
// kept loaded while its parent lives. What a parent knows of its
// children (which run, their answers, their progress) is the
// sub-agents' own.

// Parent is the session's parent while it is live (nil: none, or gone).
func (s *Session) Parent() *Session { return s.parent.Load() }

// Lineage says whose child the session is (the zero value: nobody's).
func (s *Session) Lineage() protocol.Lineage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lineage
}

// Description is what the task that started the session asked of it.
func (s *Session) Description() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.description
}

// Alias is the session's agent; Cwd its directory.
func (s *Session) Alias() string { return s.alias }

// Cwd is the session's directory.
func (s *Session) Cwd() string { return s.cwd }

// Adopt makes parent the session's live parent again (a child a dead
// daemon's turn cut goes on with it).
func (s *Session) Adopt(parent *Session) { s.parent.Store(parent) }

// Orphan forgets the session's parent (the parent closes).
func (s *Session) Orphan() { s.parent.Store(nil) }

// Child is what a new child session is to be: the agent it runs, the
// parent's tool call that starts it, what it is asked to do.
type Child struct {
	Alias, ToolCallID, Description string
}

// NewChild makes a child session of parent, live and stored: in the
// parent's directory, mode and sandbox, under the narrower of the two
// modes.
func (m *Manager) NewChild(parent *Session, c Child) (*Session, error) {
	parent.mu.Lock()
	lin := protocol.Lineage{ParentSessionID: parent.id, ParentToolCallID: c.ToolCallID, Depth: parent.lineage.Depth + 1}
	sbMode, noNet := parent.sbMode, parent.noNetwork
	parentRisk := cmp.Or(parent.risk, parent.agent.Risk)
	parent.mu.Unlock()
	id := protocol.NewID("ses_", 8)
	s, err := m.newSession(id, c.Alias, parent.mode, parent.cwd, parent.owner)
	if err != nil {
		var pe *protocol.ParamsError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("agent %q: %s", c.Alias, pe.Reason)
		}
		return nil, err
	}
	// Never more rights than the parent: the narrower risk, the
	// parent's sandbox.
	s.risk = gate.Narrower(parentRisk, s.agent.Risk)
	s.sbMode, s.noNetwork = sbMode, noNet
	s.lineage, s.description = lin, c.Description
	s.parent.Store(parent)
	rec := &store.Session{ID: id, AgentAlias: c.Alias, Mode: parent.mode, Cwd: parent.cwd, Owner: parent.owner, Title: c.Description,
		Risk: s.risk, Sandbox: sbMode, NoNetwork: noNet, ParentID: lin.ParentSessionID, ParentToolCallID: lin.ParentToolCallID, Depth: lin.Depth, Description: c.Description}
	if err := m.store.CreateSession(rec); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if parent.t.Shutting() || m.live[parent.id] != parent {
		m.mu.Unlock()
		return nil, errors.New("the session is closing: no sub-agent starts")
	}
	m.live[id] = s
	m.mu.Unlock()
	m.list.Changed(id)
	return s, nil
}

// Tell gives the model a notice for its next call (a background task
// that ended); what changed meanwhile is the next turn's (as a
// background process's end is).
func (s *Session) Tell(text string) {
	s.nmu.Lock()
	s.procsEnded = true
	s.nmu.Unlock()
	s.addNotice(notice{text: text})
}

// SteerRunning sends text to the running turn for its next model call:
// the turn's id, "" when none runs that takes steers.
func (s *Session) SteerRunning(text string) string {
	turn, _ := s.t.Steer(steer{Text: text}, "")
	return turn
}

// chargeUp adds a child's usage to each ancestor's (their session
// usage; the day's is the child's own charge).
func (s *Session) chargeUp(su store.Usage) {
	for p := s.Parent(); p != nil; p = p.Parent() {
		p.mu.Lock()
		spend.Add(&p.spent, su)
		p.mu.Unlock()
		p.m.store.ChargeSession(p.id, su, nil)
	}
}

// rootSpent is what the session's top ancestor has spent (its own and
// all its descendants'): a session budget bounds the whole tree.
func (s *Session) rootSpent() float64 {
	r := s
	for p := s.Parent(); p != nil; p = p.Parent() {
		r = p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spent.CostUSD
}
