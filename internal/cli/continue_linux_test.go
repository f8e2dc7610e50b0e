package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// A crash loop: a model whose every reply runs a command that kills the
// daemon. The turn is continued [daemon] continue_attempts times (2),
// then, cut once more, ends failed with the reason, and the daemon
// stays up.
func TestCrashLoopEndsTheTurnFailed(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	cwd := t.TempDir()
	pidFile := filepath.Join(cwd, "daemon.pid")
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		args, _ := json.Marshal(map[string]string{"command": "kill -9 $(cat daemon.pid)"})
		call, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
			map[string]any{"index": 0, "id": "call_" + strconv.Itoa(n), "type": "function", "function": map[string]any{"name": "shell", "arguments": string(args)}}}}}}})
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", call,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`)
	}))
	defer srv.Close()
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"m\"\n"+
		"[agents.default]\nprovider = \"fake\"\nrisk = \"full\"\n[sandbox]\nmode = \"off\"\n"), 0o600)
	ctx := context.Background()
	start := func() *exec.Cmd {
		cmd, _ := startDaemon(t, env)
		os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
		return cmd
	}
	cmd := start()
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "loop", Cwd: cwd, Mode: "code"}); err != nil {
		t.Fatal(err)
	}
	text := "kill it"
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "loop", Prompt: &text, ClientMessageID: "loop-1"})
	// The first run and two continuations each kill the daemon: each
	// time it is started again (its pid where the command reads it).
	for kills := 0; kills < 3; kills++ {
		if err := cmd.Wait(); err == nil {
			t.Fatalf("the daemon exited cleanly on kill %d", kills+1)
		}
		cmd = start()
	}
	c.Close()
	c2, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.NewSession(ctx, protocol.SessionNewParams{SessionID: "loop"}); err != nil {
		t.Fatal(err)
	}
	res, err := c2.Await(ctx, "loop", "loop-1")
	if err != nil || res.StopReason != "error" || res.Error == nil || !strings.Contains(res.Error.Message, "continue_attempts = 2") {
		t.Fatalf("the looping turn's end: %+v %v", res, err)
	}
	// The daemon stays up: it answers.
	if err := c2.Call(ctx, protocol.MethodStatus, struct{}{}, nil); err != nil {
		t.Fatalf("the daemon after the loop: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Fatalf("the model was called %d times, want 3 (the run and two continuations)", calls)
	}
}

// Fifty rounds of kill -9 at random points of turns whose tool call has
// a side effect (a line appended to a file), under a client that sends
// each prompt again under its clientMessageId after every restart until
// it has its result. Afterwards: every prompt has one user_message and
// its turn one turn_complete, every side effect happened at most once,
// the seqs run without a gap or a repeat, and every prompt ended.
func TestKill9FaultRounds(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	cwd := t.TempDir()
	ctx := context.Background()
	var mu sync.Mutex
	results := map[string]*protocol.SessionPromptResult{}
	texts := map[string]string{}
	send := func(c *client.Client, cmid string) {
		text := texts[cmid]
		go func() {
			res, err := c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "fault", Prompt: &text, ClientMessageID: cmid})
			if err == nil && res.Duplicate && res.StopReason == "" {
				res, err = c.Await(ctx, "fault", cmid)
			}
			if err == nil && res.StopReason != "" {
				mu.Lock()
				results[cmid] = res
				mu.Unlock()
			}
		}()
	}
	pending := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for cmid := range texts {
			if results[cmid] == nil {
				out = append(out, cmid)
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 37))
	const rounds = 50
	for round := 0; round <= rounds; round++ {
		cmd, _ := startDaemon(t, env)
		c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "fault", Cwd: cwd, Mode: "code"}); err != nil {
			t.Fatal(err)
		}
		for _, cmid := range pending() {
			send(c, cmid)
		}
		if round == rounds {
			// The last daemon lives: every prompt gets its result.
			for deadline := time.Now().Add(60 * time.Second); len(pending()) > 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("prompts without a result: %v", pending())
				}
			}
			break
		}
		cmid := fmt.Sprintf("round-%02d", round)
		mu.Lock()
		texts[cmid] = fmt.Sprintf(`/tool shell {"command":"echo %s >> side.txt"}`+"\n/delay 2\n/chunks 20", cmid)
		mu.Unlock()
		send(c, cmid)
		// The kill's point: anywhere in the turns running or queued.
		time.Sleep(time.Duration(rng.IntN(250)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		c.Close()
	}
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := c.History(ctx, protocol.SessionHistoryParams{SessionID: "fault", Limit: 10000})
	if err != nil || h.More {
		t.Fatalf("history: more %v, %v", h.More, err)
	}
	users := map[string]int{}
	completes := map[string]int{}
	for i, raw := range h.Events {
		u, err := protocol.ParseUpdate(raw)
		if err != nil {
			t.Fatal(err)
		}
		if u.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: a gap or a repeat", i, u.Seq)
		}
		switch e := u.Event.(type) {
		case protocol.UserMessageEvent:
			users[e.Text]++
		case protocol.TurnCompleteEvent:
			completes[u.TurnID]++
		}
	}
	side, _ := os.ReadFile(filepath.Join(cwd, "side.txt"))
	ran := map[string]int{}
	for _, l := range strings.Fields(string(side)) {
		ran[l]++
	}
	ended, failed := 0, 0
	for cmid, text := range texts {
		res := results[cmid]
		if users[text] != 1 {
			t.Errorf("%s: %d user_messages", cmid, users[text])
		}
		if completes[res.TurnID] != 1 {
			t.Errorf("%s: its turn %s has %d turn_completes", cmid, res.TurnID, completes[res.TurnID])
		}
		if ran[cmid] > 1 {
			t.Errorf("%s: its command ran %d times", cmid, ran[cmid])
		}
		if res.StopReason == "end_turn" {
			ended++
		} else {
			failed++
		}
	}
	t.Logf("%d prompts: %d ended, %d failed after their attempts; %d commands ran; %d events", len(texts), ended, failed, len(ran), len(h.Events))
}
