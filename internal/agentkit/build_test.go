package agentkit

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// An agent is built from its config: the provider, model, risk, limits,
// tools (and their guides in the system prompt), the commands' settings
// and the price of its model.
func TestBuild(t *testing.T) {
	reaper := &tool.Reaper{}
	gateway := func() string { return "http://127.0.0.1:9" }
	cfg := testConfig(func(c *config.Config) {
		c.Agents["coder"] = config.Agent{Provider: "echo", Model: "echo-big", Risk: protocol.RiskReadonly, SystemPrompt: "You write code.",
			Tools: []string{"read_file", "shell", "no_such_tool"}, MaxTurnRequests: 7, MaxTokens: 100, Reasoning: "high"}
		c.Daemon.Shell = "/bin/sh"
		c.Daemon.MaxStopContinues = 3
		c.Tools.BackgroundAfterSecs = 9
	})
	k := newKit(t, cfg, Options{Umask: "077", Reaper: reaper, Gateway: gateway})
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "AGENTS.md"), []byte("Be brief."), 0o644); err != nil {
		t.Fatal(err)
	}
	a, files, err := k.Build("coder", "code", cwd)
	if err != nil {
		t.Fatal(err)
	}
	if a.Model != "echo-big" || a.Risk != protocol.RiskReadonly || a.MaxRequests != 7 || a.MaxTokens != 100 || a.Reasoning != "high" ||
		a.MaxStopContinues != 3 || a.Where != "agents.coder" || a.Provider.Info().Kind != config.KindEcho {
		t.Errorf("agent %+v", a)
	}
	var tools []string
	for _, tl := range a.Tools {
		tools = append(tools, tl.Spec().Name)
	}
	if !slices.Equal(tools, []string{"read_file", "shell"}) {
		t.Errorf("tools %q", tools)
	}
	if !strings.Contains(a.System, "You write code.") || !strings.Contains(a.System, "Be brief.") || !strings.Contains(a.System, cwd) {
		t.Errorf("system prompt %q", a.System)
	}
	if len(files) != 1 || !strings.HasSuffix(files[0], "AGENTS.md") {
		t.Errorf("instruction files %q", files)
	}
	c := a.Commands
	if !slices.Equal(c.Environ, k.Environ()) || c.Umask != "077" || c.Reaper != reaper || c.Shell != "/bin/sh" || c.Gateway() != gateway() ||
		c.Sandbox != k.Sandbox("", false) || c.BackgroundAfter.Seconds() != 9 {
		t.Errorf("commands %+v", c)
	}
	if _, ok := a.Price(""); ok {
		t.Error("the offline model has a price")
	}
	if a.Extra != nil || a.Note != nil {
		t.Error("MCP tools with no MCP server configured")
	}
}

// The provider is made once per name in a configuration, and again for
// the next one; a priced provider prices the agent's model.
func TestProvidersMadeOncePerGeneration(t *testing.T) {
	oa := config.Provider{Kind: config.KindOpenAI, BaseURL: "http://127.0.0.1:1/v1", Model: "m-1", Pricing: &config.Pricing{Input: 1, Output: 2}}
	tune := func(c *config.Config) {
		c.Providers["oa"] = oa
		c.Agents["default"] = config.Agent{Provider: "oa", Tools: []string{"read_file"}}
		c.Agents["other"] = config.Agent{Provider: "oa", Model: "m-2"}
	}
	k := newKit(t, testConfig(tune), Options{})
	a1, _, err := k.Build("default", "chat", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a2, _, err := k.Build("other", "chat", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if a1.Provider != a2.Provider {
		t.Error("the provider was made twice in one configuration")
	}
	if p, ok := a1.Price(""); !ok || p.Input != 1 || p.Output != 2 {
		t.Errorf("price %+v %v", p, ok)
	}
	info, err := k.AgentInfo("other")
	if err != nil || info.Model != "m-2" || info.Kind != config.KindOpenAI {
		t.Errorf("agent info %+v %v", info, err)
	}
	k2 := k.Reload(testConfig(tune))
	k.Retire(k2)
	a3, _, err := k2.Build("default", "chat", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if a3.Provider == a1.Provider {
		t.Error("the reloaded configuration kept the old provider")
	}
}

// What cannot be built says why: an unknown agent (with the known
// ones), an unconfigured provider, an unknown provider kind.
func TestBuildRefuses(t *testing.T) {
	k := newKit(t, testConfig(func(c *config.Config) {
		c.Agents["lost"] = config.Agent{Provider: "nowhere"}
		c.Providers["odd"] = config.Provider{Kind: "carrier-pigeon"}
		c.Agents["odd"] = config.Agent{Provider: "odd"}
	}), Options{})
	_, _, err := k.Build("nobody", "chat", t.TempDir())
	var pe *protocol.ParamsError
	if !errors.As(err, &pe) || pe.Field != "agentAlias" || pe.Reason != `unknown agent "nobody" (known: default, lost, odd)` {
		t.Errorf("unknown agent: %v", err)
	}
	if err := k.CheckAgent("nobody"); !errors.As(err, &pe) || pe.Reason != `unknown agent "nobody" (known: default, lost, odd)` {
		t.Errorf("check of an unknown agent: %v", err)
	}
	if err := k.CheckAgent("lost"); err != nil {
		t.Errorf("check of a configured agent: %v", err)
	}
	if _, _, err := k.Build("lost", "chat", t.TempDir()); err == nil || err.Error() != `no provider "nowhere" configured` {
		t.Errorf("unconfigured provider: %v", err)
	}
	if _, _, err := k.Build("odd", "chat", t.TempDir()); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := k.Models(context.Background(), "lost"); err == nil {
		t.Error("models of an unconfigured provider")
	}
	if _, err := k.AgentInfo("lost"); err == nil {
		t.Error("the info of an unconfigured provider")
	}
	if _, err := k.AgentInfo("nobody"); err == nil || err.Error() != `no agent "nobody"` {
		t.Errorf("the info of no agent: %v", err)
	}
}

// An agent file of the project is an agent there, on the default
// agent's provider and settings.
func TestBuildProjectAgent(t *testing.T) {
	k := newKit(t, testConfig(nil), Options{})
	cwd := t.TempDir()
	dir := filepath.Join(cwd, ".zeroclaw", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := "---\nname: tester\ndescription: runs the tests\nmodel: echo-test\ntools: [read_file]\n---\nYou run the tests.\n"
	if err := os.WriteFile(filepath.Join(dir, "tester.md"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _, err := k.Build("tester", "code", cwd)
	if err != nil {
		t.Fatal(err)
	}
	def := k.Config().Agents["default"]
	if a.Model != "echo-test" || a.Risk != def.Risk || len(a.Tools) != 1 || a.Tools[0].Spec().Name != "read_file" || !strings.Contains(a.System, "You run the tests.") {
		t.Errorf("project agent: model %q risk %q tools %d system %q", a.Model, a.Risk, len(a.Tools), a.System)
	}
	if _, _, err := k.Build("tester", "code", t.TempDir()); err == nil {
		t.Error("a project's agent built in another directory")
	}
}

// models and the agent's info: what its provider offers and runs.
func TestModelsAndAgentInfo(t *testing.T) {
	k := newKit(t, testConfig(func(c *config.Config) {
		a := c.Agents["default"]
		a.Model = "echo-2"
		c.Agents["default"] = a
	}), Options{})
	ml, err := k.Models(context.Background(), "")
	if err != nil || ml.Provider != "echo" || ml.Kind != config.KindEcho || ml.Current != "echo-2" || !slices.Equal(ml.Models, []string{"echo"}) {
		t.Errorf("models %+v %v", ml, err)
	}
	var pe *protocol.ParamsError
	if _, err := k.Models(context.Background(), "nobody"); !errors.As(err, &pe) || pe.Field != "agentAlias" {
		t.Errorf("models of no agent: %v", err)
	}
	if info, err := k.AgentInfo("default"); err != nil || info.Model != "echo-2" || info.Name != "echo" {
		t.Errorf("agent info %+v %v", info, err)
	}
}

// An agent's MCP tools: mcp__SERVER__TOOL names one, mcp__SERVER__* a
// server's all.
func TestMatchesAny(t *testing.T) {
	pats := mcpPatterns([]string{"read_file", "mcp__a__add", "mcp__b__*", "mcp__", "mcp__c"})
	if !slices.Equal(pats, []string{"mcp__a__add", "mcp__b__*"}) {
		t.Fatalf("patterns %q", pats)
	}
	for name, want := range map[string]bool{"mcp__a__add": true, "mcp__a__addx": false, "mcp__a__sub": false, "mcp__b__x": true, "mcp__b__": true, "mcp__bb__x": false} {
		if got := matchesAny(pats, name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

// The shared MCP servers' tools are the agent's, only those it names
// when it names some; a session's own come after them, rooted in its
// directory.
func TestMCPTools(t *testing.T) {
	srv := mcpServer(t)
	cfg := testConfig(func(c *config.Config) {
		c.MCP.Servers = map[string]config.MCPServer{"t": srv}
		c.MCP.TurnWaitMs = 30000
		c.Agents["picky"] = config.Agent{Provider: "echo", Tools: []string{"read_file", "mcp__t__add"}}
	})
	k := newKit(t, cfg, Options{})
	ctx := context.Background()
	all, _, err := k.Build("default", "chat", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ts := all.Extra(ctx); len(ts) < 2 || !hasTool(ts, "mcp__t__add") || !hasTool(ts, "mcp__t__roots") {
		t.Errorf("the default agent's MCP tools: %d", len(ts))
	}
	if n := all.Note(); n != "" {
		t.Errorf("note with every server ready: %q", n)
	}
	picky, _, err := k.Build("picky", "chat", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ts := picky.Extra(ctx); len(ts) != 1 || ts[0].Spec().Name != "mcp__t__add" {
		t.Errorf("the picky agent's MCP tools: %d", len(ts))
	}

	// The session's own, supervised (no sandbox), rooted in its directory.
	cwd := t.TempDir()
	changed := make(chan struct{}, 1)
	own := k.SessionMCP("ses_1", cwd, map[string]config.MCPServer{"own": srv}, nil, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	t.Cleanup(own.Close)
	a := *all
	WithOwnMCP(&a, own)
	ts := a.Extra(ctx)
	if !hasTool(ts, "mcp__t__add") || !hasTool(ts, "mcp__own__add") || ts[0].Spec().Name == "mcp__own__add" {
		t.Fatalf("shared then own tools: %d", len(ts))
	}
	select {
	case <-changed: // it told when it became ready
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatal("the session's servers did not tell they changed")
	}
	roots := ts[slices.IndexFunc(ts, func(tl tool.Tool) bool { return tl.Spec().Name == "mcp__own__roots" })]
	if r := roots.Run(ctx, &tool.Env{}, json.RawMessage(`{}`)); r.Output != "[file://"+cwd+"]" {
		t.Errorf("the session's servers' roots: %+v", r)
	}
	if n := a.Note(); n != "" {
		t.Errorf("note with every server ready: %q", n)
	}
	if all.Extra == nil || len(all.Extra(ctx)) == len(ts) {
		t.Error("adding a session's servers changed the agent it was copied from")
	}
}

// A session's own servers run in its sandbox: one that refuses every
// command refuses them too, and the model is told they are not there.
func TestSessionMCPRunsInTheSandbox(t *testing.T) {
	k := newKit(t, testConfig(func(c *config.Config) { c.MCP.TurnWaitMs = 30000 }), Options{})
	refuse := &tool.Sandbox{Refuse: "no sandbox here", Mode: "workspace-write"}
	own := k.SessionMCP("ses_1", t.TempDir(), map[string]config.MCPServer{"own": mcpServer(t)}, refuse, func() {})
	t.Cleanup(own.Close)
	a := &agent.Agent{}
	WithOwnMCP(a, own)
	if ts := a.Extra(context.Background()); len(ts) != 0 {
		t.Errorf("tools of a refused server: %d", len(ts))
	}
	st := own.Status()
	if len(st) != 1 || st[0].State != mcptools.StateFailed || !strings.Contains(st[0].Error, "no sandbox here") {
		t.Errorf("status %+v", st)
	}
	if n := a.Note(); !strings.Contains(n, "own") {
		t.Errorf("note %q", n)
	}
}

// What an agent runs on, as session/configure says it: the model (the
// provider's when the agent names none), and the sandbox in force
// ("off" and the network when none, or one that refuses).
func TestDescribe(t *testing.T) {
	echo := &provider.Echo{}
	tests := []struct {
		name                string
		a                   agent.Agent
		model, sandbox      string
		network             bool
		risk, reasoning     string
		contextWindow       int64
		provider, kind, url string
	}{
		{"the provider's model, no sandbox", agent.Agent{Provider: echo, Risk: "supervised"}, "echo", "off", true, "supervised", "", 32768, "echo", "echo", "echo:"},
		{"its own model, read-only, no network", agent.Agent{Provider: echo, Model: "echo-2", Reasoning: "low",
			Commands: tool.Commands{Sandbox: &tool.Sandbox{Mode: "read-only", ReadOnly: true}}}, "echo-2", "read-only", false, "", "low", 32768, "echo", "echo", "echo:"},
		{"a sandbox that refuses", agent.Agent{Provider: echo, Commands: tool.Commands{Sandbox: &tool.Sandbox{Refuse: "no", Mode: "workspace-write"}}}, "echo", "off", true, "", "", 32768, "echo", "echo", "echo:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Describe(&tt.a)
			want := &protocol.SessionConfigureResult{Provider: tt.provider, ProviderKind: tt.kind, Model: tt.model, URL: tt.url, Risk: tt.risk,
				ContextWindow: tt.contextWindow, Reasoning: tt.reasoning, Sandbox: tt.sandbox, Network: tt.network}
			if *got != *want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
