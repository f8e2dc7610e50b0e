package session

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// sandbox is the session's sandbox: the config's, tightened as the
// session asked.
func (s *Session) sandbox() *tool.Sandbox {
	mode, noNet := s.sandboxNow()
	sb := s.m.conf().Sandbox(mode, noNet)
	if sb == nil || sb.Refuse != "" {
		return sb
	}
	// Its read-only commands (the read-only sandbox, the plan mode)
	// write only a temp dir of the session's own.
	own := *sb
	own.PrivateTemp = filepath.Join(os.TempDir(), fmt.Sprintf("zeroclaw-%d", os.Getuid()), s.id)
	return &own
}

// sandboxNow is the session's sandbox mode and network as tightened by
// it and, for a child, by every live ancestor now: a child's commands
// never reach wider than its parent's.
func (s *Session) sandboxNow() (mode string, noNet bool) {
	s.mu.Lock()
	mode, noNet = s.sbMode, s.noNetwork
	s.mu.Unlock()
	if p := s.Parent(); p != nil {
		pm, pn := p.sandboxNow()
		if pm == sandbox.ModeReadOnly {
			mode = pm
		}
		noNet = noNet || pn
	}
	return mode, noNet
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
