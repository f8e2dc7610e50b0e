package agentkit

import (
	"errors"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

var (
	landlock   = sandbox.Support{EnforcedBy: "landlock", Reason: "Landlock ABI 7", NetworkRules: true}
	landlockV3 = sandbox.Support{EnforcedBy: "landlock", Reason: "Landlock ABI 3"}
	nothing    = sandbox.Support{EnforcedBy: "none", Reason: "the kernel has no Landlock"}
)

// What each config asks of the sandbox, on each system: confined,
// refused or unconfined, and what status says. Never a silent
// downgrade.
func TestSandboxFor(t *testing.T) {
	tests := []struct {
		name   string
		sup    sandbox.Support
		c      config.Sandbox
		exe    string
		want   *tool.Sandbox
		status protocol.SandboxStatus
	}{
		{"default where enforced", landlock, config.Sandbox{Network: true}, "/zc",
			&tool.Sandbox{Exe: "/zc", Network: true, Mode: "workspace-write"},
			protocol.SandboxStatus{Mode: "workspace-write", Network: true, EnforcedBy: "landlock", Reason: "Landlock ABI 7"}},
		{"default where nothing is", nothing, config.Sandbox{Network: true}, "/zc", nil,
			protocol.SandboxStatus{Mode: "off", Network: true, EnforcedBy: "none", Reason: "off: the kernel has no Landlock"}},
		{"off by the config", landlock, config.Sandbox{Mode: "off", Network: true}, "/zc", nil,
			protocol.SandboxStatus{Mode: "off", Network: true, EnforcedBy: "none", Reason: "off ([sandbox] mode)"}},
		{"read-only, writable dirs", landlock, config.Sandbox{Mode: "read-only", Writable: []string{"/w"}}, "/zc",
			&tool.Sandbox{Exe: "/zc", Writable: []string{"/w"}, ReadOnly: true, Mode: "read-only"},
			protocol.SandboxStatus{Mode: "read-only", EnforcedBy: "landlock", Reason: "Landlock ABI 7"}},
		{"wanted, cannot be enforced", nothing, config.Sandbox{Mode: "workspace-write", Network: true}, "/zc",
			&tool.Sandbox{Refuse: `the sandbox ([sandbox] mode = "workspace-write") cannot be enforced here: the kernel has no Landlock; commands are refused (set [sandbox] fallback = "off" to run them unconfined)`, Mode: "workspace-write"},
			protocol.SandboxStatus{Mode: "workspace-write", Network: true, EnforcedBy: "none", Reason: `the sandbox ([sandbox] mode = "workspace-write") cannot be enforced here: the kernel has no Landlock; commands are refused (set [sandbox] fallback = "off" to run them unconfined)`}},
		{"wanted, fallback off", nothing, config.Sandbox{Mode: "workspace-write", Network: true, Fallback: "off"}, "/zc", nil,
			protocol.SandboxStatus{Mode: "workspace-write", Network: true, EnforcedBy: "none", Reason: `fallback = off: the sandbox ([sandbox] mode = "workspace-write") cannot be enforced here: the kernel has no Landlock; commands are refused (set [sandbox] fallback = "off" to run them unconfined)`}},
		{"no network, no network rules", landlockV3, config.Sandbox{}, "/zc",
			&tool.Sandbox{Refuse: `[sandbox] network = false cannot be enforced here (Landlock ABI 3: Landlock ABI 4 is needed); commands are refused (set [sandbox] fallback = "off" to run them with the network)`, Mode: "workspace-write"},
			protocol.SandboxStatus{Mode: "workspace-write", EnforcedBy: "landlock", Reason: `[sandbox] network = false cannot be enforced here (Landlock ABI 3: Landlock ABI 4 is needed); commands are refused (set [sandbox] fallback = "off" to run them with the network)`}},
		{"no network, rules", landlock, config.Sandbox{}, "/zc",
			&tool.Sandbox{Exe: "/zc", Mode: "workspace-write"},
			protocol.SandboxStatus{Mode: "workspace-write", EnforcedBy: "landlock", Reason: "Landlock ABI 7"}},
		{"no shim", landlock, config.Sandbox{Network: true}, "",
			&tool.Sandbox{Refuse: "the sandbox's shim (the zeroclaw binary) was not found; commands are refused", Mode: "workspace-write"},
			protocol.SandboxStatus{Mode: "workspace-write", Network: true, EnforcedBy: "landlock", Reason: "the sandbox's shim (the zeroclaw binary) was not found; commands are refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb, st := sandboxFor(tt.sup, tt.c, tt.exe, nil)
			if !sameSandbox(sb, tt.want) {
				t.Errorf("sandbox %+v, want %+v", sb, tt.want)
			}
			if st.Mode != tt.status.Mode || st.Network != tt.status.Network || st.EnforcedBy != tt.status.EnforcedBy || st.Reason != tt.status.Reason {
				t.Errorf("status %+v, want %+v", st, tt.status)
			}
		})
	}
}

func sameSandbox(a, b *tool.Sandbox) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Exe == b.Exe && a.ReadOnly == b.ReadOnly && a.Network == b.Network && a.Refuse == b.Refuse && a.Mode == b.Mode &&
		len(a.Writable) == len(b.Writable) && (len(a.Writable) == 0 || a.Writable[0] == b.Writable[0])
}

// kitOn is a Kit of the sandbox settings c on a system that enforces
// sup (its shim: /zc).
func kitOn(sup sandbox.Support, c config.Sandbox) *Kit {
	k := derive(testConfig(func(cfg *config.Config) { cfg.Sandbox = c }), Options{Environ: []string{}}, 0, sup)
	k.sandbox, k.sandboxStatus = sandboxFor(sup, c, "/zc", nil)
	return k
}

// A session's sandbox is the config's, tightened to read-only or
// without the network as it asked; one that refuses, or none, stays.
func TestSandboxTightened(t *testing.T) {
	ww := kitOn(landlock, config.Sandbox{Mode: "workspace-write", Network: true})
	tests := []struct {
		name  string
		k     *Kit
		mode  string
		noNet bool
		want  *tool.Sandbox
	}{
		{"as configured", ww, "", false, &tool.Sandbox{Exe: "/zc", Network: true, Mode: "workspace-write"}},
		{"read-only", ww, "read-only", false, &tool.Sandbox{Exe: "/zc", ReadOnly: true, Network: true, Mode: "read-only"}},
		{"no network", ww, "", true, &tool.Sandbox{Exe: "/zc", Mode: "workspace-write"}},
		{"both", ww, "read-only", true, &tool.Sandbox{Exe: "/zc", ReadOnly: true, Mode: "read-only"}},
		{"none in force", kitOn(landlock, config.Sandbox{Mode: "off"}), "read-only", true, nil},
		{"refusing", kitOn(nothing, config.Sandbox{Mode: "read-only"}), "read-only", true,
			&tool.Sandbox{Refuse: `the sandbox ([sandbox] mode = "read-only") cannot be enforced here: the kernel has no Landlock; commands are refused (set [sandbox] fallback = "off" to run them unconfined)`, Mode: "read-only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.k.Sandbox(tt.mode, tt.noNet); !sameSandbox(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if ww.Sandbox("read-only", true) == ww.sandbox || ww.sandbox.ReadOnly || !ww.sandbox.Network {
		t.Error("tightening changed the config's sandbox")
	}
}

// A session may tighten the config's sandbox, never loosen it, and only
// in what this system can enforce.
func TestTighten(t *testing.T) {
	ww := kitOn(landlock, config.Sandbox{Mode: "workspace-write", Network: true})
	ro := kitOn(landlock, config.Sandbox{Mode: "read-only"})
	noRules := kitOn(landlockV3, config.Sandbox{Mode: "workspace-write", Network: true})
	off := kitOn(landlock, config.Sandbox{Mode: "off"})
	s := func(v string) *string { return &v }
	b := func(v bool) *bool { return &v }
	tests := []struct {
		name      string
		k         *Kit
		sbMode    string
		noNet     bool
		mode      *string
		network   *bool
		wantMode  string
		wantNoNet bool
		field     string // the ParamsError's ("": none)
		reason    string
	}{
		{"nothing asked", off, "read-only", true, nil, nil, "read-only", true, "", ""},
		{"nothing to tighten", off, "", false, s("read-only"), nil, "", false, "sandbox", "no sandbox is in force here (off ([sandbox] mode)): there is nothing to tighten"},
		{"read-only", ww, "", false, s("read-only"), nil, "read-only", false, "", ""},
		{"back to the config's", ww, "read-only", true, s("workspace-write"), nil, "", true, "", ""},
		{"back to the config's, by empty", ww, "read-only", false, s(""), nil, "", false, "", ""},
		{"loosen read-only", ro, "", false, s("workspace-write"), nil, "", false, "sandbox", "the config's sandbox is read-only: a session may tighten it, never loosen it"},
		{"an unknown mode", ww, "", false, s("off"), nil, "", false, "sandbox", `"off": read-only or workspace-write`},
		{"deny the network", ww, "", false, nil, b(false), "", true, "", ""},
		{"allow it again", ww, "read-only", true, nil, b(true), "read-only", false, "", ""},
		{"the config denies it", ro, "", true, nil, b(true), "", false, "network", "the config denies the network: a session may not allow it"},
		{"no network rules here", noRules, "", false, nil, b(false), "", false, "network", "the network cannot be denied here (Landlock ABI 4 is needed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode, noNet, err := tt.k.Tighten(tt.sbMode, tt.noNet, tt.mode, tt.network)
			if tt.field != "" {
				var pe *protocol.ParamsError
				if !errors.As(err, &pe) || pe.Field != tt.field || pe.Reason != tt.reason {
					t.Fatalf("err %v, want %s: %s", err, tt.field, tt.reason)
				}
				return
			}
			if err != nil || mode != tt.wantMode || noNet != tt.wantNoNet {
				t.Errorf("got %q %v %v, want %q %v", mode, noNet, err, tt.wantMode, tt.wantNoNet)
			}
		})
	}
}
