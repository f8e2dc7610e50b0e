package rewind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/rewind"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// daemon is one Manager with the checkpoints joined, as the daemon
// joins them.
type daemon struct {
	*sessiontest.Daemon
	cps *rewind.Checkpoints
}

// newHarness is a store and the configuration: the echo provider as the
// default agent, in the full mode (tune changes it), commands
// unconfined.
func newHarness(t *testing.T, tune func(*config.Config)) *sessiontest.Harness {
	t.Helper()
	return sessiontest.New(t, func(cfg *config.Config) {
		a := cfg.Agents["default"]
		a.Risk = protocol.RiskFull
		cfg.Agents["default"] = a
		if tune != nil {
			tune(cfg)
		}
	})
}

// start starts a daemon's Manager on h's store, its checkpoints joined.
func start(t *testing.T, h *sessiontest.Harness) *daemon {
	t.Helper()
	d := &daemon{}
	d.Daemon = h.Start(t, func(m *session.Manager) { d.cps = rewind.New(m, h.Store, nil) })
	return d
}

// open attaches cl to session id in cwd.
func (d *daemon) open(t *testing.T, cl *session.Client, id, cwd string) {
	t.Helper()
	if _, err := d.M.New(context.Background(), cl, protocol.SessionNewParams{SessionID: id, Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
}

// A turn's files through the session: its checkpoint lists what it
// changed, the diff shows it, a rewind (which borrows the turn slot) puts
// the directory back and is refused while a turn runs, and its undo
// brings the change again.
func TestCheckpointRewindDiffInTheSession(t *testing.T) {
	d := start(t, newHarness(t, nil))
	ctx := context.Background()
	cl, c := sessiontest.Client(t, "c1", "")
	cwd := t.TempDir()
	d.open(t, cl, "cp", cwd)
	if r := d.Prompt(t, cl, "cp", `/tool write_file {"path":"made.txt","content":"hello"}`); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("turn: %+v", r)
	}
	cps, err := d.cps.List(ctx, cl, "cp")
	if err != nil || len(cps.Checkpoints) != 1 || len(cps.Checkpoints[0].Files) != 1 || cps.Checkpoints[0].Files[0].Change != "created" || cps.Checkpoints[0].Uncaptured == nil {
		t.Fatalf("checkpoints: %+v %v", cps, err)
	}
	if got := cps.Checkpoints[0].Title; got != "/tool write_file {\"path\":\"made.txt\",\"content\":\"hello\"}" {
		t.Errorf("the checkpoint's title: %q", got)
	}
	d2, err := d.cps.Diff(ctx, cl, protocol.SessionDiffParams{SessionID: "cp", Turn: 1})
	if err != nil || !strings.Contains(d2.Diff, "+hello") {
		t.Fatalf("diff: %+v %v", d2, err)
	}
	var pe *protocol.ParamsError
	if _, err := d.cps.Diff(ctx, cl, protocol.SessionDiffParams{SessionID: "cp", Turn: 9}); !errors.As(err, &pe) || pe.Field != "turn" {
		t.Errorf("the diff of no such turn: %v", err)
	}

	// While a turn runs, a rewind is refused: the slot is taken.
	done, err := d.M.Prompt(cl, "cp", "/delay 30\n/chunks 1000")
	if err != nil {
		t.Fatal(err)
	}
	sessiontest.Of(t, c, "cp", func(e protocol.UserMessageEvent) bool { return strings.HasPrefix(e.Text, "/delay") })
	sessiontest.Of[protocol.AgentMessageChunkEvent](t, c, "cp", nil)
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Turn: 1}); !errors.Is(err, session.ErrBusy) {
		t.Errorf("a rewind during a turn: %v", err)
	}
	if ok, _ := d.M.Cancel(cl, "cp"); !ok {
		t.Error("nothing to cancel")
	}
	<-done

	res, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Turn: 1})
	if err != nil || !res.Rewound || len(res.Removed) != 1 {
		t.Fatalf("rewind: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("the file is still there: %v", err)
	}
	ev := sessiontest.Of[protocol.RewindEvent](t, c, "cp", nil)
	if ev.Turn != 1 || ev.Undo || !ev.Files || !ev.Conversation || len(ev.Removed) != 1 {
		t.Errorf("the rewind's event: %+v", ev)
	}
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Turn: 7}); !errors.As(err, &pe) || pe.Field != "turn" {
		t.Errorf("a rewind to no such turn: %v", err)
	}
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp"}); !errors.As(err, &pe) || pe.Field != "turn" {
		t.Errorf("a rewind to no turn at all: %v", err)
	}
	undo, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Undo: true})
	if err != nil || !undo.Rewound {
		t.Fatalf("undo: %+v %v", undo, err)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "made.txt")); err != nil || string(b) != "hello" {
		t.Errorf("after the undo: %q %v", b, err)
	}
	if ev := sessiontest.Of[protocol.RewindEvent](t, c, "cp", nil); !ev.Undo || !ev.Files || !ev.Conversation {
		t.Errorf("the undo's event: %+v", ev)
	}
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "cp", Undo: true}); !errors.As(err, &pe) || pe.Field != "turn" {
		t.Errorf("an undo with none to undo: %v", err)
	}
	// A prompt that came while the slot was borrowed runs after.
	if r := d.Prompt(t, cl, "cp", "after"); r.Content != "echo: after" {
		t.Errorf("after the rewinds: %+v", r)
	}
	if _, err := d.cps.List(ctx, cl, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the checkpoints of no session: %v", err)
	}
}

// The conversation alone goes back (the files stay); a rewind to where
// the session is already changes nothing and says nothing; an undo gives
// the conversation back, unless it went on since.
func TestRewindTheConversationOnly(t *testing.T) {
	h := newHarness(t, nil)
	d := start(t, h)
	ctx := context.Background()
	cl, c := sessiontest.Client(t, "c1", "")
	cwd := t.TempDir()
	d.open(t, cl, "conv", cwd)
	d.Prompt(t, cl, "conv", "first")
	d.Prompt(t, cl, "conv", `/tool write_file {"path":"kept.txt","content":"x"}`)
	stored := func() int {
		t.Helper()
		msgs, err := h.Store.Messages(ctx, "conv")
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs)
	}
	all := stored()
	no := false
	res, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "conv", Turn: 2, Files: &no})
	if err != nil || !res.Rewound || len(res.Restored)+len(res.Removed) != 0 {
		t.Fatalf("rewind: %+v %v", res, err)
	}
	if ev := sessiontest.Of[protocol.RewindEvent](t, c, "conv", nil); ev.Files || !ev.Conversation || ev.Turn != 2 {
		t.Errorf("the rewind's event: %+v", ev)
	}
	if _, err := os.Stat(filepath.Join(cwd, "kept.txt")); err != nil {
		t.Errorf("the file went with the conversation: %v", err)
	}
	if n := stored(); n != 2 {
		t.Errorf("%d messages stored after the rewind, want the first turn's 2", n)
	}
	// Nothing left to cut, files untouched: done, and nothing appended.
	before := len(c.All(t))
	res, err = d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "conv", Turn: 2, Files: &no})
	if err != nil || !res.Rewound {
		t.Fatalf("a rewind of nothing: %+v %v", res, err)
	}
	for _, u := range c.All(t)[before:] {
		if _, ok := u.Event.(protocol.RewindEvent); ok {
			t.Errorf("a rewind of nothing was said: %+v", u)
		}
	}
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "conv", Undo: true}); err != nil {
		t.Fatal(err)
	}
	if ev := sessiontest.Of[protocol.RewindEvent](t, c, "conv", nil); !ev.Undo || ev.Files || !ev.Conversation {
		t.Errorf("the undo's event: %+v", ev)
	}
	if n := stored(); n != all {
		t.Errorf("%d messages stored after the undo, want all %d back", n, all)
	}
	// Cut again, and the conversation goes on: the undo leaves it.
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "conv", Turn: 2, Files: &no}); err != nil {
		t.Fatal(err)
	}
	d.Prompt(t, cl, "conv", "later")
	went := stored()
	if _, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "conv", Undo: true}); err != nil {
		t.Fatal(err)
	}
	if ev := sessiontest.Of(t, c, "conv", func(e protocol.RewindEvent) bool { return e.Undo }); ev.Conversation {
		t.Errorf("an undo after the conversation went on gave it back: %+v", ev)
	}
	if n := stored(); n != went {
		t.Errorf("%d messages stored after the undo, want the %d that went on", n, went)
	}
}

// With [checkpoints] enabled = false every method says so.
func TestCheckpointsOff(t *testing.T) {
	d := start(t, newHarness(t, func(cfg *config.Config) { cfg.Checkpoints.Enabled = false }))
	ctx := context.Background()
	cl, _ := sessiontest.Client(t, "c1", "")
	d.open(t, cl, "off", t.TempDir())
	d.Prompt(t, cl, "off", `/tool write_file {"path":"a.txt","content":"x"}`)
	_, err1 := d.cps.List(ctx, cl, "off")
	_, err2 := d.cps.Diff(ctx, cl, protocol.SessionDiffParams{SessionID: "off"})
	_, err3 := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "off", Turn: 1})
	for _, err := range []error{err1, err2, err3} {
		if err == nil || !strings.HasPrefix(err.Error(), "checkpoints are off") {
			t.Errorf("with the checkpoints off: %v", err)
		}
	}
}

// A background process the rewound turn started, still running, is
// listed and nothing is done; with force it is stopped and the rewind
// goes on.
func TestRewindStopsTheTurnsProcessesWhenForced(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sleep")
	}
	d := start(t, newHarness(t, nil))
	ctx := context.Background()
	cl, c := sessiontest.Client(t, "c1", "")
	cwd := t.TempDir()
	d.open(t, cl, "bg", cwd)
	d.Prompt(t, cl, "bg", `/tool shell {"command":"sleep 600","background":true}`+"\n"+`/tool write_file {"path":"w.txt","content":"x"}`)
	res, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "bg", Turn: 1})
	if err != nil || res.Rewound || len(res.Processes) != 1 || res.Processes[0].State != "running" {
		t.Fatalf("a rewind past a running process: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "w.txt")); err != nil {
		t.Errorf("refused, yet the file went: %v", err)
	}
	res, err = d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "bg", Turn: 1, Force: true})
	if err != nil || !res.Rewound {
		t.Fatalf("the forced rewind: %+v %v", res, err)
	}
	sessiontest.Of(t, c, "bg", func(e protocol.ProcessUpdateEvent) bool { return e.Process.State != "running" })
	if _, err := os.Stat(filepath.Join(cwd, "w.txt")); !os.IsNotExist(err) {
		t.Errorf("the forced rewind left the file: %v", err)
	}
}

// A rewind a crash cut (here: a file it could not put back, its journal
// left) is finished by the next daemon's Recover before any client sees
// the session: the files, the conversation, and a rewind event that says
// recovered. A journal of a session that is gone is left alone.
func TestRecoverFinishesAnInterruptedRewind(t *testing.T) {
	h := newHarness(t, nil)
	d := start(t, h)
	ctx := context.Background()
	cl, _ := sessiontest.Client(t, "c1", "")
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "made.txt"), []byte("old"), 0o644)
	d.open(t, cl, "rw", cwd)
	d.Prompt(t, cl, "rw", `/tool write_file {"path":"made.txt","content":"new"}`)
	// The place the rewind writes made.txt's old bytes to first is taken
	// (by a directory with a file in it): the rewind stops with its
	// journal written, as a crash would leave it.
	side := filepath.Join(cwd, ".made.txt.zeroclaw-rewind")
	os.MkdirAll(side, 0o755)
	os.WriteFile(filepath.Join(side, "in.txt"), []byte("in"), 0o644)
	if res, err := d.cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: "rw", Turn: 1}); err == nil {
		t.Fatalf("the rewind went through (%+v): nothing is left to recover", res)
	}
	journal := filepath.Join(h.CheckpointDir, "rw", "rewind.journal")
	if _, err := os.Stat(journal); err != nil {
		t.Fatalf("no journal left: %v", err)
	}
	d.Shutdown()
	os.RemoveAll(side)
	// A session that is gone with a journal of its own.
	os.MkdirAll(filepath.Join(h.CheckpointDir, "gone"), 0o755)
	os.WriteFile(filepath.Join(h.CheckpointDir, "gone", "rewind.journal"), []byte("{}"), 0o644)

	d2 := start(t, h)
	d2.cps.Recover(ctx)
	// What the recovery wrote is on disk once its daemon stopped; the
	// next one reads it.
	d2.Shutdown()
	if _, err := os.Stat(journal); !os.IsNotExist(err) {
		t.Errorf("the journal outlived the recovery: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, "made.txt")); err != nil || string(b) != "old" {
		t.Errorf("after the recovery: %q %v", b, err)
	}
	// The conversation went back to before turn 1: nothing of it is left.
	if msgs, err := h.Store.Messages(ctx, "rw"); err != nil || len(msgs) != 0 {
		t.Errorf("%d messages stored after the recovery (%v), want none", len(msgs), err)
	}
	cl2, c2 := sessiontest.Client(t, "c2", "")
	d3 := start(t, h)
	res, err := d3.M.New(ctx, cl2, protocol.SessionNewParams{SessionID: "rw"})
	if err != nil || res.Resumed != true {
		t.Fatalf("the recovered session: %+v %v", res, err)
	}
	hist, err := d3.M.Archive().History(ctx, protocol.SessionHistoryParams{SessionID: "rw", Limit: 100}, 1<<20)
	if err != nil || len(hist.Events) == 0 {
		t.Fatalf("history: %+v %v", hist, err)
	}
	u, err := protocol.ParseUpdate(hist.Events[len(hist.Events)-1])
	ev, ok := u.Event.(protocol.RewindEvent)
	if err != nil || !ok || !ev.Recovered || ev.Turn != 1 || !ev.Conversation {
		t.Errorf("the last event: %s", hist.Events[len(hist.Events)-1])
	}
	if r := d3.Prompt(t, cl2, "rw", "again"); r.StopReason != protocol.StopEndTurn {
		t.Errorf("a turn after the recovery: %+v", r)
	}
	if ev := sessiontest.Of[protocol.UserMessageEvent](t, c2, "rw", nil); ev.Text != "again" {
		t.Errorf("after the recovery: %+v", ev)
	}
}

// session/checkpoints is bounded whatever the turns did: a checkpoint
// lists its first files (filesOmitted counts the rest), and past the
// answer's bound the oldest checkpoints are left out (omitted), never
// the newest. Its bounds are lowered here to a turn's worth.
func TestCheckpointsListIsBounded(t *testing.T) {
	d := start(t, newHarness(t, nil))
	ctx := context.Background()
	cl, _ := sessiontest.Client(t, "c1", "")
	cwd := t.TempDir()
	d.open(t, cl, "cp", cwd)
	for _, p := range []string{
		`/tool write_file {"path":"one.txt","content":"1"}`,
		`/tool shell {"command":"echo a > a.txt; echo b > b.txt; echo c > c.txt"}`,
	} {
		if r := d.Prompt(t, cl, "cp", p); r.StopReason != protocol.StopEndTurn {
			t.Fatalf("turn: %+v", r)
		}
	}
	all, err := d.cps.List(ctx, cl, "cp")
	if err != nil || len(all.Checkpoints) != 2 || all.Omitted != 0 || len(all.Checkpoints[1].Files) != 3 || all.Checkpoints[1].FilesOmitted != 0 {
		t.Fatalf("checkpoints: %+v %v", all, err)
	}
	defer func(f, b int) { *rewind.ListMaxFiles, *rewind.ListMaxBytes = f, b }(*rewind.ListMaxFiles, *rewind.ListMaxBytes)
	*rewind.ListMaxFiles, *rewind.ListMaxBytes = 2, 1
	cut, err := d.cps.List(ctx, cl, "cp")
	if err != nil || len(cut.Checkpoints) != 1 || cut.Omitted != 1 {
		t.Fatalf("over the bound: %+v %v", cut, err)
	}
	if k := cut.Checkpoints[0]; k.Turn != 2 || len(k.Files) != 2 || k.FilesOmitted != 1 {
		t.Fatalf("the newest checkpoint, its files cut: %+v", k)
	}
}
