package agentkit

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
// status says of it, where sup is what this system can enforce and exe
// the shim. Never a silent downgrade.
func sandboxFor(sup sandbox.Support, c config.Sandbox, exe string, private []string) (*tool.Sandbox, protocol.SandboxStatus) {
	mode := c.Mode
	if mode == "" {
		mode = sandbox.ModeOff
		if sup.EnforcedBy != "none" {
			mode = sandbox.ModeWorkspaceWrite
		}
	}
	st := protocol.SandboxStatus{Mode: mode, Network: c.Network, EnforcedBy: sup.EnforcedBy, Reason: sup.Reason,
		NamespacesReason: "commands are not confined"}
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
	st.NamespacesReason = sandbox.Isolation()
	st.Namespaces = st.NamespacesReason == "" && sup.EnforcedBy == "landlock"
	return &tool.Sandbox{Exe: exe, Writable: c.Writable, ReadOnly: mode == sandbox.ModeReadOnly, Network: c.Network, Mode: mode, Hide: private}, st
}

// superviseMCP runs an MCP server under the shim, unconfined: it and all
// it starts end with the daemon, as a sandboxed command does, and it
// cannot reach the daemon's own paths.
func (k *Kit) superviseMCP(argv []string) ([]string, error) {
	return sandbox.Supervise(shimExe(), argv, k.o.Private...), nil
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
func (k *Kit) SandboxStatus() protocol.SandboxStatus { return k.sandboxStatus }

// Sandbox is how a session's commands run: the config's sandbox (nil:
// unconfined), tightened as the session asked: to mode read-only, and
// without the network when noNet. A sandbox that refuses every command
// stays as it is.
func (k *Kit) Sandbox(mode string, noNet bool) *tool.Sandbox {
	base := k.sandbox
	if base == nil || base.Refuse != "" || (mode != sandbox.ModeReadOnly && !noNet) {
		return base
	}
	sb := *base
	if mode == sandbox.ModeReadOnly {
		sb.ReadOnly, sb.Mode = true, sandbox.ModeReadOnly
	}
	if noNet {
		sb.Network = false
	}
	return &sb
}

// Tighten checks what a session/configure asks of a session's sandbox
// (mode, network; nil: unchanged) against the config's: tighter, never
// looser. From the session's (sbMode, noNet) it returns the new ones.
func (k *Kit) Tighten(sbMode string, noNet bool, mode *string, network *bool) (string, bool, error) {
	if mode == nil && network == nil {
		return sbMode, noNet, nil
	}
	base := k.sandbox
	if base == nil || base.Refuse != "" {
		return "", false, &protocol.ParamsError{Field: "sandbox", Reason: "no sandbox is in force here (" + k.sandboxStatus.Reason + "): there is nothing to tighten"}
	}
	if mode != nil {
		switch *mode {
		case sandbox.ModeReadOnly:
			sbMode = *mode
		case sandbox.ModeWorkspaceWrite, "":
			if base.ReadOnly {
				return "", false, &protocol.ParamsError{Field: "sandbox", Reason: "the config's sandbox is read-only: a session may tighten it, never loosen it"}
			}
			sbMode = ""
		default:
			return "", false, &protocol.ParamsError{Field: "sandbox", Reason: fmt.Sprintf("%q: read-only or workspace-write", *mode)}
		}
	}
	if network != nil {
		switch {
		case !*network && !k.sup.NetworkRules:
			return "", false, &protocol.ParamsError{Field: "network", Reason: "the network cannot be denied here (Landlock ABI 4 is needed)"}
		case *network && !base.Network:
			return "", false, &protocol.ParamsError{Field: "network", Reason: "the config denies the network: a session may not allow it"}
		}
		noNet = !*network
	}
	return sbMode, noNet, nil
}
