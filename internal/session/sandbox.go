package session

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// sandbox is the session's sandbox: the config's, tightened as the
// session asked.
func (s *Session) sandbox() *tool.Sandbox {
	s.mu.Lock()
	sb := s.m.conf().Sandbox(s.sbMode, s.noNetwork)
	s.mu.Unlock()
	if sb == nil || sb.Refuse != "" {
		return sb
	}
	// Its read-only commands (the read-only sandbox, the plan mode)
	// write only a temp dir of the session's own.
	own := *sb
	own.PrivateTemp = filepath.Join(os.TempDir(), fmt.Sprintf("zeroclaw-%d", os.Getuid()), s.id)
	return &own
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
