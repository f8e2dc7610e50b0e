// Package hooks runs the command hooks of config.toml ([[hooks]]) at a
// session's moments: before a tool call is decided (PreToolUse), after
// it ran (PostToolUse), before a turn ends (Stop), before a prompt runs
// (UserPromptSubmit) and when a session is loaded for a client
// (SessionStart). Each runs sandboxed as the session's commands are,
// with the provider keys out of its environment (internal/hook runs
// it), and is said in the session's history as a hook event; what the
// hooks of a moment decide is their combined verdict.
//
// It takes part in every session's turns as a session.Participant
// (Hook), driving sessions through their public face.
package hooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/hook"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// Hooks runs the command hooks of one daemon's sessions.
type Hooks struct {
	session.Moments
	m   *session.Manager
	log *slog.Logger
}

// New makes the hooks of m's sessions (the config's in force at each
// moment) and joins them to every session's turns.
func New(m *session.Manager, log *slog.Logger) *Hooks {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hooks{m: m, log: log}
	m.Join(h)
	return h
}

// Hook runs the hooks of the moment hm in order, each said in s's
// history; the verdict blocks when one blocks (the first reason) and
// takes the strictest permission (deny, ask, allow).
func (h *Hooks) Hook(ctx context.Context, s *session.Session, hm session.HookMoment) agent.HookVerdict {
	in := hook.Input{Prompt: hm.Prompt, Source: hm.Source}
	if hm.Call != nil {
		in.ToolName, in.ToolInput = hm.Call.Name, hm.Call.Input
	}
	if hm.Result != nil {
		in.ToolResponse = map[string]any{"output": hm.Result.Output, "isError": hm.Result.IsError}
	}
	hs := h.matching(hm.Event, in.ToolName)
	if len(hs) == 0 {
		return agent.HookVerdict{}
	}
	environ, sb := h.m.Environ(), s.Sandbox()
	r := hook.Runner{Environ: environ, Argv: func(command, dir string) ([]string, error) {
		return sb.Wrap(dir, hook.ShellArgv(command))
	}}
	in.SessionID, in.Cwd, in.HookEventName = s.ID(), s.Cwd(), hm.Event
	var v agent.HookVerdict
	for _, hk := range hs {
		res := r.Run(ctx, hk, in)
		s.Publish(protocol.HookEvent{Event: hm.Event, Command: hk.Command, Outcome: res.Outcome,
			DurationMs: res.Duration.Milliseconds(), Reason: res.Reason, Error: res.Error, ToolName: in.ToolName})
		if res.Outcome != "ok" && res.Outcome != "blocked" {
			h.log.Warn("a hook failed", "sessionId", s.ID(), "event", hm.Event, "command", hk.Command, "err", res.Error)
		}
		v = v.With(agent.HookVerdict{Block: res.Blocked(), Reason: res.Reason, Permission: res.Permission})
	}
	return v
}

// matching are the config's hooks for event and tool.
func (h *Hooks) matching(event, toolName string) []hook.Hook {
	var out []hook.Hook
	for _, c := range h.m.Config().Hooks {
		hk := hook.Hook{Event: c.Event, Matcher: c.Matcher, Command: c.Command, Timeout: time.Duration(c.TimeoutSecs) * time.Second}
		if hk.Matches(event, toolName) {
			out = append(out, hk)
		}
	}
	return out
}
