package hook

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func runner() Runner {
	return Runner{Argv: func(c, _ string) ([]string, error) { return ShellArgv(c), nil }, Environ: os.Environ()}
}

func TestHookOutcomes(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("sh")
	}
	in := Input{SessionID: "s", Cwd: t.TempDir(), HookEventName: PreToolUse, ToolName: "shell", ToolInput: []byte(`{"command":"ls"}`)}
	for _, c := range []struct {
		name, command, outcome, reason, permission string
	}{
		{"exit 0", "cat > /dev/null", "ok", "", ""},
		{"the input on stdin", `grep -q '"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":"ls"}' || exit 3`, "ok", "", ""},
		{"exit 2 blocks with stderr", "echo 'no ls here' >&2; exit 2", "blocked", "no ls here", ""},
		{"another exit is an error, not a block", "exit 1", "error", "", ""},
		{"a JSON block", `echo '{"decision":"block","reason":"by json"}'`, "blocked", "by json", ""},
		{"a JSON permission", `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"not today"}}'`, "ok", "not today", "deny"},
		{"10 MB of output", "head -c 10485760 /dev/zero | tr '\\0' x", "ok", "", ""},
	} {
		r := runner().Run(context.Background(), Hook{Event: PreToolUse, Command: c.command, Timeout: 20 * time.Second}, in)
		if r.Outcome != c.outcome || r.Reason != c.reason || r.Permission != c.permission {
			t.Errorf("%s: %+v", c.name, r)
		}
		if len(r.Stdout) > keep+100 {
			t.Errorf("%s: kept %d bytes of output", c.name, len(r.Stdout))
		}
	}
	// A hook that hangs is killed at its timeout, with what it started.
	r := runner().Run(context.Background(), Hook{Command: "sleep 60 & sleep 60", Timeout: 200 * time.Millisecond}, in)
	if r.Outcome != "timeout" || !strings.Contains(r.Error, "did not finish within 200ms") {
		t.Errorf("a hanging hook: %+v", r)
	}
}

func TestMatcher(t *testing.T) {
	h := Hook{Event: PreToolUse, Matcher: "write_file|edit_file"}
	if !h.Matches(PreToolUse, "edit_file") || h.Matches(PreToolUse, "shell") || h.Matches(PostToolUse, "edit_file") {
		t.Error("matcher")
	}
	if !(Hook{Event: Stop}).Matches(Stop, "") {
		t.Error("no matcher")
	}
}
