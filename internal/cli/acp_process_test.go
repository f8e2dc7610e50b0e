package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// acpCall sends one ACP request to a zeroclaw acp process and returns its
// result and the notifications that came before it.
type acpCall func(method string, params any) (map[string]any, []map[string]any)

// startACP runs zeroclaw acp as an editor does: a process on stdio.
func startACP(t *testing.T, env console.Env) acpCall {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "acp")
	cmd.Env = env.Environ
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var logs lockedBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("zeroclaw acp did not exit when its stdin closed\n%s", logs.String())
		}
	})
	lines := make(chan map[string]any, 256)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	id := 0
	return func(method string, params any) (map[string]any, []map[string]any) {
		t.Helper()
		p, _ := json.Marshal(params)
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, p)
		var notes []map[string]any
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("%s: zeroclaw acp ended\n%s", method, logs.String())
				}
				if m["id"] == float64(id) && m["method"] == nil {
					id++
					if m["error"] != nil {
						t.Fatalf("%s: %v", method, m["error"])
					}
					return m["result"].(map[string]any), notes
				}
				notes = append(notes, m)
			case <-time.After(20 * time.Second):
				t.Fatalf("%s: no answer\n%s", method, logs.String())
			}
		}
	}
}

// zeroclaw acp as an editor runs it: a process on stdio that starts the
// daemon on demand; initialize, session/new, a prompt whose reply streams
// as session/update notifications. (Runs under Wine too: the Windows
// binary over a named pipe.)
func TestACPProcessOnStdio(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	t.Cleanup(func() { waitEphemeralGone(t, dir) }) // after the process's end
	call := startACP(t, env)
	init, _ := call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if init["protocolVersion"] != float64(1) {
		t.Fatalf("initialize: %v", init)
	}
	ns, _ := call("session/new", map[string]any{"cwd": testdir.New(t), "mcpServers": []any{}})
	sid, _ := ns["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v", ns)
	}
	res, notes := call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hello from an editor"}}})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", res)
	}
	var text strings.Builder
	for _, n := range notes {
		if n["method"] != "session/update" {
			continue
		}
		u := n["params"].(map[string]any)["update"].(map[string]any)
		if u["sessionUpdate"] == "agent_message_chunk" {
			text.WriteString(u["content"].(map[string]any)["text"].(string))
		}
	}
	if text.String() != "echo: hello from an editor" {
		t.Fatalf("streamed %q", text.String())
	}
}
