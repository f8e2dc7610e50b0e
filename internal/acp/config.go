package acp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The session's config options (ACP session config options): the model,
// and the mode, which is the agent's risk level.
var modes = func() []struct{ value, name, description, risk string } {
	var out []struct{ value, name, description, risk string }
	for _, r := range protocol.RiskLevels {
		out = append(out, struct{ value, name, description, risk string }{acpMode[r.ID], r.Name, r.Description, r.ID})
	}
	return out
}()

// acpMode is each risk level's value in ACP's mode option.
var acpMode = map[string]string{protocol.RiskReadonly: "read-only", protocol.RiskPlan: "plan", protocol.RiskSupervised: "ask", protocol.RiskEdits: "accept-edits", protocol.RiskFull: "full"}

func modeOf(risk string) string {
	for _, m := range modes {
		if m.risk == risk {
			return m.value
		}
	}
	return "ask"
}

// configOptions describes a session's options for the editor's selectors.
func (b *Bridge) configOptions(ctx context.Context, cfg protocol.SessionConfigureResult) []any {
	// The models the provider offers, asked once per bridge; the current
	// one is always among them.
	b.mu.Lock()
	models := b.models
	b.mu.Unlock()
	if models == nil {
		if d, err := b.daemon(ctx); err == nil {
			if ml, err := d.Models(ctx, b.o.AgentAlias); err == nil {
				models = ml.Models
			}
		}
		if models == nil {
			models = []string{}
		}
		b.mu.Lock()
		b.models = models
		b.mu.Unlock()
	}
	return optionsOf(models, cfg)
}

// optionsOf is the options' list for the settings cfg, models those the
// provider offers.
func optionsOf(models []string, cfg protocol.SessionConfigureResult) []any {
	if cfg.Model != "" && !slices.Contains(models, cfg.Model) {
		models = append([]string{cfg.Model}, models...)
	}
	modelOpts := make([]any, 0, len(models))
	for _, m := range models {
		modelOpts = append(modelOpts, map[string]any{"value": m, "name": m})
	}
	modeOpts := make([]any, 0, len(modes))
	for _, m := range modes {
		modeOpts = append(modeOpts, map[string]any{"value": m.value, "name": m.name, "description": m.description})
	}
	return []any{
		map[string]any{"id": "model", "name": "Model", "category": "model", "type": "select",
			"description": fmt.Sprintf("%s (%s)", cfg.Provider, cfg.URL), "currentValue": cfg.Model, "options": modelOpts},
		map[string]any{"id": "mode", "name": "Mode", "category": "mode", "type": "select",
			"currentValue": modeOf(cfg.Risk), "options": modeOpts},
		map[string]any{"id": "thought_level", "name": "Thought level", "category": "thought_level", "type": "select",
			"currentValue": cmp.Or(cfg.Reasoning, "default"), "options": thoughtOpts},
	}
}

// configUpdate is the update for a change of the session's settings
// that the editor did not make (another client's, the plan mode's end):
// config_option_update, every option with its value now (the models
// the bridge already knows: it does not wait on the daemon here). A
// replay sends none: session/load's answer says the settings now.
func (b *Bridge) configUpdate(u protocol.SessionUpdate, replay bool) map[string]any {
	ev, ok := u.Event.(protocol.ConfigUpdateEvent)
	if !ok || replay || (ev.By == protocol.ConfigByClient && ev.ClientID != "" && b.sentByUs(ev.ClientID)) {
		return nil // the editor's own change: set_config_option's answer said it
	}
	b.mu.Lock()
	models := b.models
	b.mu.Unlock()
	return map[string]any{"sessionUpdate": "config_option_update", "configOptions": optionsOf(models,
		protocol.SessionConfigureResult{Provider: ev.Provider, Model: ev.Model, URL: ev.URL, Risk: ev.Risk, Reasoning: ev.Reasoning})}
}

// thoughtOpts are the reasoning levels; "default" is the agent's own.
var thoughtOpts = []any{
	map[string]any{"value": "default", "name": "Default (the agent's)"},
	map[string]any{"value": "off", "name": "Off"},
	map[string]any{"value": "low", "name": "Low"},
	map[string]any{"value": "medium", "name": "Medium"},
	map[string]any{"value": "high", "name": "High"},
}

// setConfigOption changes the session's model or mode.
func (b *Bridge) setConfigOption(ctx context.Context, id, option string, value any) (any, error) {
	d, err := b.daemon(ctx)
	if err != nil {
		return nil, err
	}
	v, ok := value.(string)
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: %s takes a value id", option)
	}
	p := protocol.SessionConfigureParams{SessionID: id}
	switch option {
	case "model":
		p.Model = &v
	case "mode":
		i := slices.IndexFunc(modes, func(m struct{ value, name, description, risk string }) bool { return m.value == v })
		if i < 0 {
			var values []string
			for _, m := range modes {
				values = append(values, m.value)
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: mode %q: one of %s", v, strings.Join(values, ", "))
		}
		p.Risk = &modes[i].risk
	case "thought_level":
		level := v
		if level == "default" {
			level = ""
		}
		p.Reasoning = &level
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: no config option %q (model, mode, thought_level)", option)
	}
	cr, err := d.Configure(ctx, p)
	if err != nil {
		return nil, acpError(err)
	}
	return map[string]any{"configOptions": b.configOptions(ctx, *cr)}, nil
}

// commands are the slash commands the agent understands.
var commands = []any{
	map[string]any{"name": "compact", "description": "Summarise earlier turns out of the model's view (the history keeps them)"},
	map[string]any{"name": "undo", "description": "Undo the last turn: the files it changed and its place in the conversation"},
}

// announce tells the editor what a session it opened offers: its slash
// commands, then (once its MCP servers said) their prompts too, as
// commands the daemon expands.
func (b *Bridge) announce(id string) {
	b.acp.Notify("session/update", map[string]any{"sessionId": id, "update": map[string]any{
		"sessionUpdate": "available_commands_update", "availableCommands": commands}})
	go b.mcpCommands(id, false)
}

// mcpCommands sends the editor the session's commands with its MCP
// servers' prompts: at the session's start when there are any, and
// again whenever they may have changed (changed: session/mcpChanged).
// One at a time, so the last sent is the latest.
func (b *Bridge) mcpCommands(id string, changed bool) {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	b.mu.Lock()
	d := b.d
	b.mu.Unlock()
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var offers protocol.SessionMCPResult
	if err := d.Call(ctx, protocol.MethodSessionMCP, protocol.SessionRef{SessionID: id}, &offers); err != nil || (len(offers.Prompts) == 0 && !changed) {
		return
	}
	all := append([]any(nil), commands...)
	for _, p := range offers.Prompts {
		c := map[string]any{"name": strings.TrimPrefix(p.Command, "/"),
			"description": strings.TrimSpace(p.Description + " (a prompt of the MCP server " + p.Server + ")")}
		if len(p.Arguments) > 0 {
			var names []string
			for _, a := range p.Arguments {
				names = append(names, a.Name)
			}
			c["input"] = map[string]any{"hint": strings.Join(names, " ") + " (or name=value)"}
		}
		all = append(all, c)
	}
	b.acp.Notify("session/update", map[string]any{"sessionId": id, "update": map[string]any{
		"sessionUpdate": "available_commands_update", "availableCommands": all}})
}

// opened answers session/new, load and resume: the session's config
// options (and, for new, its id); its commands follow the answer.
func (b *Bridge) opened(ctx context.Context, ns protocol.SessionNewResult, withID bool) any {
	res := map[string]any{"configOptions": b.configOptions(ctx, protocol.SessionConfigureResult{SessionID: ns.SessionID,
		Provider: ns.Provider, Model: ns.Model, URL: ns.ProviderURL, Risk: ns.Risk, ContextWindow: ns.ContextWindow, Reasoning: ns.Reasoning})}
	if withID {
		res["sessionId"] = ns.SessionID
	}
	return jsonrpc.Then{Result: res, After: func() { b.announce(ns.SessionID) }}
}
