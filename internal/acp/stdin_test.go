package acp_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// An editor that closes zeroclaw acp's stdin mid-turn is gone: the
// process ends at once, the prompt left unanswered, and the turn goes on
// in the daemon (another client sees it end, in the session kept).
func TestACPExitsWhenTheEditorClosesStdin(t *testing.T) {
	bin := buildZeroclaw(t)
	env := zeroclawEnv(t)
	cmd, stdin, lines := acpProcess(t, bin, env)
	send := func(id int, method, params string) {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	}
	answer := func(id int) map[string]any {
		for m := range lines {
			if v, ok := m["id"].(float64); ok && int(v) == id {
				if m["error"] != nil {
					t.Fatalf("call %d: %v", id, m["error"])
				}
				return m["result"].(map[string]any)
			}
		}
		t.Fatalf("no answer to call %d", id)
		return nil
	}
	send(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	answer(1)
	send(2, "session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()))
	sid := answer(2)["sessionId"].(string)
	// A turn of 120 chunks, 100 ms apart: 12 s.
	send(3, "session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"/chunks 120\n/delay 100"}]}`, sid))
	for m := range lines {
		if p, ok := m["params"].(map[string]any); ok && fmt.Sprint(p["update"]) != "" && strings.Contains(fmt.Sprint(p["update"]), "agent_message_chunk") {
			break // the turn is under way
		}
	}
	closed := time.Now()
	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The turn's result would say the process waited for the turn (an
	// error answer, written as it leaves, would not).
	answeredCh := make(chan bool, 1)
	go func() {
		answered := false
		for m := range lines {
			if v, ok := m["id"].(float64); ok && int(v) == 3 && m["result"] != nil {
				answered = true
			}
		}
		answeredCh <- answered
	}()
	select {
	case <-exited:
	case <-time.After(10 * time.Second): // the turn's end is 12 s away
		t.Fatal("zeroclaw acp still runs after its stdin closed: it waits for the turn")
	}
	t.Logf("zeroclaw acp exited %v after its stdin closed", time.Since(closed).Round(time.Millisecond))
	if <-answeredCh { // its stdout ended with it
		t.Error("the prompt was answered: the process waited for the turn")
	}
	// The turn goes on in the daemon: another client resumes the session
	// and sees it end.
	c := exec.Command(bin, "prompt", "--session", sid, "--output-format", "json", "after")
	c.Env = env
	out, err := c.Output()
	var res struct{ StopReason string }
	if err != nil || json.Unmarshal(out, &res) != nil || res.StopReason != "end_turn" {
		t.Fatalf("the session afterwards: %v %s", err, out)
	}
}
