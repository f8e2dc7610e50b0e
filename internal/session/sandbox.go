package session

import (
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// sandbox is the session's sandbox: the config's, tightened as the
// session asked.
func (s *Session) sandbox() *tool.Sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.conf().Sandbox(s.sbMode, s.noNetwork)
}

// tighten checks and applies a session/configure's sandbox and network:
// tighter than the config's, never looser.
func (s *Session) tighten(mode *string, network *bool) error {
	if mode == nil && network == nil {
		return nil
	}
	s.mu.Lock()
	cur, noNet := s.sbMode, s.noNetwork
	s.mu.Unlock()
	newMode, noNet, err := s.m.conf().Tighten(cur, noNet, mode, network)
	if err != nil {
		return err
	}
	if err := s.m.store.SetSandbox(s.id, newMode, noNet); err != nil {
		return err
	}
	s.mu.Lock()
	s.sbMode, s.noNetwork = newMode, noNet
	s.mu.Unlock()
	return nil
}
