package processes_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/processes"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// fixture is a daemon's Manager (the echo provider as its agent, in the
// full mode, commands unconfined), a client attached to session "s",
// and that client's events.
type fixture struct {
	*sessiontest.Daemon
	cl *session.Client
	c  *sessiontest.Conn
}

// start starts the fixture; tune changes the configuration.
func start(t *testing.T, tune func(*config.Config)) *fixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	h := sessiontest.New(t, func(cfg *config.Config) {
		a := cfg.Agents["default"]
		a.Risk = protocol.RiskFull
		cfg.Agents["default"] = a
		if tune != nil {
			tune(cfg)
		}
	})
	f := &fixture{Daemon: h.Start(t, nil)}
	f.cl, f.c = sessiontest.Client(t, "c1", "")
	f.Open(t, f.cl, "s")
	return f
}

// run has the model start command in the background and returns the
// process, as its process_update told it.
func (f *fixture) run(t *testing.T, command string) protocol.ProcessInfo {
	t.Helper()
	if r := f.Prompt(t, f.cl, "s", `/tool shell {"command":"`+command+`","background":true}`); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("start %s: %+v", command, r)
	}
	return f.until(t, "", background.Running)
}

// until waits for the process_update of process id (any when "") in
// state.
func (f *fixture) until(t *testing.T, id, state string) protocol.ProcessInfo {
	t.Helper()
	return sessiontest.Of(t, f.c, "s", func(e protocol.ProcessUpdateEvent) bool {
		return (id == "" || e.Process.ID == id) && e.Process.State == state
	}).Process
}

// paramsError fails unless err is a *protocol.ParamsError of field.
func paramsError(t *testing.T, what string, err error, field string) *protocol.ParamsError {
	t.Helper()
	var pe *protocol.ParamsError
	if !errors.As(err, &pe) || pe.Field != field {
		t.Errorf("%s: %v, want invalid params of %s", what, err, field)
		return &protocol.ParamsError{}
	}
	return pe
}

// A background process the model started, as a client drives it: it
// is listed; the client types into it and follows its output (a read
// that waits for what comes next), reads a bounded part of it, kills it
// (told killed; a second kill finds it ended; a write then fails).
// Reads and writes are checked: a process not the session's, negative
// offsets, a bad signal, a session that is not live, a client not
// attached.
func TestBackgroundProcessesThroughTheMethods(t *testing.T) {
	f := start(t, nil)
	p := f.run(t, "cat")
	if l, err := processes.List(f.M, f.cl, "s"); err != nil || len(l.Processes) != 1 || l.Processes[0].ID != p.ID || l.Processes[0].Command != "cat" || l.Processes[0].State != background.Running {
		t.Fatalf("list: %+v %v", l, err)
	}
	if w, err := processes.Write(f.M, f.cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "hello\n"}); err != nil || w.Written != 6 {
		t.Fatalf("write: %+v %v", w, err)
	}
	var out string
	var next int64
	for !strings.Contains(out, "hello\n") {
		wait, err := processes.OutputWait(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: next, WaitMs: 20000})
		if err != nil {
			t.Fatal(err)
		}
		r := wait(context.Background())
		if r.State != background.Running || r.Dropped != 0 || r.Next == next {
			t.Fatalf("a wait answered with nothing new (it waits for output): %+v", r)
		}
		out += r.Output
		next = r.Next
	}
	if out != "hello\n" || next != 6 {
		t.Errorf("followed: %q to %d", out, next)
	}
	if r, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, MaxBytes: 3, PlainText: true}); err != nil || r.Output != "hel" || r.Next != 3 || r.State != background.Running || r.ExitCode != nil {
		t.Errorf("a bounded read: %+v %v", r, err)
	}
	if r, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: 4}); err != nil || r.Output != "o\n" || r.Next != 6 {
		t.Errorf("a read from an offset: %+v %v", r, err)
	}

	for _, bad := range []protocol.ProcessOutputParams{{Since: -1}, {MaxBytes: -1}, {WaitMs: -1}} {
		bad.SessionID, bad.ID = "s", p.ID
		_, err := processes.Output(f.M, f.cl, bad)
		pe := paramsError(t, "a negative read", err, "since")
		if pe.Reason != "since, maxBytes and waitMs may not be negative" {
			t.Errorf("a negative read: %q", pe.Reason)
		}
		_, err = processes.OutputWait(f.M, f.cl, bad)
		paramsError(t, "a negative wait", err, "since")
	}
	_, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: "proc_none"})
	if pe := paramsError(t, "read a process that is not the session's", err, "id"); pe.Reason != "no process proc_none in this session (process/list lists them)" {
		t.Errorf("no such process: %q", pe.Reason)
	}
	_, err = processes.OutputWait(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: "proc_none", WaitMs: 10})
	paramsError(t, "wait for a process that is not the session's", err, "id")
	_, err = processes.Write(f.M, f.cl, protocol.ProcessWriteParams{SessionID: "s", ID: "proc_none", Input: "x"})
	paramsError(t, "write to a process that is not the session's", err, "id")
	_, err = processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: "proc_none"})
	paramsError(t, "kill a process that is not the session's", err, "id")
	_, err = processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID, Signal: "SIGNOPE"})
	if pe := paramsError(t, "a bad signal", err, "signal"); !strings.Contains(pe.Reason, `signal "SIGNOPE"`) {
		t.Errorf("a bad signal: %q", pe.Reason)
	}

	if k, err := processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID}); err != nil || !k.Killed {
		t.Fatalf("kill: %+v %v", k, err)
	}
	f.until(t, p.ID, background.Killed)
	if k, err := processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID}); err != nil || k.Killed {
		t.Errorf("a second kill: %+v %v", k, err)
	}
	_, err = processes.Write(f.M, f.cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "late\n"})
	if pe := paramsError(t, "wrote to a process that ended", err, "id"); pe.Reason != p.ID+": the process has ended" {
		t.Errorf("a write after the end: %q", pe.Reason)
	}
	if r, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID}); err != nil || r.Output != "hello\n" || r.State != background.Killed {
		t.Errorf("read once killed: %+v %v", r, err)
	}
	if l, err := processes.List(f.M, f.cl, "s"); err != nil || len(l.Processes) != 1 || l.Processes[0].State != background.Killed || l.Processes[0].EndedAt == "" {
		t.Errorf("listed once killed: %+v %v", l, err)
	}

	// A session that is not live, and a client not attached to this one.
	var pe *protocol.ParamsError
	if _, err := processes.List(f.M, f.cl, "nope"); !errors.Is(err, session.ErrNotFound) || errors.As(err, &pe) {
		t.Errorf("the processes of no session: %v", err)
	}
	if _, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "nope", ID: p.ID}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a read in no session: %v", err)
	}
	other, _ := sessiontest.Client(t, "c2", "")
	if _, err := processes.List(f.M, other, "s"); !errors.Is(err, session.ErrForbidden) {
		t.Errorf("listed by a client not attached: %v", err)
	}
	if _, err := processes.Kill(f.M, other, protocol.ProcessKillParams{SessionID: "s", ID: p.ID}); !errors.Is(err, session.ErrForbidden) {
		t.Errorf("killed by a client not attached: %v", err)
	}
}

// A session that never ran a process lists none (an empty list, not
// null) and has none to read.
func TestNoProcesses(t *testing.T) {
	f := start(t, nil)
	l, err := processes.List(f.M, f.cl, "s")
	if err != nil || l.Processes == nil || len(l.Processes) != 0 {
		t.Fatalf("list: %+v %v", l, err)
	}
	_, err = processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: "p_0"})
	paramsError(t, "read in a session with no processes", err, "id")
}

// process/write asks the gate, with the client's actor: each actor
// the gate lets write types into the process, each other is refused
// (session.Refused, the gate's reason) and writes nothing.
func TestWriteAsksTheGate(t *testing.T) {
	f := start(t, nil)
	p := f.run(t, "cat")
	var want string
	for _, a := range gate.Actors {
		f.cl.SetActor(a)
		v := gate.Decide(gate.Request{Actor: a, Action: gate.Action{Kind: gate.ProcessWrite, Name: protocol.MethodProcessWrite}})
		w, err := processes.Write(f.M, f.cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: string(a) + "\n"})
		if v.Decision == gate.Deny {
			var rf *session.Refused
			if !errors.As(err, &rf) || rf.Why != v.Why || w != nil {
				t.Errorf("%s: %+v %v, want refused: %s", a, w, err, v.Why)
			}
			continue
		}
		if err != nil || w.Written != len(a)+1 {
			t.Errorf("%s: %+v %v", a, w, err)
		}
		want += string(a) + "\n"
	}
	if !strings.Contains(want, string(gate.User)) || strings.Contains(want, string(gate.Command)) {
		t.Fatalf("the gate lets write: %q (the user must, a command must not)", want)
	}
	f.cl.SetActor(gate.User)
	var got string
	for next := int64(0); len(got) < len(want); {
		wait, err := processes.OutputWait(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: next, WaitMs: 20000})
		if err != nil {
			t.Fatal(err)
		}
		r := wait(context.Background())
		if r.State != background.Running || r.Next == next {
			t.Fatalf("a wait answered with nothing new (it waits for output): %+v", r)
		}
		got += r.Output
		next = r.Next
	}
	if got != want {
		t.Errorf("the process read %q, want %q", got, want)
	}
	if k, err := processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID, Signal: "KILL"}); err != nil || !k.Killed {
		t.Errorf("kill: %+v %v", k, err)
	}
}

// A wait ends when the process has printed past since, when it has
// ended, after waitMs, or with its context; whichever, it answers with
// a read from since.
func TestOutputWaitEnds(t *testing.T) {
	f := start(t, nil)
	p := f.run(t, "cat")
	read := func(what string, since int64, waitMs int, ctx context.Context) *protocol.ProcessOutputResult {
		t.Helper()
		wait, err := processes.OutputWait(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: since, WaitMs: waitMs})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return wait(ctx)
	}
	if r := read("after waitMs", 0, 1, context.Background()); r.Output != "" || r.Next != 0 || r.State != background.Running {
		t.Errorf("a wait that ran out: %+v", r)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if r := read("with its context", 0, 20000, done); r.Output != "" || r.Next != 0 || r.State != background.Running {
		t.Errorf("a wait whose context ended: %+v", r)
	}
	if _, err := processes.Write(f.M, f.cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "abc\n"}); err != nil {
		t.Fatal(err)
	}
	var got string
	for next := int64(0); len(got) < 4; {
		r := read("output", next, 20000, context.Background())
		if r.Next == next {
			t.Fatalf("a wait answered with nothing new (it waits for output): %+v", r)
		}
		got += r.Output
		next = r.Next
	}
	if got != "abc\n" {
		t.Errorf("read %q", got)
	}
	// Output there already: the wait does not wait (its context ended
	// would answer the same, so give it none that ends).
	if r := read("output there", 1, 20000, context.Background()); r.Output != "bc\n" || r.Next != 4 {
		t.Errorf("a wait with output there: %+v", r)
	}
	if k, err := processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID, Signal: "INT"}); err != nil || !k.Killed {
		t.Fatalf("kill: %+v %v", k, err)
	}
	f.until(t, p.ID, background.Killed)
	// It has ended: a wait past its output answers at once.
	if r := read("once ended", 4, 20000, context.Background()); r.Output != "" || r.Next != 4 || r.State != background.Killed {
		t.Errorf("a wait once it ended: %+v", r)
	}
}

// A read is bounded to 64 KiB (maxBytes 0 or larger); one from before
// what the ring keeps says how much was dropped; one from past the end
// reads nothing from the end. An end of its own is read with its code.
func TestOutputBoundsAndDropped(t *testing.T) {
	const total = 100000 // 10,000 lines of 10 bytes
	t.Run("bounded", func(t *testing.T) {
		f := start(t, nil)
		p := f.run(t, "yes abcdefghi | head -n 10000")
		f.until(t, p.ID, background.Exited)
		for _, max := range []int{0, 1 << 20} {
			r, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, MaxBytes: max})
			if err != nil || len(r.Output) != 64<<10 || r.Next != 64<<10 || r.Dropped != 0 || !strings.HasPrefix(r.Output, "abcdefghi\n") {
				t.Errorf("maxBytes %d: %d bytes, next %d, dropped %d, %v", max, len(r.Output), r.Next, r.Dropped, err)
			}
			if r.State != background.Exited || r.ExitCode == nil || *r.ExitCode != 0 {
				t.Errorf("maxBytes %d: state %s, code %v", max, r.State, r.ExitCode)
			}
		}
		r, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: 64 << 10})
		if err != nil || len(r.Output) != total-64<<10 || r.Next != total {
			t.Errorf("the rest: %d bytes, next %d, %v", len(r.Output), r.Next, err)
		}
		r, err = processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: 1 << 40})
		if err != nil || r.Output != "" || r.Next != total || r.Dropped != 0 {
			t.Errorf("past the end: %+v %v", r, err)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		f := start(t, func(cfg *config.Config) { cfg.Tools.OutputRingBytes = 4096 })
		p := f.run(t, "yes abcdefghi | head -n 10000; exit 3")
		f.until(t, p.ID, background.Exited)
		r, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: 10})
		if err != nil || r.Dropped != total-4096-10 || len(r.Output) != 4096 || r.Next != total {
			t.Errorf("from before the ring: %d bytes, next %d, dropped %d, %v", len(r.Output), r.Next, r.Dropped, err)
		}
		if r.ExitCode == nil || *r.ExitCode != 3 {
			t.Errorf("its code: %v", r.ExitCode)
		}
		r, err = processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: total - 10})
		if err != nil || r.Dropped != 0 || r.Output != "abcdefghi\n" {
			t.Errorf("within the ring: %+v %v", r, err)
		}
		if l, err := processes.List(f.M, f.cl, "s"); err != nil || len(l.Processes) != 1 || l.Processes[0].OutputBytes != total {
			t.Errorf("list: %+v %v", l, err)
		}
	})
}

// plainText takes the terminal's escapes out of what a process printed.
func TestOutputPlainText(t *testing.T) {
	f := start(t, nil)
	p := f.run(t, `printf 'a\\033[31mred\\033[0m\\n'`)
	f.until(t, p.ID, background.Exited)
	raw, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID})
	if err != nil || raw.Output != "a\x1b[31mred\x1b[0m\n" {
		t.Errorf("raw: %q %v", raw.Output, err)
	}
	plain, err := processes.Output(f.M, f.cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, PlainText: true})
	if err != nil || plain.Output != "ared\n" || plain.Next != raw.Next {
		t.Errorf("plain: %+v %v (raw next %d)", plain, err, raw.Next)
	}
}

// process/list is bounded whatever the session ran: a command past 4096
// bytes is told cut (commandTruncated), and past the answer's bound
// the oldest ended processes are left out (omitted counts them), never
// a running one.
func TestListIsBounded(t *testing.T) {
	f := start(t, nil)
	long := ": " + strings.Repeat("x", 10000) + "; cat"
	p := f.run(t, long)
	for range 3 {
		q := f.run(t, "true")
		f.until(t, q.ID, background.Exited)
	}
	l, err := processes.List(f.M, f.cl, "s")
	if err != nil || len(l.Processes) != 4 || l.Omitted != 0 {
		t.Fatalf("list: %d processes, %d omitted, %v", len(l.Processes), l.Omitted, err)
	}
	if c := l.Processes[0]; c.ID != p.ID || !c.CommandTruncated || len(c.Command) != 4096 || !strings.HasPrefix(long, c.Command) {
		t.Fatalf("the long command listed: %d bytes, truncated %v", len(c.Command), c.CommandTruncated)
	}
	if l.Processes[1].CommandTruncated || l.Processes[1].Command != "true" {
		t.Fatalf("a short command listed: %+v", l.Processes[1])
	}
	defer func(n int) { *processes.ListMaxBytes = n }(*processes.ListMaxBytes)
	*processes.ListMaxBytes = 1
	l, err = processes.List(f.M, f.cl, "s")
	if err != nil || len(l.Processes) != 1 || l.Processes[0].ID != p.ID || l.Omitted != 3 {
		t.Fatalf("over the bound: %+v %v", l, err)
	}
	if _, err := processes.Kill(f.M, f.cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID}); err != nil {
		t.Fatal(err)
	}
}
