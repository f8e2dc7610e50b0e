package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
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
	// The dead daemon's last event: the next daemon's first is
	// turn_interrupted, at the seq after it.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "data", "zeroclaw.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	var deadLast int64
	err = db.QueryRow(`SELECT last_seq FROM sessions WHERE id = 'cont-1'`).Scan(&deadLast)
	db.Close()
	if err != nil || deadLast == 0 {
		t.Fatalf("the dead daemon's last seq: %d %v", deadLast, err)
	}

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
		if u.Seq == deadLast+1 && u.Type != protocol.EventTurnInterrupted {
			t.Errorf("the next daemon's first event (seq %d) is %s, not turn_interrupted", u.Seq, u.Type)
		}
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
	calls, started := 0, 0
	// The n-th call is answered once the n-th daemon's pid is in the file
	// its command reads: a continued turn calls the model as its daemon
	// starts, before the test has written that daemon's pid.
	startedCond := sync.NewCond(&mu)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		for started < n {
			startedCond.Wait()
		}
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
		mu.Lock()
		started++
		startedCond.Broadcast()
		mu.Unlock()
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

// historyCount polls a session's history until want occurs n times in
// it, and returns the history's events.
func historyCount(t *testing.T, c *client.Client, sid, want string, n int) []json.RawMessage {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		h, err := c.History(context.Background(), protocol.SessionHistoryParams{SessionID: sid, Limit: 10000})
		if err == nil && strings.Count(string(joinRaw(h.Events)), want) >= n {
			return h.Events
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never occurred %d times in %s's history", want, n, sid)
		}
	}
}

// A continued turn asks again for an approval the dead daemon was
// waiting for (the call never ran: it runs once, when allowed), and
// keeps the reply the model was streaming when the daemon died as what
// the model had said: the next model call reads it.
func TestContinuedTurnAsksAgainAndKeepsThePartialReply(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	cwd := t.TempDir()
	var mu sync.Mutex
	var bodies []string
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any) {
			d, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta}}})
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
		end := func(reason string) {
			fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", `{"choices":[{"index":0,"delta":{},"finish_reason":"`+reason+`"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`)
		}
		switch n {
		case 1: // a call that asks for an approval
			args, _ := json.Marshal(map[string]string{"command": "echo ran >> side.txt"})
			chunk(map[string]any{"content": "Let me write it. "})
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_w", "type": "function",
				"function": map[string]any{"name": "shell", "arguments": string(args)}}}})
			end("tool_calls")
		case 2: // half a reply, then the daemon dies
			chunk(map[string]any{"content": "It is written; now I was say"})
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		default:
			chunk(map[string]any{"content": "ing: done."})
			end("stop")
		}
	}))
	defer srv.Close()
	defer close(hang) // before the server's Close waits for its handlers
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"m\"\n"+
		"[agents.default]\nprovider = \"fake\"\nrisk = \"supervised\"\n[sandbox]\nmode = \"off\"\n"), 0o600)
	ctx := context.Background()
	attach := func() (*exec.Cmd, *client.Client) {
		cmd, _ := startDaemon(t, env)
		c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "ask", Cwd: cwd, Mode: "code"}); err != nil {
			t.Fatal(err)
		}
		return cmd, c
	}
	cmd, c := attach()
	text := "write it"
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "ask", Prompt: &text, ClientMessageID: "ask-1"})
	historyCount(t, c, "ask", `"type":"approval_request"`, 1)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.Close()

	// The next daemon asks again; allowed, the call runs.
	cmd, c = attach()
	evs := historyCount(t, c, "ask", `"type":"approval_request"`, 2)
	var req protocol.ApprovalRequestEvent
	for _, raw := range evs {
		if u, err := protocol.ParseUpdate(raw); err == nil {
			if e, ok := u.Event.(protocol.ApprovalRequestEvent); ok {
				req = e
			}
		}
	}
	if req.ToolCallID != "call_w" {
		t.Fatalf("the approval asked again is for %q, want call_w", req.ToolCallID)
	}
	// While it waits, session/get tells the turn was continued once.
	if info, err := c.Get(ctx, "ask"); err != nil || info.RunningTurnID == "" || info.ResumedAttempts != 1 {
		t.Fatalf("session/get of the continued turn: %+v %v", info, err)
	}
	if ok, err := c.Approve(ctx, protocol.SessionApproveParams{SessionID: "ask", RequestID: req.RequestID, Decision: "allow_once"}); err != nil || !ok {
		t.Fatalf("approve: %v %v", ok, err)
	}
	// Half the next reply streams; the daemon dies again.
	historyCount(t, c, "ask", "now I was say", 1)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.Close()

	_, c = attach()
	defer c.Close()
	res, err := c.Await(ctx, "ask", "ask-1")
	if err != nil || res.StopReason != "end_turn" || res.Content != "ing: done." {
		t.Fatalf("the turn's result: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "side.txt")); string(b) != "ran\n" {
		t.Fatalf("side.txt holds %q: the approved call must run once", b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("the model was called %d times, want 3", len(bodies))
	}
	var last struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal([]byte(bodies[2]), &last)
	var saw []string
	for _, m := range last.Messages {
		s, _ := m.Content.(string)
		saw = append(saw, m.Role+": "+s)
	}
	all := strings.Join(saw, "\n")
	if !strings.Contains(all, "assistant: It is written; now I was say") {
		t.Fatalf("the last call does not read the partial reply as the model's:\n%s", all)
	}
	if strings.Count(all, "\ntool: ") != 1 {
		t.Fatalf("the last call does not read the call's one result:\n%s", all)
	}
	if strings.Contains(all, "interrupted by a daemon restart") {
		t.Fatalf("the call asked again was answered interrupted:\n%s", all)
	}
}

// A daemon kill -9 while the first of a reply's two calls runs: the
// next daemon answers it "interrupted" (it had started) and the second
// "not run" (it had not), and its note speaks of the running call. Killed
// again while the model streams (no call running), the note the model
// reads then says nothing of a running call.
func TestOnlyStartedCallsAreInterruptedAfterKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	cwd := t.TempDir()
	var mu sync.Mutex
	var bodies []string
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		n := len(bodies)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any) {
			d, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": delta}}})
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
		end := func(reason string) {
			fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", `{"choices":[{"index":0,"delta":{},"finish_reason":"`+reason+`"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`)
		}
		switch n {
		case 1: // two calls: the first runs long, the second waits its turn
			first, _ := json.Marshal(map[string]string{"command": "echo ran >> side.txt; sleep 60"})
			second, _ := json.Marshal(map[string]string{"command": "echo ran >> second.txt"})
			chunk(map[string]any{"tool_calls": []any{
				map[string]any{"index": 0, "id": "call_a", "type": "function", "function": map[string]any{"name": "shell", "arguments": string(first)}},
				map[string]any{"index": 1, "id": "call_b", "type": "function", "function": map[string]any{"name": "shell", "arguments": string(second)}}}})
			end("tool_calls")
		case 2: // half a reply, then the daemon dies
			chunk(map[string]any{"content": "Half a repl"})
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		default:
			chunk(map[string]any{"content": "done."})
			end("stop")
		}
	}))
	defer srv.Close()
	defer close(hang) // before the server's Close waits for its handlers
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"m\"\n"+
		"[agents.default]\nprovider = \"fake\"\nrisk = \"full\"\n[sandbox]\nmode = \"off\"\n"), 0o600)
	ctx := context.Background()
	attach := func() (*exec.Cmd, *client.Client) {
		cmd, _ := startDaemon(t, env)
		c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "two", Cwd: cwd, Mode: "code"}); err != nil {
			t.Fatal(err)
		}
		return cmd, c
	}
	cmd, c := attach()
	text := "run both"
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "two", Prompt: &text, ClientMessageID: "two-1"})
	historyCount(t, c, "two", `"type":"tool_call"`, 1)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(cwd, "side.txt")); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first command never ran")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.Close()

	// The next daemon: the model's second call streams half a reply; the
	// daemon dies again.
	cmd, c = attach()
	historyCount(t, c, "two", "Half a repl", 1)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.Close()

	_, c = attach()
	defer c.Close()
	res, err := c.Await(ctx, "two", "two-1")
	if err != nil || res.StopReason != "end_turn" || res.Content != "done." {
		t.Fatalf("the turn's result: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "second.txt")); err == nil {
		t.Fatal("the call that had not started ran after the restart")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("the model was called %d times, want 3", len(bodies))
	}
	type message struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	}
	read := func(body string) (results map[string]string, lastUser string) {
		var req struct{ Messages []message }
		json.Unmarshal([]byte(body), &req)
		results = map[string]string{}
		for _, m := range req.Messages {
			text, _ := m.Content.(string)
			switch m.Role {
			case "tool":
				results[m.ToolCallID] = text
			case "user":
				lastUser = text
			}
		}
		return results, lastUser
	}
	results, note := read(bodies[1])
	if !strings.Contains(results["call_a"], "interrupted by a daemon restart") {
		t.Fatalf("the call that ran was answered %q", results["call_a"])
	}
	if !strings.HasPrefix(results["call_b"], "not run") || strings.Contains(results["call_b"], "may or may not") {
		t.Fatalf("the call that never started was answered %q", results["call_b"])
	}
	if !strings.Contains(note, "The daemon stopped during this turn") || !strings.Contains(note, "A tool call that was running then") {
		t.Fatalf("the note after a kill during a call: %q", note)
	}
	_, note = read(bodies[2])
	if !strings.Contains(note, "The daemon stopped during this turn") || strings.Contains(note, "tool call") {
		t.Fatalf("the note after a kill with no call running: %q", note)
	}
}

// With [daemon] continue_interrupted off, a daemon kill -9 while a
// foreground sub-agent runs a command: the next daemon ends the parent's
// cut turn, and its task call, which had started, gets its tool_result
// (interrupted) instead of none ever.
func TestUncontinuedTaskCallGetsItsResultAfterKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[daemon]\ncontinue_interrupted = false\n[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n[sandbox]\nmode = \"off\"\n"), 0o600)
	cmd, _ := startDaemon(t, env)
	ctx := context.Background()
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "nocont", Cwd: cwd, Mode: "code"}); err != nil {
		t.Fatal(err)
	}
	long := `/tool task {"description":"work","prompt":"/tool shell {\"command\":\"echo ran >> side.txt; sleep 60\"}"}`
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "nocont", Prompt: &long, ClientMessageID: "nc-1"})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(filepath.Join(cwd, "side.txt")); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child's command never ran")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.Close()

	startDaemon(t, env)
	c, err = client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "nocont"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Await(ctx, "nocont", "nc-1")
	if err != nil || res.StopReason != protocol.StopInterrupted {
		t.Fatalf("the cut turn's result: %+v %v", res, err)
	}
	h, err := c.History(ctx, protocol.SessionHistoryParams{SessionID: "nocont", Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	calls, results := map[string]string{}, map[string]string{}
	for _, raw := range h.Events {
		u, err := protocol.ParseUpdate(raw)
		if err != nil {
			t.Fatal(err)
		}
		switch e := u.Event.(type) {
		case protocol.ToolCallEvent:
			calls[e.ToolCallID] = e.Name
		case protocol.ToolResultEvent:
			results[e.ToolCallID] = e.RawOutput
		}
	}
	if len(calls) != 1 {
		t.Fatalf("the parent's tool calls: %v", calls)
	}
	for id := range calls {
		if !strings.Contains(results[id], "interrupted by a daemon restart") {
			t.Fatalf("the task call's tool_result: %q (results %v)", results[id], results)
		}
	}
}

// A daemon kill -9 while a foreground sub-agent runs: the child's turn
// and its parent's go on together. The parent's task call is not
// answered "interrupted" nor run again (no second child): it waits for
// the child's continued turn and gets its answer; each turn ends once.
func TestSubagentGoesOnWithItsParentAfterKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	cmd, _ := startDaemon(t, env)
	ctx := context.Background()
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "go-parent", Cwd: t.TempDir(), Mode: "code"}); err != nil {
		t.Fatal(err)
	}
	line := `/tool task {"description":"a long one","prompt":"/delay 400\nslow work here"}`
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "go-parent", Prompt: &line, ClientMessageID: "sub-1"})
	var child string
	for deadline := time.Now().Add(20 * time.Second); child == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sub-agent never started")
		}
		var l protocol.SessionListResult
		if c.Call(ctx, protocol.MethodSessionList, protocol.SessionListParams{ParentSessionID: "go-parent"}, &l) == nil && len(l.Sessions) == 1 && l.Sessions[0].State == "running" {
			child = l.Sessions[0].SessionID
		}
	}
	runningInStore(t, c, child)
	c.Close()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	startDaemon(t, env)
	c2, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.NewSession(ctx, protocol.SessionNewParams{SessionID: "go-parent"}); err != nil {
		t.Fatal(err)
	}
	res, err := c2.Await(ctx, "go-parent", "sub-1")
	if err != nil || res.StopReason != "end_turn" {
		t.Fatalf("the parent's turn: %+v %v", res, err)
	}
	var l protocol.SessionListResult
	if err := c2.Call(ctx, protocol.MethodSessionList, protocol.SessionListParams{ParentSessionID: "go-parent"}, &l); err != nil || len(l.Sessions) != 1 || l.Sessions[0].SessionID != child {
		t.Fatalf("the parent's children after the restart: %+v %v (want only %s)", l, err, child)
	}
	var taskResults []string
	count := func(sid string) (completes, resumed int, kinds []string) {
		h, err := c2.History(ctx, protocol.SessionHistoryParams{SessionID: sid, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range h.Events {
			u, _ := protocol.ParseUpdate(raw)
			switch e := u.Event.(type) {
			case protocol.TurnCompleteEvent:
				completes++
			case protocol.TurnResumedEvent:
				resumed++
			case protocol.SubagentUpdateEvent:
				kinds = append(kinds, e.Subagent.State)
			case protocol.ToolResultEvent:
				if e.Name == "task" {
					taskResults = append(taskResults, e.RawOutput)
				}
			}
		}
		return
	}
	if done, resumed, _ := count(child); done != 1 || resumed != 1 {
		t.Fatalf("the child's history: %d turn_completes, %d turn_resumed", done, resumed)
	}
	done, resumed, states := count("go-parent")
	if done != 1 || resumed != 1 || strings.Join(states, " ") != "running running completed" {
		t.Fatalf("the parent's history: %d turn_completes, %d turn_resumed, children %v", done, resumed, states)
	}
	// One result of the task call: the continued child's answer.
	if len(taskResults) != 1 || !strings.Contains(taskResults[0], "The daemon stopped during this turn") || strings.Contains(taskResults[0], "interrupted by a daemon restart") {
		t.Fatalf("the parent's task call's results: %q", taskResults)
	}
}

// A background sub-agent cut by a kill -9 while its parent was idle goes
// on too: the next daemon gives it back to its parent (running), and its
// end reaches the parent as a background child's does, never as
// interrupted.
func TestBackgroundSubagentGoesOnAfterKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	cmd, _ := startDaemon(t, env)
	line := `/tool task {"description":"in the back","prompt":"/delay 300\nslow work here","background":true}`
	if code, out, errs := runCLI(t, env, "", "prompt", "--session", "bg-parent", "--cwd", t.TempDir(), line); code != 0 {
		t.Fatalf("starting the task: %d %q %q", code, out, errs)
	}
	ctx := context.Background()
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var l protocol.SessionListResult
	if err := c.Call(ctx, protocol.MethodSessionList, protocol.SessionListParams{ParentSessionID: "bg-parent"}, &l); err != nil || len(l.Sessions) != 1 {
		t.Fatalf("the child before the crash: %+v %v", l, err)
	}
	child := l.Sessions[0].SessionID
	runningInStore(t, c, child)
	c.Close()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	startDaemon(t, env)
	c2, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.NewSession(ctx, protocol.SessionNewParams{SessionID: "bg-parent"}); err != nil {
		t.Fatal(err)
	}
	var states []string
	for deadline := time.Now().Add(30 * time.Second); len(states) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child's end never reached its parent: %v", states)
		}
		states = nil
		for _, raw := range historyCount(t, c2, "bg-parent", `"type":"subagent_update"`, 1) {
			if u, err := protocol.ParseUpdate(raw); err == nil {
				if e, ok := u.Event.(protocol.SubagentUpdateEvent); ok {
					states = append(states, e.Subagent.State)
				}
			}
		}
	}
	if got := strings.Join(states, " "); got != "running running completed" {
		t.Fatalf("the parent's subagent_updates: %s", got)
	}
	code, out, errs := runCLI(t, env, "", "sessions", "export", "bg-parent")
	if code != 0 || !strings.Contains(out, "sub-agent "+child+" (in the back, agent default) completed: echo: [The daemon stopped") || strings.Contains(out, "interrupted") {
		t.Fatalf("the parent's export: %d %q %q", code, out, errs)
	}
}

// Fifty rounds of kill -9 with three prompts queued behind a running
// turn: after each restart the cut turn goes on and the three run once
// each, in the order they were queued (the store numbers inputs as they
// are first written; no clock decides).
func TestQueuedPromptsKeepTheirOrderAcrossKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	sock := endpointOf(dir)
	ctx := context.Background()
	cwd := t.TempDir()
	const rounds = 50
	for round := range rounds {
		sid := fmt.Sprintf("order-%02d", round)
		cmd, _ := startDaemon(t, env)
		c, err := client.Dial(ctx, sock, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: sid, Cwd: cwd, Mode: "code"}); err != nil {
			t.Fatal(err)
		}
		long := `/tool shell {"command":"sleep 60"}`
		go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: sid, Prompt: &long, ClientMessageID: sid + "-long"})
		historyCount(t, c, sid, `"type":"tool_call"`, 1)
		for i := 1; i <= 3; i++ {
			text, cmid := fmt.Sprintf("queued %d", i), fmt.Sprintf("%s-%d", sid, i)
			go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: sid, Prompt: &text, ClientMessageID: cmid})
			// Taken (its input_update queued committed) before the next.
			historyCount(t, c, sid, `"clientMessageId":"`+cmid+`","inputId"`, 1)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		c.Close()

		next, _ := startDaemon(t, env)
		c2, err := client.Dial(ctx, sock, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c2.NewSession(ctx, protocol.SessionNewParams{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			if r, err := c2.Await(ctx, sid, fmt.Sprintf("%s-%d", sid, i)); err != nil || r.StopReason != "end_turn" {
				t.Fatalf("round %d, prompt %d: %+v %v", round, i, r, err)
			}
		}
		h, err := c2.History(ctx, protocol.SessionHistoryParams{SessionID: sid, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		var ran []string
		for _, raw := range h.Events {
			u, err := protocol.ParseUpdate(raw)
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := u.Event.(protocol.UserMessageEvent); ok && strings.HasPrefix(e.Text, "queued ") {
				ran = append(ran, e.Text)
			}
		}
		if got := strings.Join(ran, ", "); got != "queued 1, queued 2, queued 3" {
			t.Fatalf("round %d: the queued prompts ran %s", round, got)
		}
		c2.Close()
		next.Process.Signal(syscall.SIGKILL)
		next.Wait()
	}
}
