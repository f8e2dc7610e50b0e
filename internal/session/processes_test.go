package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// processUpdate waits for the process_update of process id (any id
// when "") in state, after the first skip events.
func processUpdate(t *testing.T, c *conn, skip int, id, state string) protocol.ProcessInfo {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		evs := c.events(t)
		for _, e := range evs[min(skip, len(evs)):] {
			if u, ok := e.Event.(protocol.ProcessUpdateEvent); ok && (id == "" || u.Process.ID == id) && u.Process.State == state {
				return u.Process
			}
		}
		select {
		case <-c.pending:
		case <-deadline:
			t.Fatalf("no process_update of %q in state %s", id, state)
		}
	}
}

// A background process the model started, as a client drives it: it
// is told (process_update) and listed; the client types into it and
// follows its output (a read that waits for what comes next), kills it
// (told killed; a second kill finds it ended); a process that ends on
// its own is told to the model before its next call. Reads and writes
// are checked: a process not the session's, a negative offset, a bad
// signal, and a writer the gate refuses.
func TestBackgroundProcessesThroughTheMethods(t *testing.T) {
	h := newHarnessWith(t, full, func(o *Options) { o.ProcessDir = t.TempDir() })
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	if r := h.prompt(t, cl, "s", `/tool shell {"command":"cat","background":true}`); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("start: %+v", r)
	}
	p := processUpdate(t, c, 0, "", background.Running)
	if l, err := h.m.ProcessList(cl, "s"); err != nil || len(l.Processes) != 1 || l.Processes[0].ID != p.ID || l.Processes[0].Command != "cat" {
		t.Fatalf("list: %+v %v", l, err)
	}
	if w, err := h.m.ProcessWrite(cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "hello\n"}); err != nil || w.Written != 6 {
		t.Fatalf("write: %+v %v", w, err)
	}
	var out string
	var next int64
	for !strings.Contains(out, "hello\n") {
		wait, err := h.m.ProcessOutputWait(cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: next, WaitMs: 20000})
		if err != nil {
			t.Fatal(err)
		}
		r := wait(context.Background())
		if r.State != background.Running {
			t.Fatalf("output: %+v", r)
		}
		out += r.Output
		next = r.Next
	}
	if r, err := h.m.ProcessOutput(cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, MaxBytes: 3, PlainText: true}); err != nil || r.Output != "hel" || r.Next != 3 {
		t.Errorf("a bounded read: %+v %v", r, err)
	}
	if _, err := h.m.ProcessOutput(cl, protocol.ProcessOutputParams{SessionID: "s", ID: p.ID, Since: -1}); err == nil {
		t.Error("a negative offset was taken")
	}
	if _, err := h.m.ProcessOutput(cl, protocol.ProcessOutputParams{SessionID: "s", ID: "proc_none"}); err == nil {
		t.Error("read a process that is not the session's")
	}
	bot, _ := h.client(t, "c2")
	bot.SetActor(gate.Command)
	h.open(t, bot, "s")
	if _, err := h.m.ProcessWrite(bot, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "x"}); err == nil {
		t.Error("a command's client wrote to the process")
	}
	if _, err := h.m.ProcessKill(cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID, Signal: "SIGNOPE"}); err == nil {
		t.Error("a bad signal was taken")
	}
	skip := len(c.events(t))
	if k, err := h.m.ProcessKill(cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID}); err != nil || !k.Killed {
		t.Fatalf("kill: %+v %v", k, err)
	}
	processUpdate(t, c, skip, p.ID, background.Killed)
	if k, err := h.m.ProcessKill(cl, protocol.ProcessKillParams{SessionID: "s", ID: p.ID}); err != nil || k.Killed {
		t.Errorf("a second kill: %+v %v", k, err)
	}
	if _, err := h.m.ProcessWrite(cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "late\n"}); err == nil {
		t.Error("wrote to a process that ended")
	}

	// One that ends on its own: the model hears of it before its next
	// call (a notice in the transcript before the next prompt).
	skip = len(c.events(t))
	h.prompt(t, cl, "s", `/tool shell {"command":"echo done-now","background":true}`)
	ended := processUpdate(t, c, skip, "", background.Exited)
	if ended.ExitCode == nil || *ended.ExitCode != 0 {
		t.Errorf("the process that ended: %+v", ended)
	}
	h.prompt(t, cl, "s", "next")
	raw, _ := h.st.Messages(context.Background(), "s")
	var told bool
	for _, b := range raw {
		told = told || strings.Contains(string(b), "[background process "+ended.ID+" (echo done-now) exited with exit code 0; its last output:\\ndone-now")
	}
	if !told {
		t.Error("the model was not told of the process's end")
	}
	var pe *protocol.ParamsError
	if _, err := h.m.ProcessList(cl, "nope"); err == nil || errors.As(err, &pe) {
		t.Errorf("the processes of no session: %v", err)
	}
}

// With [tools] wake_on_exit, a process that ends while its session is
// idle wakes it: a turn of its own tells the model.
func TestProcessEndWakesAnIdleSession(t *testing.T) {
	h := newHarness(t, func(cfg *config.Config) {
		full(cfg)
		cfg.Tools.WakeOnExit = true
	})
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	h.prompt(t, cl, "s", `/tool shell {"command":"read x; echo got $x","background":true}`)
	p := processUpdate(t, c, 0, "", background.Running)
	skip := len(c.events(t))
	if _, err := h.m.ProcessWrite(cl, protocol.ProcessWriteParams{SessionID: "s", ID: p.ID, Input: "go\n"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for woke := false; !woke; {
		for _, e := range c.events(t)[skip:] {
			if done, ok := e.Event.(protocol.TurnCompleteEvent); ok && strings.Contains(done.Content, "[background process "+p.ID) && strings.Contains(done.Content, "got go") {
				woke = true
			}
		}
		if !woke {
			select {
			case <-c.pending:
			case <-deadline:
				t.Fatal("no turn told the model of the process's end")
			}
		}
	}
}
