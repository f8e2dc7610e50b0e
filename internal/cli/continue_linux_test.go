package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// joinRaw joins raw events into one text, to search.
func joinRaw(evs []json.RawMessage) []byte {
	var b []byte
	for _, e := range evs {
		b = append(b, e...)
	}
	return b
}

// A daemon kill -9 while a turn's tool call runs: the next daemon goes
// on with the turn under the same id (turn_interrupted, turn_resumed
// with attempt 2, the cut call's result "interrupted by a daemon
// restart", the model called again), never runs the call again, runs
// the prompt queued behind it once, and a client that comes back with
// the prompts' clientMessageIds gets their results.
func TestTurnContinuesAfterKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	cmd, _ := startDaemon(t, env)
	sock := endpointOf(dir)
	ctx := context.Background()
	c, err := client.Dial(ctx, sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "cont-1", Cwd: cwd, Mode: "code"}); err != nil {
		t.Fatal(err)
	}
	side := filepath.Join(cwd, "side.txt")
	long := `/tool shell {"command":"echo ran >> side.txt; sleep 60"}`
	after := "queued behind it"
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "cont-1", Prompt: &long, ClientMessageID: "k9-long"})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(side); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never ran")
		}
	}
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "cont-1", Prompt: &after, ClientMessageID: "k9-after"})
	// Taken: its input_update queued is committed (the history has it).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		h, err := c.History(ctx, protocol.SessionHistoryParams{SessionID: "cont-1", Limit: 10000})
		if err == nil && strings.Contains(string(json.RawMessage(joinRaw(h.Events))), `"clientMessageId":"k9-after","inputId"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second prompt was never queued")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.Close()

	startDaemon(t, env)
	c2, err := client.Dial(ctx, sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.NewSession(ctx, protocol.SessionNewParams{SessionID: "cont-1"}); err != nil {
		t.Fatal(err)
	}
	first, err := c2.Await(ctx, "cont-1", "k9-long")
	if err != nil || first.StopReason != "end_turn" || !strings.Contains(first.Content, "The daemon stopped during this turn") {
		t.Fatalf("the continued turn's result: %+v %v", first, err)
	}
	second, err := c2.Await(ctx, "cont-1", "k9-after")
	if err != nil || second.StopReason != "end_turn" || second.Content != "echo: queued behind it" {
		t.Fatalf("the queued prompt's result: %+v %v", second, err)
	}
	// Sent again, neither runs again.
	again, err := c2.Prompt(ctx, protocol.SessionPromptParams{SessionID: "cont-1", Prompt: &after, ClientMessageID: "k9-after"})
	if err != nil || !again.Duplicate || again.TurnID != second.TurnID {
		t.Fatalf("the queued prompt sent again: %+v %v", again, err)
	}
	if b, _ := os.ReadFile(side); string(b) != "ran\n" {
		t.Fatalf("the command ran %q: it must never run again", b)
	}
	h, err := c2.History(ctx, protocol.SessionHistoryParams{SessionID: "cont-1", Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	users := map[string]int{}
	completes := map[string]int{}
	var trail []string
	for _, raw := range h.Events {
		u, err := protocol.ParseUpdate(raw)
		if err != nil {
			t.Fatal(err)
		}
		if u.Seq != seq+1 {
			t.Fatalf("seq %d after %d", u.Seq, seq)
		}
		seq = u.Seq
		switch e := u.Event.(type) {
		case protocol.UserMessageEvent:
			users[e.Text]++
		case protocol.TurnCompleteEvent:
			completes[u.TurnID]++
		case protocol.TurnInterruptedEvent:
			trail = append(trail, "interrupted:"+e.Reason+":"+u.TurnID)
		case protocol.TurnResumedEvent:
			b, _ := json.Marshal(e.Attempt)
			trail = append(trail, "resumed:"+string(b)+":"+u.TurnID)
		case protocol.ToolResultEvent:
			if e.IsError && strings.Contains(e.RawOutput, "interrupted by a daemon restart") {
				trail = append(trail, "cut:"+u.TurnID)
			}
		}
	}
	if users[long] != 1 || users[after] != 1 {
		t.Fatalf("user_messages: %v", users)
	}
	if completes[first.TurnID] != 1 || completes[second.TurnID] != 1 {
		t.Fatalf("turn_completes: %v", completes)
	}
	want := "interrupted:daemon_exit:" + first.TurnID + " resumed:2:" + first.TurnID + " cut:" + first.TurnID
	if got := strings.Join(trail, " "); got != want {
		t.Fatalf("the continued turn's events: %s, want %s", got, want)
	}
}
