package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

type crashUpdate struct {
	Seq   int64  `json:"seq"`
	Type  string `json:"type"`
	Text  string `json:"text"`
	Items []any  `json:"items"`
}

// dialUpdates connects and sends every session/crashUpdate to the channel.
func dialUpdates(t *testing.T, dir string) (*client.Client, chan crashUpdate) {
	t.Helper()
	ch := make(chan crashUpdate, 1<<16)
	h := jsonrpc.HandlerFunc(func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method == protocol.MethodSessionUpdate {
			var u crashUpdate
			json.Unmarshal(r.Params, &u)
			select {
			case ch <- u:
			default:
			}
		}
		return nil, nil
	})
	c, err := client.Dial(context.Background(), filepath.Join(dir, "data", "daemon.sock"), client.Options{Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ch
}

// kill -9 of a real daemon mid-turn loses at most the event being written:
// after a restart the session resumes with every event a client saw, seqs
// without gaps, and is marked interrupted.
func TestKill9MidTurnThenResume(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	noContinue(t, dir)
	cmd, _ := startDaemon(t, env)
	c, updates := dialUpdates(t, dir)
	ctx := context.Background()
	var nr protocol.SessionNewResult
	if err := c.Call(ctx, "session/new", map[string]any{"sessionId": "crash-1", "cwd": testdir.New(t)}, &nr); err != nil {
		t.Fatal(err)
	}
	go c.Call(ctx, "session/prompt", map[string]any{"sessionId": "crash-1", "prompt": "/delay 2\n/chunks 100000"}, nil)
	var seen int64
	for seen < 200 {
		select {
		case u := <-updates:
			if u.Seq != seen+1 {
				t.Fatalf("seq %d after %d", u.Seq, seen)
			}
			seen = u.Seq
		case <-time.After(10 * time.Second):
			t.Fatal("no events")
		}
	}
	// A prompt waits in the queue when the daemon dies.
	queued := make(chan error, 1)
	go func() {
		queued <- c.Call(ctx, "session/prompt", map[string]any{"sessionId": "crash-1", "prompt": "queued before the crash"}, nil)
	}()
	for u := range updates {
		if u.Type == "queue_update" && len(u.Items) == 1 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	<-c.Done()
	if err := <-queued; err == nil {
		t.Error("the queued prompt was answered as if it ran")
	}

	startDaemon(t, env)
	c2, updates2 := dialUpdates(t, dir)
	var list protocol.SessionListResult
	if err := c2.Call(ctx, "session/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].State != "interrupted" || list.Sessions[0].LastSeq < seen {
		t.Fatalf("after restart: %+v (client saw seq %d)", list.Sessions, seen)
	}
	var res protocol.SessionNewResult
	if err := c2.Call(ctx, "session/new", map[string]any{"sessionId": "crash-1"}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || !res.Interrupted || res.LastSeq < seen || res.MessageCount != 1 {
		t.Fatalf("resume: %+v (client saw seq %d)", res, seen)
	}
	// The resume says the queue emptied: in the history once committed;
	// the attached client is told when it is, unless it already was
	// (then the answer's lastSeq counts it).
	// (The queue_update before the crash, naming the queued prompt, is
	// not that one: only an empty one is.)
	emptied := false
	var probe protocol.SessionHistoryResult
	if err := c2.Call(ctx, "session/history", map[string]any{"sessionId": "crash-1", "sinceSeq": res.LastSeq - 1, "limit": 1}, &probe); err == nil && len(probe.Events) == 1 {
		var u crashUpdate
		json.Unmarshal(probe.Events[0], &u)
		emptied = u.Type == "queue_update" && len(u.Items) == 0
	}
	if !emptied {
		for u := range updates2 {
			if u.Type == "queue_update" && len(u.Items) == 0 {
				break
			}
		}
	}
	var h protocol.SessionHistoryResult
	if err := c2.Call(ctx, "session/history", map[string]any{"sessionId": "crash-1", "limit": 10000}, &h); err != nil {
		t.Fatal(err)
	}
	for i, raw := range h.Events {
		var u crashUpdate
		json.Unmarshal(raw, &u)
		if u.Seq != int64(i+1) {
			t.Fatalf("history event %d has seq %d", i, u.Seq)
		}
		if u.Type == "user_message" && u.Text == "queued before the crash" {
			t.Errorf("the prompt queued before the crash ran after it: %+v", u)
		}
		if i == 1 && (u.Type != "user_message" || u.Text != "/delay 2\n/chunks 100000") {
			t.Fatalf("second event (after its input_update) %+v", u)
		}
	}
	if int64(len(h.Events)) < res.LastSeq {
		t.Fatalf("history has %d events, lastSeq %d", len(h.Events), res.LastSeq)
	}
	// The queued prompt was not run, and the history says the queue
	// emptied (a queue_update of the resume, at or after lastSeq).
	var tail crashUpdate
	json.Unmarshal(h.Events[len(h.Events)-1], &tail)
	if tail.Type != "queue_update" || len(tail.Items) != 0 || tail.Seq <= seen {
		t.Errorf("the last event after the resume %+v, want an empty queue_update", tail)
	}
	// The session goes on where it stopped.
	var pr protocol.SessionPromptResult
	if err := c2.Call(ctx, "session/prompt", map[string]any{"sessionId": "crash-1", "prompt": "after the crash"}, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.StopReason != "end_turn" || pr.Content != "echo: after the crash" {
		t.Fatalf("prompt after resume: %+v", pr)
	}
	if err := c2.Call(ctx, "session/history", map[string]any{"sessionId": "crash-1", "sinceSeq": res.LastSeq, "limit": 1}, &h); err != nil {
		t.Fatal(err)
	}
	var next crashUpdate
	json.Unmarshal(h.Events[0], &next)
	if next.Seq != res.LastSeq+1 || (next.Type != "input_update" && next.Type != "queue_update") {
		t.Errorf("first event after resume %+v, want seq %d", next, res.LastSeq+1)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "zeroclaw.db")); err != nil {
		t.Error(err)
	}
}

// SIGTERM mid-turn: the prompt answers cancelled, the daemon exits 0.
func TestSIGTERMCancelsRunningTurn(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	cmd, logs := startDaemon(t, env)
	c, updates := dialUpdates(t, dir)
	ctx := context.Background()
	if err := c.Call(ctx, "session/new", map[string]any{"sessionId": "term-1", "cwd": testdir.New(t)}, nil); err != nil {
		t.Fatal(err)
	}
	res := make(chan protocol.SessionPromptResult, 1)
	go func() {
		var pr protocol.SessionPromptResult
		if err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": "term-1", "prompt": "/delay 5\n/chunks 100000"}, &pr); err != nil {
			t.Errorf("prompt: %v", err)
		}
		res <- pr
	}()
	<-updates
	<-updates
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case pr := <-res:
		if pr.StopReason != "cancelled" {
			t.Errorf("prompt answered %+v, want cancelled", pr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("prompt never answered")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("daemon exit: %v", err)
	}
	if t.Failed() {
		t.Logf("daemon log:\n%s", logs)
	}
}

// kill -9 of a real daemon in the middle of a rewind: every file is
// either as it was or as the rewind makes it, never torn; the next
// daemon finishes the rewind before anyone sees the session, and its
// history says so (rewind, recovered).
func TestKill9MidRewind(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	cwd, src := testdir.New(t), testdir.New(t)
	const n = 300
	old, next := map[string]string{}, map[string]string{}
	for i := range n {
		name := "f" + strconv.Itoa(i) + ".txt"
		old[name] = strings.Repeat("old "+strconv.Itoa(i)+"\n", 8000)
		next[name] = strings.Repeat("new "+strconv.Itoa(i)+"\n", 8000)
		os.WriteFile(filepath.Join(cwd, name), []byte(old[name]), 0o644)
		os.WriteFile(filepath.Join(src, name), []byte(next[name]), 0o644)
	}
	cmd, _ := startDaemon(t, env)
	c, _ := dialUpdates(t, dir)
	ctx := context.Background()
	if err := c.Call(ctx, "session/new", map[string]any{"sessionId": "rw-1", "cwd": cwd}, nil); err != nil {
		t.Fatal(err)
	}
	var pr protocol.SessionPromptResult
	line := `/tool shell {"command":"cp ` + src + `/*.txt ."}`
	if err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": "rw-1", "prompt": line}, &pr); err != nil || pr.StopReason != "end_turn" {
		t.Fatalf("the turn: %+v %v", pr, err)
	}
	journal := filepath.Join(dir, "data", "checkpoints", "rw-1", "rewind.journal")
	go c.Call(ctx, "session/rewind", map[string]any{"sessionId": "rw-1", "turn": 1}, nil)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := os.Stat(journal); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the rewind never started")
		}
		time.Sleep(50 * time.Microsecond)
	}
	// Files are restored in the order of their names: once the first is
	// back, the kill lands in the middle.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if b, _ := os.ReadFile(filepath.Join(cwd, "f0.txt")); string(b) == old["f0.txt"] {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("the rewind finished before the kill landed (%v): nothing was tested", err)
	}
	restored := 0
	for name := range old {
		b, _ := os.ReadFile(filepath.Join(cwd, name))
		switch string(b) {
		case old[name]:
			restored++
		case next[name]:
		default:
			t.Fatalf("%s is torn after the kill: %d bytes", name, len(b))
		}
	}
	t.Logf("the kill landed after %d of %d files", restored, n)

	startDaemon(t, env)
	c2, _ := dialUpdates(t, dir)
	for name := range old {
		if b, _ := os.ReadFile(filepath.Join(cwd, name)); string(b) != old[name] {
			t.Fatalf("%s was not restored by the next daemon", name)
		}
	}
	if _, err := os.Stat(journal); err == nil {
		t.Error("the journal outlived the recovery")
	}
	if err := c2.Call(ctx, "session/new", map[string]any{"sessionId": "rw-1"}, nil); err != nil {
		t.Fatal(err)
	}
	var h protocol.SessionHistoryResult
	if err := c2.Call(ctx, "session/history", map[string]any{"sessionId": "rw-1", "limit": 10000}, &h); err != nil {
		t.Fatal(err)
	}
	u, _ := protocol.ParseUpdate(h.Events[len(h.Events)-1])
	last, ok := u.Event.(protocol.RewindEvent)
	if !ok || !last.Recovered || last.Turn != 1 || len(last.Restored) != n {
		t.Errorf("the last event %s", h.Events[len(h.Events)-1])
	}
}
