package agentkit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/instructions"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Building an agent: its provider (made once per config name), its
// model, its system prompt and tools; and what an agent runs on, for
// status, models and session/configure.

// provider is the configured provider name, made on first use.
func (k *Kit) provider(name string) (provider.Provider, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p, ok := k.providers[name]; ok {
		return p, nil
	}
	pc, ok := k.cfg.Providers[name]
	if !ok {
		return nil, fmt.Errorf("no provider %q configured", name)
	}
	p, err := provider.New(name, pc, k.o.Getenv)
	if err != nil {
		return nil, err
	}
	k.providers[name] = p
	return p, nil
}

// CheckAgent says whether the config has agent alias: nil, or the
// answer for a session/new that names one it lacks (a project's agent
// file is not enough there).
func (k *Kit) CheckAgent(alias string) error {
	if _, ok := k.cfg.Agents[alias]; !ok {
		return k.unknownAgent(alias)
	}
	return nil
}

// unknownAgent is the answer for an agent alias the config lacks.
func (k *Kit) unknownAgent(alias string) error {
	return &protocol.ParamsError{Field: "agentAlias",
		Reason: fmt.Sprintf("unknown agent %q (known: %s)", alias, strings.Join(k.cfg.AgentAliases(), ", "))}
}

// Models lists what the agent's provider offers (the models method;
// alias "" is the default agent).
func (k *Kit) Models(ctx context.Context, alias string) (*protocol.ModelsResult, error) {
	if alias == "" {
		alias = "default"
	}
	ac, ok := k.cfg.Agents[alias]
	if !ok {
		return nil, k.unknownAgent(alias)
	}
	p, err := k.provider(ac.Provider)
	if err != nil {
		return nil, err
	}
	info := p.Info()
	list, err := p.Models(ctx)
	if err != nil {
		return nil, err
	}
	return &protocol.ModelsResult{Provider: info.Name, Kind: info.Kind, URL: info.URL, Current: cmp.Or(ac.Model, info.Model), Models: list}, nil
}

// AgentInfo describes what agent alias runs on: its provider and model.
func (k *Kit) AgentInfo(alias string) (provider.Info, error) {
	ac, ok := k.cfg.Agents[alias]
	if !ok {
		return provider.Info{}, fmt.Errorf("no agent %q", alias)
	}
	p, err := k.provider(ac.Provider)
	if err != nil {
		return provider.Info{}, err
	}
	info := p.Info()
	info.Model = cmp.Or(ac.Model, info.Model)
	return info, nil
}

// Build makes the agent alias (a configured agent, or one an agent file
// of the project in cwd defines) for a session of mode in cwd, with the
// shared MCP servers' tools it may use; it returns the agent and the
// project instruction files its system prompt holds.
func (k *Kit) Build(alias, mode, cwd string) (*agent.Agent, []string, error) {
	ac, ok := k.cfg.Agents[alias]
	if !ok {
		ac, ok = projectAgent(k.cfg, cwd, alias) // an agent file of the project
	}
	if !ok {
		return nil, nil, k.unknownAgent(alias)
	}
	p, err := k.provider(ac.Provider)
	if err != nil {
		return nil, nil, err
	}
	// The system prompt is composed once per session (and again when a
	// stored session is resumed): the environment and the project's
	// instructions as they are now.
	var guides []instructions.Tool
	for _, n := range ac.Tools {
		if t, ok := tool.Lookup(n); ok {
			guides = append(guides, instructions.Tool{Name: n, Guide: t.Spec().Guide})
		}
	}
	sys := instructions.Compose(instructions.Options{Base: ac.SystemPrompt, Mode: mode, Tools: guides, Cwd: cwd,
		Shell: cmp.Or(k.cfg.Daemon.Shell, tool.ShellProgram), Now: time.Now()})
	a := &agent.Agent{Provider: p, Model: ac.Model, System: sys.System, Risk: ac.Risk, MaxRequests: ac.MaxTurnRequests, MaxStopContinues: k.cfg.Daemon.MaxStopContinues,
		MaxTokens: ac.MaxTokens, Reasoning: ac.Reasoning, Where: "agents." + alias,
		Commands: tool.Commands{Environ: k.environ, Umask: k.o.Umask, Reaper: k.o.Reaper, Shell: k.cfg.Daemon.Shell, Gateway: k.o.Gateway, Sandbox: k.sandbox,
			BackgroundAfter: time.Duration(k.cfg.Tools.BackgroundAfterSecs) * time.Second}}
	pc := k.cfg.Providers[ac.Provider]
	configured := p.Info().Model
	a.Price = func(model string) (provider.Price, bool) { return provider.PriceFor(pc, cmp.Or(model, configured)) }
	if !k.mcp.Empty() {
		a.Extra, a.Note = k.mcp.Tools, k.mcp.Unavailable
		if pats := mcpPatterns(ac.Tools); len(pats) > 0 {
			// The agent names the MCP tools it may use: only those.
			all := a.Extra
			a.Extra = func(ctx context.Context) []tool.Tool {
				return slices.DeleteFunc(all(ctx), func(t tool.Tool) bool { return !matchesAny(pats, t.Spec().Name) })
			}
		}
	}
	for _, n := range ac.Tools {
		if t, ok := tool.Lookup(n); ok {
			a.Tools = append(a.Tools, t)
		}
	}
	return a, sys.Files, nil
}

// projectAgent finds an agent a project file defines, on the default
// agent's provider and settings.
func projectAgent(cfg *config.Config, cwd, alias string) (config.Agent, bool) {
	pas, _ := config.ProjectAgents(cwd)
	for _, pa := range pas {
		if pa.Name != alias {
			continue
		}
		a := cfg.Agents["default"]
		a.Description, a.SystemPrompt = pa.Agent.Description, pa.Agent.SystemPrompt
		if pa.Agent.Model != "" {
			a.Model = pa.Agent.Model
		}
		if pa.Agent.Tools != nil {
			a.Tools = pa.Agent.Tools
		}
		return a, true
	}
	return config.Agent{}, false
}

// mcpPatterns are the MCP tool names and patterns (mcp__SERVER__*) among
// an agent's tools.
func mcpPatterns(tools []string) []string {
	var out []string
	for _, t := range tools {
		if config.IsMCPPattern(t) {
			out = append(out, t)
		}
	}
	return out
}

// matchesAny says whether name is one of pats, or has the prefix of one
// that ends in *.
func matchesAny(pats []string, name string) bool {
	for _, p := range pats {
		if p == name || strings.HasSuffix(p, "*") && strings.HasPrefix(name, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

// WithOwnMCP gives a (a turn's copy of a session's agent) the tools of
// the session's own MCP servers after the shared ones', and their notes
// after the shared ones'.
func WithOwnMCP(a *agent.Agent, own *mcptools.Set) {
	shared, sharedNote := a.Extra, a.Note
	a.Extra = func(ctx context.Context) []tool.Tool {
		var ts []tool.Tool
		if shared != nil {
			ts = shared(ctx)
		}
		return append(ts, own.Tools(ctx)...)
	}
	a.Note = func() string {
		var notes []string
		if sharedNote != nil {
			notes = append(notes, sharedNote())
		}
		notes = append(notes, own.Unavailable())
		return strings.TrimSpace(strings.Join(notes, "\n"))
	}
}

// Describe says what a runs on: session/configure's answer, less the
// session's id.
func Describe(a *agent.Agent) *protocol.SessionConfigureResult {
	info := a.Provider.Info()
	model := a.Model
	if model == "" {
		model = info.Model
	}
	res := &protocol.SessionConfigureResult{Provider: info.Name, ProviderKind: info.Kind, Model: model,
		URL: info.URL, Risk: a.Risk, ContextWindow: a.Provider.ContextWindow(a.Model), Reasoning: a.Reasoning, Sandbox: "off", Network: true}
	if sb := a.Commands.Sandbox; sb != nil && sb.Refuse == "" {
		res.Sandbox, res.Network = sb.Mode, sb.Network
	}
	return res
}
