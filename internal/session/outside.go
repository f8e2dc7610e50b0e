package session

import "github.com/zeroclaw/zeroclaw/internal/protocol"

// What a part of the daemon outside the sessions (the scheduler) tells
// a session or asks of it.

// Note writes ev to live session id's history (no turn's: it is said
// between or beside turns) and to its clients.
func (m *Manager) Note(id string, ev protocol.EventBody) error {
	s, err := m.lookup(nil, id)
	if err != nil {
		return err
	}
	none := ""
	s.write(ev, &none, nil)
	return nil
}

// Waiting is the approval live session id's running turn waits for (""
// when none, or the session is not live).
func (m *Manager) Waiting(id string) string {
	m.mu.Lock()
	s := m.live[id]
	m.mu.Unlock()
	if s == nil {
		return ""
	}
	return s.t.Asking()
}
