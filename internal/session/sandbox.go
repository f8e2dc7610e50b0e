package session

import (
	"fmt"
	"os"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// sandboxFor is how the commands of a config run: confined (and by
// what), refused (a sandbox is wanted but cannot be enforced here, and
// the config did not choose to run without), or as they are; and what
// status says of it. Never a silent downgrade.
func sandboxFor(c config.Sandbox, exe string) (*tool.Sandbox, protocol.SandboxStatus) {
	sup := sandbox.Available()
	mode := c.Mode
	if mode == "" {
		mode = sandbox.ModeOff
		if sup.EnforcedBy != "none" {
			mode = sandbox.ModeWorkspaceWrite
		}
	}
	st := protocol.SandboxStatus{Mode: mode, Network: c.Network, EnforcedBy: sup.EnforcedBy, Reason: sup.Reason}
	if mode == sandbox.ModeOff {
		st.EnforcedBy = "none"
		if c.Mode == "" {
			st.Reason = "off: " + sup.Reason
		} else {
			st.Reason = "off ([sandbox] mode)"
		}
		return nil, st
	}
	refuse := ""
	switch {
	case sup.EnforcedBy == "none":
		refuse = fmt.Sprintf("the sandbox ([sandbox] mode = %q) cannot be enforced here: %s; commands are refused (set [sandbox] fallback = \"off\" to run them unconfined)", mode, sup.Reason)
	case !c.Network && !sup.NetworkRules:
		refuse = fmt.Sprintf("[sandbox] network = false cannot be enforced here (%s: Landlock ABI 4 is needed); commands are refused (set [sandbox] fallback = \"off\" to run them with the network)", sup.Reason)
	case exe == "":
		refuse = "the sandbox's shim (the zeroclaw binary) was not found; commands are refused"
	}
	if refuse != "" {
		if c.Fallback == "off" {
			st.EnforcedBy, st.Reason = "none", "fallback = off: "+refuse
			return nil, st
		}
		st.Reason = refuse
		return &tool.Sandbox{Refuse: refuse, Mode: mode}, st
	}
	return &tool.Sandbox{Exe: exe, Writable: c.Writable, ReadOnly: mode == sandbox.ModeReadOnly, Network: c.Network, Mode: mode}, st
}

// shimExe is the binary that confines commands: this one.
func shimExe() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// SandboxStatus says how commands are confined (status).
func (m *Manager) SandboxStatus() protocol.SandboxStatus { return m.conf().sandboxStatus }
