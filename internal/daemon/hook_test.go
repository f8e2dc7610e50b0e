package daemon

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Hooks at each event, through the daemon: a PreToolUse hook that blocks
// by exit 2 (its stderr to the model) and one that answers in JSON, a
// PostToolUse hook that sees the result, a UserPromptSubmit hook that
// refuses a prompt (stop reason blocked, the model not called), a Stop
// hook that sends the turn on (at most max_stop_continues times), a
// SessionStart hook, one that hangs (killed at its timeout), one that
// prints 10 MB; each run a hook event in the history.
func TestHooks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	logDir := t.TempDir()
	log := filepath.Join(logDir, "log")
	r := startWith(t, echoAgent+`risk = "full"
[daemon]
max_stop_continues = 2

[[hooks]]
event = "SessionStart"
command = "cat > `+logDir+`/start.json"

[[hooks]]
event = "PreToolUse"
matcher = "write_file"
command = "echo 'no writes, please' >&2; exit 2"

[[hooks]]
event = "PreToolUse"
matcher = "list_dir"
command = "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"json says no\"}}'"

[[hooks]]
event = "PostToolUse"
matcher = "shell"
command = "cat >> `+log+`; echo 'checked by the hook' >&2; exit 2"

[[hooks]]
event = "UserPromptSubmit"
command = "grep -q forbidden && { echo 'that word is forbidden' >&2; exit 2; } || exit 0"

[[hooks]]
event = "UserPromptSubmit"
command = "head -c 10485760 /dev/zero"

[[hooks]]
event = "Stop"
command = "grep -q '\"hook_event_name\":\"Stop\"' && test ! -e `+logDir+`/stopped && touch `+logDir+`/stopped && { echo 'also say goodbye' >&2; exit 2; } || exit 0"

[[hooks]]
event = "PreToolUse"
matcher = "read_file"
command = "sleep 60"
timeout_secs = 1
`)
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "r.txt"), []byte("readable"), 0o644)
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)

	res := result(t, a.call("session/prompt", prompt(sid, toolLine("write_file", `{"path":"w.txt","content":"x"}`)+"\n"+
		toolLine("list_dir", `{}`)+"\n"+toolLine("shell", `{"command":"echo ran"}`)+"\n"+toolLine("read_file", `{"path":"r.txt"}`))))
	content, _ := res["content"].(string)
	if res["stopReason"] != "end_turn" {
		t.Fatalf("turn: %v", res)
	}
	var outputs []string
	for _, e := range a.snapshot() {
		if e["type"] == "tool_result" {
			outputs = append(outputs, e["rawOutput"].(string))
		}
	}
	if len(outputs) != 4 || !strings.Contains(outputs[0], "a PreToolUse hook refused it: no writes, please") ||
		!strings.Contains(outputs[1], "a PreToolUse hook refused it: json says no") ||
		!strings.Contains(outputs[2], "ran\n") || !strings.Contains(outputs[2], "[a PostToolUse hook: checked by the hook]") ||
		!strings.Contains(outputs[3], "readable") {
		t.Errorf("tool results %q", outputs)
	}
	if _, err := os.Stat(filepath.Join(cwd, "w.txt")); err == nil {
		t.Error("the blocked write happened")
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), `"tool_response":{"isError":false,"output":"ran\n"}`) || !strings.Contains(string(b), `"hook_event_name":"PostToolUse"`) {
		t.Errorf("the PostToolUse hook got %s", b)
	}
	// The Stop hook sent the turn on once (it blocks only the first time).
	if !strings.Contains(content, "echo: also say goodbye") {
		t.Errorf("the turn's last reply %q: the Stop hook's instruction was not followed", content)
	}
	if b, err := os.ReadFile(filepath.Join(logDir, "start.json")); err != nil || !strings.Contains(string(b), `"source":"startup"`) {
		t.Errorf("the SessionStart hook got %s (%v)", b, err)
	}
	hooks := map[string]int{}
	var timedOut bool
	for _, e := range a.snapshot() {
		if e["type"] == "hook" {
			hooks[e["event"].(string)+":"+e["outcome"].(string)]++
			if e["outcome"] == "timeout" && e["toolName"] == "read_file" {
				timedOut = true
			}
		}
	}
	if hooks["PreToolUse:blocked"] != 1 || hooks["PostToolUse:blocked"] != 1 || hooks["Stop:blocked"] != 1 || hooks["UserPromptSubmit:ok"] != 2 || !timedOut {
		t.Errorf("hook events %v (the hanging hook timed out: %v)", hooks, timedOut)
	}

	// A prompt a hook refuses: blocked, with its reason; the model is
	// not called.
	res = result(t, a.call("session/prompt", prompt(sid, "a forbidden word")))
	if res["stopReason"] != "blocked" || !strings.Contains(res["notice"].(string), "that word is forbidden") || res["content"] != "" {
		t.Errorf("a refused prompt: %v", res)
	}
	a.until("turn_complete") // the first turn's
	if tc := a.until("turn_complete"); tc["stopReason"] != "blocked" {
		t.Errorf("turn_complete of the refused prompt: %v", tc)
	}
}
