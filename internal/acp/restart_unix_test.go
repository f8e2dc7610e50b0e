//go:build unix

package acp_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The daemon is killed (kill -9) while an editor's prompt streams: the
// bridge dials the next daemon, which goes on with the turn, and the
// editor's prompt is answered end_turn, once (the bridge sent it again
// under its clientMessageId: not run twice).
func TestACPPromptOutlivesADaemonKill(t *testing.T) {
	bin := buildZeroclaw(t)
	env := zeroclawEnv(t)
	_, stdin, lines := acpProcess(t, bin, env)
	send := func(id int, method, params string) {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	}
	var updates []string
	answer := func(id int) map[string]any {
		timeout := time.After(60 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("zeroclaw acp ended before answering call %d", id)
				}
				if p, ok := m["params"].(map[string]any); ok && m["method"] == "session/update" {
					u, _ := p["update"].(map[string]any)
					updates = append(updates, fmt.Sprint(u["sessionUpdate"]))
				}
				if v, ok := m["id"].(float64); ok && int(v) == id {
					if m["error"] != nil {
						t.Fatalf("call %d: %v", id, m["error"])
					}
					return m["result"].(map[string]any)
				}
			case <-timeout:
				t.Fatalf("no answer to call %d", id)
			}
		}
	}
	send(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	answer(1)
	send(2, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()))
	sid := answer(2)["sessionId"].(string)
	send(3, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/delay 20\n/chunks 150"}]}`, sid))
	for m := range lines {
		if p, ok := m["params"].(map[string]any); ok && strings.Contains(fmt.Sprint(p["update"]), "agent_message_chunk") {
			break // the turn is under way
		}
	}
	st := exec.Command(bin, "status", "--output-format", "json")
	st.Env = env
	out, err := st.Output()
	var status struct{ Pid int }
	if err != nil || json.Unmarshal(out, &status) != nil || status.Pid == 0 {
		t.Fatalf("status: %v %s", err, out)
	}
	syscall.Kill(status.Pid, syscall.SIGKILL)
	if res := answer(3); res["stopReason"] != "end_turn" {
		t.Fatalf("the prompt after the daemon's kill: %v", res)
	}
	// The session goes on in the new daemon: another prompt.
	send(4, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"after"}]}`, sid))
	if res := answer(4); res["stopReason"] != "end_turn" {
		t.Fatalf("the next prompt: %v", res)
	}
	// The session's history: the cut turn once, gone on with.
	h := exec.Command(bin, "sessions", "export", sid)
	h.Env = env
	exp, err := h.Output()
	if err != nil || strings.Count(string(exp), "/chunks 150") != 1 || !strings.Contains(string(exp), "The daemon stopped during this turn") {
		t.Fatalf("the export: %v\n%s", err, exp)
	}
}
