package session

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
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Building a session's agent: its provider (made once per config
// name), its model, its system prompt and tools; and what an agent
// runs on, for status and models.

func (m *Manager) provider(name string) (provider.Provider, error) {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	if p, ok := m.providers[name]; ok {
		return p, nil
	}
	pc, ok := m.conf().cfg.Providers[name]
	if !ok {
		return nil, fmt.Errorf("no provider %q configured", name)
	}
	p, err := provider.New(name, pc, m.getenv)
	if err != nil {
		return nil, err
	}
	m.providers[name] = p
	return p, nil
}

// Models lists what the agent's provider offers (the models method).
func (m *Manager) Models(ctx context.Context, alias string) (*protocol.ModelsResult, error) {
	if alias == "" {
		alias = "default"
	}
	ac, ok := m.conf().cfg.Agents[alias]
	if !ok {
		return nil, &protocol.ParamsError{Field: "agentAlias",
			Reason: fmt.Sprintf("unknown agent %q (known: %s)", alias, strings.Join(m.conf().cfg.AgentAliases(), ", "))}
	}
	p, err := m.provider(ac.Provider)
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
func (m *Manager) AgentInfo(alias string) (provider.Info, error) {
	ac, ok := m.conf().cfg.Agents[alias]
	if !ok {
		return provider.Info{}, fmt.Errorf("no agent %q", alias)
	}
	p, err := m.provider(ac.Provider)
	if err != nil {
		return provider.Info{}, err
	}
	info := p.Info()
	info.Model = cmp.Or(ac.Model, info.Model)
	return info, nil
}

func (m *Manager) buildAgent(alias, mode, cwd string) (*agent.Agent, []string, error) {
	l := m.conf()
	ac, ok := l.cfg.Agents[alias]
	if !ok {
		ac, ok = projectAgent(l.cfg, cwd, alias) // an agent file of the project
	}
	if !ok {
		return nil, nil, &protocol.ParamsError{Field: "agentAlias",
			Reason: fmt.Sprintf("unknown agent %q (known: %s)", alias, strings.Join(m.conf().cfg.AgentAliases(), ", "))}
	}
	p, err := m.provider(ac.Provider)
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
		Shell: cmp.Or(l.cfg.Daemon.Shell, tool.ShellProgram), Now: time.Now()})
	a := &agent.Agent{Provider: p, Model: ac.Model, System: sys.System, Risk: ac.Risk, MaxRequests: ac.MaxTurnRequests, MaxStopContinues: l.cfg.Daemon.MaxStopContinues,
		MaxTokens: ac.MaxTokens, Reasoning: ac.Reasoning, Where: "agents." + alias,
		Commands: tool.Commands{Environ: l.environ, Umask: m.umask, Reaper: m.reaper, Shell: l.cfg.Daemon.Shell, Gateway: m.gateway, Sandbox: l.sandbox,
			BackgroundAfter: time.Duration(l.cfg.Tools.BackgroundAfterSecs) * time.Second}}
	pc := l.cfg.Providers[ac.Provider]
	configured := p.Info().Model
	a.Price = func(model string) (provider.Price, bool) { return provider.PriceFor(pc, cmp.Or(model, configured)) }
	if !l.mcp.Empty() {
		a.Extra, a.Note = l.mcp.Tools, l.mcp.Unavailable
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
