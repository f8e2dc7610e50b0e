package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func full(cfg *config.Config) {
	a := cfg.Agents["default"]
	a.Risk = "full"
	cfg.Agents["default"] = a
}

// A turn's files through the session: its checkpoint lists what it
// changed, the diff shows it, a rewind (which borrows the turn slot) puts
// the directory back and is refused while a turn runs, and its undo
// brings the change again.
func TestCheckpointRewindDiffInTheSession(t *testing.T) {
	h := newHarnessWith(t, full, func(o *Options) { o.CheckpointDir = t.TempDir() })
	ctx := context.Background()
	cl, c := h.client(t, "c1")
	cwd := t.TempDir()
	if _, err := h.m.New(ctx, cl, protocol.SessionNewParams{SessionID: "cp", Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	if r := h.prompt(t, cl, "cp", `/tool write_file {"path":"made.txt","content":"hello"}`); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("turn: %+v", r)
	}
	cps, err := h.m.Checkpoints(ctx, cl, "cp")
	if err != nil || len(cps.Checkpoints) != 1 || len(cps.Checkpoints[0].Files) != 1 || cps.Checkpoints[0].Files[0].Change != "created" || cps.Checkpoints[0].Uncaptured == nil {
		t.Fatalf("checkpoints: %+v %v", cps, err)
	}
	d, err := h.m.Diff(ctx, cl, protocol.SessionDiffParams{SessionID: "cp", Turn: 1})
	if err != nil || !strings.Contains(d.Diff, "+hello") {
		t.Fatalf("diff: %+v %v", d, err)
	}
	if _, err := h.m.Diff(ctx, cl, protocol.SessionDiffParams{SessionID: "cp", Turn: 9}); err == nil {
		t.Error("the diff of no such turn")
	}

	// While a turn runs, a rewind is refused: the slot is taken.
	skip := len(c.events(t))
	done, err := h.m.Prompt(cl, "cp", "/delay 30\n/chunks 1000")
	if err != nil {
		t.Fatal(err)
	}
	waitFor[protocol.AgentMessageChunkEvent](t, c, skip)
	if _, err := h.m.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Turn: 1}); !errors.Is(err, ErrBusy) {
		t.Errorf("a rewind during a turn: %v", err)
	}
	if ok, _ := h.m.Cancel(cl, "cp"); !ok {
		t.Error("nothing to cancel")
	}
	<-done

	res, err := h.m.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Turn: 1})
	if err != nil || !res.Rewound || len(res.Removed) != 1 {
		t.Fatalf("rewind: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	if _, err := h.m.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Turn: 7}); err == nil {
		t.Error("a rewind to no such turn")
	}
	undo, err := h.m.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Undo: true})
	if err != nil || !undo.Rewound {
		t.Fatalf("undo: %+v %v", undo, err)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "made.txt")); err != nil || string(b) != "hello" {
		t.Errorf("after the undo: %q %v", b, err)
	}
	// A prompt that came while the slot was borrowed runs after.
	if r := h.prompt(t, cl, "cp", "after"); r.Content != "echo: after" {
		t.Errorf("after the rewinds: %+v", r)
	}
}

// The queue as its owner keeps it: prompts wait in order behind the
// running turn, one is removed by id, one moved into the turn as a steer
// (its caller gets the turn's answer), the rest cleared (answered
// cancelled); a withdrawn prompt never runs; closing answers what waits.
func TestQueueEdits(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "q")
	running, err := h.m.Prompt(cl, "q", "/delay 20\n/chunks 100000")
	if err != nil {
		t.Fatal(err)
	}
	waitFor[protocol.AgentMessageChunkEvent](t, c, 0)
	var waiting []*Pending
	for _, text := range []string{"one", "two", "three", "four"} {
		p, err := h.m.Submit(cl, "q", Input{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, p)
	}
	q, err := h.m.Queue(cl, "q")
	if err != nil || len(q.Items) != 4 || q.Items[0].Text != "one" || q.Items[0].ClientID != "c1" {
		t.Fatalf("queue: %+v %v", q, err)
	}
	if _, err := h.m.QueueRemove(cl, "q", "q_none"); err == nil {
		t.Error("removed a prompt that is not queued")
	}
	if r, err := h.m.QueueRemove(cl, "q", q.Items[0].ID); err != nil || r.Removed != 1 || len(r.Items) != 3 {
		t.Errorf("remove one: %+v %v", r, err)
	}
	if r := <-waiting[0].Done; r.StopReason != protocol.StopCancelled {
		t.Errorf("the removed prompt: %+v", r)
	}
	if st, err := h.m.QueueSteer(context.Background(), cl, "q", q.Items[1].ID, ""); err != nil || st.Outcome != protocol.SteerInjected {
		t.Errorf("queue/steer: %+v %v", st, err)
	}
	waiting[2].Withdraw()
	if r := <-waiting[2].Done; r.StopReason != protocol.StopCancelled {
		t.Errorf("the withdrawn prompt: %+v", r)
	}
	if r, err := h.m.QueueRemove(cl, "q", ""); err != nil || r.Removed != 1 || len(r.Items) != 0 {
		t.Errorf("clear: %+v %v", r, err)
	}
	h.m.Cancel(cl, "q")
	res := <-running
	if moved := <-waiting[1].Done; moved.TurnID != res.TurnID {
		t.Errorf("the prompt moved into the turn got %+v, the turn %+v", moved, res)
	}
	for _, ev := range c.events(t) {
		if u, ok := ev.Event.(protocol.UserMessageEvent); ok && (u.Text == "three" || u.Text == "four" || u.Text == "one") && !u.Steered {
			t.Errorf("a prompt taken out of the queue ran: %q", u.Text)
		}
	}

	// Closing answers what still waits, cancelled.
	running, _ = h.m.Prompt(cl, "q", "/delay 20\n/chunks 100000")
	waitFor[protocol.AgentMessageChunkEvent](t, c, len(c.events(t)))
	last, err := h.m.Submit(cl, "q", Input{Text: "never"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.m.Close(cl, "q"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-last.Done:
		if r.StopReason != protocol.StopCancelled {
			t.Errorf("a prompt queued at the close: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a prompt queued at the close was never answered")
	}
	<-running
}

// A reload puts the new config in force for the next turn; the config's
// permission rules are listed, and only stored answers may be revoked.
func TestReloadAndPermissions(t *testing.T) {
	h := newHarness(t, func(cfg *config.Config) {
		cfg.Permissions = []config.Permission{{Tool: "shell", Pattern: "git status", Decision: "allow"}}
	})
	cl, _ := h.client(t, "c1")
	h.open(t, cl, "r")
	if rules := h.m.Permissions(""); len(rules) != 1 || rules[0].Tool != "shell" {
		t.Errorf("rules: %+v", rules)
	}
	if ok, err := h.m.Revoke("ans_none"); ok || err != nil {
		t.Errorf("revoke with no store: %v %v", ok, err)
	}
	cfg := config.Default(func(string) string { return "" })
	a := cfg.Agents["default"]
	a.Model = "echo-2"
	cfg.Agents["default"] = a
	h.m.Reload(cfg)
	cr, err := h.m.Configure(context.Background(), cl, protocol.SessionConfigureParams{SessionID: "r"})
	if err != nil || cr.Model != "echo-2" {
		t.Errorf("after the reload: %+v %v", cr, err)
	}
	if info, err := h.m.AgentInfo("default"); err != nil || info.Model != "echo-2" {
		t.Errorf("agent info: %+v %v", info, err)
	}
	if _, err := h.m.AgentInfo("nobody"); err == nil {
		t.Error("the info of no agent")
	}
	if st := h.m.SandboxStatus(); st.Mode == "" {
		t.Errorf("sandbox status: %+v", st)
	}
}
