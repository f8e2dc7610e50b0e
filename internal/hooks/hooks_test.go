package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/hook"
	"github.com/zeroclaw/zeroclaw/internal/hooks"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// start is a daemon's Manager with the hooks joined, the config's hooks
// hs, the echo agent in the full mode.
func start(t *testing.T, hs ...config.Hook) (*sessiontest.Daemon, *hooks.Hooks) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	h := sessiontest.New(t, func(cfg *config.Config) {
		a := cfg.Agents["default"]
		a.Risk = protocol.RiskFull
		cfg.Agents["default"] = a
		cfg.Hooks = hs
	})
	var hk *hooks.Hooks
	d := h.Start(t, func(m *session.Manager) { hk = hooks.New(m, nil) })
	return d, hk
}

// A UserPromptSubmit hook sees the prompt and refuses it (the model is
// not called, the turn ends blocked); a SessionStart hook is told why
// the session started; each run is a hook event in the history.
func TestPromptAndStartHooks(t *testing.T) {
	logDir := t.TempDir()
	d, _ := start(t,
		config.Hook{Event: hook.SessionStart, Command: "cat > " + logDir + "/start.json"},
		config.Hook{Event: hook.UserPromptSubmit, Command: "grep -q forbidden && { echo 'that word is forbidden' >&2; exit 2; } || exit 0"},
	)
	cl, c := sessiontest.Client(t, "c1", "")
	sid := d.Open(t, cl, "")
	start := sessiontest.Of(t, c, sid, func(e protocol.HookEvent) bool { return e.Event == hook.SessionStart })
	if start.Outcome != "ok" {
		t.Errorf("SessionStart: %+v", start)
	}
	b, _ := os.ReadFile(filepath.Join(logDir, "start.json"))
	if !strings.Contains(string(b), `"source":"startup"`) || !strings.Contains(string(b), `"session_id":"`+sid+`"`) {
		t.Errorf("SessionStart's input: %s", b)
	}

	r := d.Prompt(t, cl, sid, "a forbidden thing")
	if r.StopReason != protocol.StopBlocked || !strings.Contains(r.Notice, "that word is forbidden") {
		t.Errorf("the refused prompt: %+v", r)
	}
	ev := sessiontest.Of(t, c, sid, func(e protocol.HookEvent) bool { return e.Event == hook.UserPromptSubmit })
	if ev.Outcome != "blocked" || !strings.Contains(ev.Reason, "forbidden") {
		t.Errorf("the hook event: %+v", ev)
	}
	if r := d.Prompt(t, cl, sid, "a fine thing"); r.StopReason != protocol.StopEndTurn || r.Content != "echo: a fine thing" {
		t.Errorf("the allowed prompt: %+v", r)
	}
}

// The PreToolUse hooks of a call decide together: one blocks (its
// stderr the reason), one denies in JSON; a PostToolUse hook gets the
// result; a hook that fails does not block, and is said failed.
func TestToolHooks(t *testing.T) {
	logDir := t.TempDir()
	d, _ := start(t,
		config.Hook{Event: hook.PreToolUse, Matcher: "write_file", Command: "echo 'no writes, please' >&2; exit 2"},
		config.Hook{Event: hook.PreToolUse, Matcher: "list_dir", Command: `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"json says no"}}'`},
		config.Hook{Event: hook.PostToolUse, Matcher: "read_file", Command: "cat > " + logDir + "/post.json"},
		config.Hook{Event: hook.PreToolUse, Matcher: "read_file", Command: "exit 1"},
	)
	cl, c := sessiontest.Client(t, "c1", "")
	sid := d.Open(t, cl, "")
	r := d.Prompt(t, cl, sid, `/tool write_file {"path":"w.txt","content":"x"}`+"\n"+`/tool list_dir {}`+"\n"+`/tool read_file {"path":"nothing.txt"}`)
	if r.StopReason != protocol.StopEndTurn {
		t.Fatalf("turn: %+v", r)
	}
	var outputs []string
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.ToolResultEvent); ok && u.SessionID == sid {
			outputs = append(outputs, e.RawOutput)
		}
	}
	if len(outputs) != 3 || !strings.Contains(outputs[0], "no writes, please") || !strings.Contains(outputs[1], "json says no") {
		t.Errorf("the results: %q", outputs)
	}
	b, _ := os.ReadFile(filepath.Join(logDir, "post.json"))
	if !strings.Contains(string(b), `"hook_event_name":"PostToolUse"`) || !strings.Contains(string(b), `"tool_name":"read_file"`) || !strings.Contains(string(b), `"isError":true`) {
		t.Errorf("PostToolUse's input: %s", b)
	}
	var failed bool
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.HookEvent); ok && e.ToolName == "read_file" && e.Event == hook.PreToolUse {
			failed = e.Outcome == "error"
		}
	}
	if !failed {
		t.Error("the failing hook was not said failed")
	}
}

// A moment no hook is for is told nothing, and decides nothing; the
// verdict of several hooks takes the strictest permission.
func TestVerdicts(t *testing.T) {
	d, hk := start(t,
		config.Hook{Event: hook.PreToolUse, Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`},
		config.Hook{Event: hook.PreToolUse, Command: `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`},
	)
	cl, _ := sessiontest.Client(t, "c1", "")
	s, err := d.M.Lookup(cl, d.Open(t, cl, ""))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v := hk.Hook(ctx, s, session.HookMoment{Event: hook.Stop}); v != (agent.HookVerdict{}) {
		t.Errorf("Stop, with no hook for it: %+v", v)
	}
	call := &provider.ToolCall{ID: "c1", Name: "shell", Input: []byte(`{"command":"true"}`)}
	if v := hk.Hook(ctx, s, session.HookMoment{Event: hook.PreToolUse, Call: call}); v != (agent.HookVerdict{Permission: "ask"}) {
		t.Errorf("PreToolUse: %+v", v)
	}
	// Through the session, as the agent asks it.
	if v := s.Hook(ctx, hook.PostToolUse, call, &tool.Result{Output: "ok"}); v != (agent.HookVerdict{}) {
		t.Errorf("PostToolUse: %+v", v)
	}
}
