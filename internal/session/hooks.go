package session

import (
	"context"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/hook"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The command hooks ([[hooks]]): each run sandboxed as commands are, with
// the provider keys out of its environment, and said in the history as
// a hook event.

// hooks are the config's hooks for event and tool.
func (s *Session) hooks(event, toolName string) []hook.Hook {
	var out []hook.Hook
	for _, h := range s.m.conf().Config().Hooks {
		hk := hook.Hook{Event: h.Event, Matcher: h.Matcher, Command: h.Command, Timeout: time.Duration(h.TimeoutSecs) * time.Second}
		if hk.Matches(event, toolName) {
			out = append(out, hk)
		}
	}
	return out
}

// runHooks runs event's hooks in order with in, each said in the
// history; the verdict blocks when one blocks (the first reason) and
// takes the strictest permission (deny, ask, allow).
func (s *Session) runHooks(ctx context.Context, event string, in hook.Input) agent.HookVerdict {
	hs := s.hooks(event, in.ToolName)
	if len(hs) == 0 {
		return agent.HookVerdict{}
	}
	sb := s.sandbox()
	r := hook.Runner{Environ: s.m.conf().Environ(), Argv: func(command, dir string) ([]string, error) {
		return sb.Wrap(dir, hook.ShellArgv(command))
	}}
	in.SessionID, in.Cwd, in.HookEventName = s.id, s.cwd, event
	var v agent.HookVerdict
	rank := map[string]int{"": 0, "allow": 1, "ask": 2, "deny": 3}
	for _, h := range hs {
		res := r.Run(ctx, h, in)
		s.emit(protocol.HookEvent{Event: event, Command: h.Command, Outcome: res.Outcome,
			DurationMs: res.Duration.Milliseconds(), Reason: res.Reason, Error: res.Error, ToolName: in.ToolName})
		if res.Outcome != "ok" && res.Outcome != "blocked" {
			s.m.log.Warn("a hook failed", "sessionId", s.id, "event", event, "command", h.Command, "err", res.Error)
		}
		if res.Blocked() && !v.Block {
			v.Block, v.Reason = true, res.Reason
		}
		if rank[res.Permission] > rank[v.Permission] {
			v.Permission = res.Permission
			if res.Permission == "deny" && v.Reason == "" {
				v.Reason = res.Reason
			}
		}
	}
	return v
}

// Hook implements agent.Host.
func (s *Session) Hook(ctx context.Context, event string, call *provider.ToolCall, result *tool.Result) agent.HookVerdict {
	in := hook.Input{}
	if call != nil {
		in.ToolName, in.ToolInput = call.Name, call.Input
	}
	if result != nil {
		in.ToolResponse = map[string]any{"output": result.Output, "isError": result.IsError}
	}
	return s.runHooks(ctx, event, in)
}
