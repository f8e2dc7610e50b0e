package session

import (
	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// What the process methods (internal/processes) need of a session:
// its background processes, to find one and to list them.

// ProcessTable is the session's table of background processes; nil
// until it is made, with the session's agent (for its first turn, or
// its description).
func (s *Session) ProcessTable() *background.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.procs
}

// ProcessInfos describes the session's background processes as the
// wire does (process/list, session/get), the oldest first.
func (s *Session) ProcessInfos() []protocol.ProcessInfo { return s.processInfos() }
