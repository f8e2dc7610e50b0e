package agentkit

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"github.com/zeroclaw/zeroclaw/internal/permission"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

func TestMain(m *testing.M) {
	// The MCP servers run under the shim: this test binary.
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// noEnv reads no variable: the tests never see the host's keys.
func noEnv(string) string { return "" }

// testConfig is the built-in configuration (the offline echo provider),
// tuned.
func testConfig(tune func(*config.Config)) *config.Config {
	cfg := config.Default(noEnv)
	if tune != nil {
		tune(cfg)
	}
	return cfg
}

// newKit is the first Kit of cfg, its MCP servers closed when the test
// ends.
func newKit(t *testing.T, cfg *config.Config, o Options) *Kit {
	t.Helper()
	if o.Getenv == nil {
		o.Getenv = noEnv
	}
	if o.Environ == nil {
		o.Environ = []string{"HOME=/home/u", "PATH=/bin"}
	}
	k := New(cfg, o)
	t.Cleanup(k.MCP().Close)
	return k
}

// mcpServer is the MCP test server as a configured stdio server.
func mcpServer(t *testing.T) config.MCPServer {
	return config.MCPServer{Command: mcptest.Server(t)}
}

// hasTool says whether ts has a tool of that name.
func hasTool(ts []tool.Tool, name string) bool {
	return slices.ContainsFunc(ts, func(tl tool.Tool) bool { return tl.Spec().Name == name })
}

// The commands' environment is the daemon's without the provider keys
// (the well-known ones, a provider's api_key_env and daemon
// shell_env_drop); the config's permission rules are listed in order.
func TestKitDerivesEnvironAndRules(t *testing.T) {
	cfg := testConfig(func(c *config.Config) {
		c.Providers["mine"] = config.Provider{Kind: config.KindOpenAI, BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "MY_KEY"}
		c.Daemon.ShellEnvDrop = []string{"SECRET"}
		c.Permissions = []config.Permission{{Tool: "shell", Pattern: "git status", Decision: "allow"}, {Tool: "write_file", Pattern: "/etc/*", Decision: "deny"}}
	})
	k := newKit(t, cfg, Options{Environ: []string{"HOME=/h", "OPENAI_API_KEY=sk", "MY_KEY=k", "SECRET=s", "PATH=/bin", "NOEQUALS"}})
	if got, want := k.Environ(), []string{"HOME=/h", "PATH=/bin", "NOEQUALS"}; !slices.Equal(got, want) {
		t.Errorf("environ %q, want %q", got, want)
	}
	want := []permission.Rule{
		{ID: "config#1", Tool: "shell", Pattern: "git status", Decision: "allow", Origin: "config"},
		{ID: "config#2", Tool: "write_file", Pattern: "/etc/*", Decision: "deny", Origin: "config"},
	}
	if got := k.Rules(); !slices.Equal(got, want) {
		t.Errorf("rules %+v, want %+v", got, want)
	}
	if k.Config() != cfg || k.Gen() != 0 {
		t.Errorf("config %p gen %d", k.Config(), k.Gen())
	}
	if st, sb := k.SandboxStatus(), k.Sandbox("", false); st.Mode == "" || (sb == nil) != (st.EnforcedBy == "none") {
		t.Errorf("sandbox %+v, status %+v", sb, st)
	}
}

// With no environment given, the daemon's own is the one scrubbed.
func TestKitDefaultsToTheProcessEnvironment(t *testing.T) {
	cfg := testConfig(nil)
	t.Setenv("ZEROCLAW_AGENTKIT_TEST", "1")
	for _, key := range cfg.ShellEnvDropped() {
		t.Setenv(key, "test-key") // in place of whatever the host has
	}
	k := New(cfg, Options{Getenv: noEnv})
	t.Cleanup(k.MCP().Close)
	env := k.Environ()
	if !slices.Contains(env, "ZEROCLAW_AGENTKIT_TEST=1") || slices.ContainsFunc(env, func(kv string) bool { return strings.HasSuffix(kv, "=test-key") }) {
		t.Errorf("environ: %q", env)
	}
}

// New says in the log how commands are confined.
func TestNewLogsTheSandbox(t *testing.T) {
	for _, mode := range []string{"off", ""} {
		var buf bytes.Buffer
		k := newKit(t, testConfig(func(c *config.Config) { c.Sandbox.Mode = mode }), Options{Log: slog.New(slog.NewTextHandler(&buf, nil))})
		want := "commands are sandboxed"
		if k.SandboxStatus().EnforcedBy == "none" {
			want = "commands are not sandboxed"
		}
		if !strings.Contains(buf.String(), want) {
			t.Errorf("mode %q: the log %q does not say %q", mode, buf.String(), want)
		}
	}
}

// A reload is the next generation, with providers made again; the shared
// MCP servers are kept while their settings (and environment) stay, and
// replaced (the old ones closed on Retire) when they change.
func TestReloadSharesMCPServersWhileUnchanged(t *testing.T) {
	srv := mcpServer(t)
	changed := make(chan struct{}, 16)
	cfg := testConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"t": srv}
		c.MCP.TurnWaitMs = 30000
	})
	k := newKit(t, cfg, Options{MCPChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	if ts := k.MCP().Tools(context.Background()); len(ts) == 0 {
		t.Fatalf("the shared server offers nothing: %+v", k.MCP().Status())
	}
	select {
	case <-changed: // the server became ready
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatal("MCPChanged was not told")
	}

	same := testConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"t": srv}
		c.MCP.TurnWaitMs = 5000
	})
	k2 := k.Reload(same)
	k.Retire(k2)
	if k2.Gen() != 1 || k2.MCP() != k.MCP() || k2.Config() != same {
		t.Fatalf("unchanged servers: gen %d, shared %v", k2.Gen(), k2.MCP() == k.MCP())
	}
	if st := k2.MCP().Status(); len(st) != 1 || st[0].State != mcptools.StateReady {
		t.Errorf("the kept server: %+v", st)
	}

	other := testConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"u": srv}
	})
	k3 := k2.Reload(other)
	t.Cleanup(k3.MCP().Close)
	if k3.Gen() != 2 || k3.MCP() == k2.MCP() {
		t.Fatalf("changed servers: gen %d, shared %v", k3.Gen(), k3.MCP() == k2.MCP())
	}
	if ts := k3.MCP().Tools(context.Background()); !hasTool(ts, "mcp__u__add") {
		t.Errorf("the new server's tools: %d", len(ts))
	}
	k2.Retire(k3) // the old servers close in the background; goleak waits for them

	// A changed environment (a key the config now drops) replaces them too.
	dropped := testConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"u": srv}
		c.Daemon.ShellEnvDrop = []string{"HOME"}
	})
	k4 := k3.Reload(dropped)
	t.Cleanup(k4.MCP().Close)
	if k4.MCP() == k3.MCP() || slices.Contains(k4.Environ(), "HOME=/home/u") {
		t.Errorf("a changed environment: shared %v, environ %q", k4.MCP() == k3.MCP(), k4.Environ())
	}
	// Its first start is waited for: a set closed while its server is
	// only being kicked off can miss it (mcptools' Close).
	if ts := k4.MCP().Tools(context.Background()); !hasTool(ts, "mcp__u__add") {
		t.Errorf("the restarted server's tools: %d", len(ts))
	}
	k3.Retire(k4)
}
