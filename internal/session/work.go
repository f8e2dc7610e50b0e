package session

import "github.com/zeroclaw/zeroclaw/internal/protocol"

// Work is what the live sessions run or wait to run with no client
// needed: their running turns (a child's counted as a sub-agent),
// queued prompts, live background processes (a closed session's kept
// ones too), and what the participants say (Participant.Working: an
// active goal). An ephemeral daemon stays while it is not empty.
func (m *Manager) Work() protocol.StayingFor {
	var w protocol.StayingFor
	for _, s := range m.liveSessions() {
		if !s.t.Idle() {
			if s.Parent() != nil {
				w.Subagents++
			} else {
				w.Turns++
			}
		}
		w.Queued += len(s.t.Items())
		s.mu.Lock()
		t := s.procs
		s.mu.Unlock()
		if t != nil {
			w.Processes += t.Running()
		}
		s.m.each(func(p Participant) { p.Working(s, &w) })
	}
	m.mu.Lock()
	for _, t := range m.kept {
		w.Processes += t.Running()
	}
	m.mu.Unlock()
	return w
}
