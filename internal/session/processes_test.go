package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/config"
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

// A background process the model started, as the session tells it: its
// start and its end told to every client (process_update) and listed
// (ProcessInfos, as session/get shows them); one that is killed is not
// told to the model, one that ends on its own is, before its next call.
// (The process methods, as a client calls them, are internal/processes'.)
func TestBackgroundProcessesToldToClientsAndModel(t *testing.T) {
	h := newHarnessWith(t, full, func(o *Options) { o.ProcessDir = t.TempDir() })
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	s, err := h.m.Lookup(cl, "s")
	if err != nil {
		t.Fatal(err)
	}
	if l := s.ProcessInfos(); l == nil || len(l) != 0 {
		t.Fatalf("a session that ran nothing has processes: %+v", s.ProcessInfos())
	}
	if r := h.prompt(t, cl, "s", `/tool shell {"command":"cat","background":true}`); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("start: %+v", r)
	}
	p := processUpdate(t, c, 0, "", background.Running)
	if l := s.ProcessInfos(); len(l) != 1 || l[0].ID != p.ID || l[0].Command != "cat" || l[0].State != background.Running {
		t.Fatalf("listed: %+v", l)
	}
	skip := len(c.events(t))
	s.ProcessTable().Get(p.ID).Kill(nil, 0)
	processUpdate(t, c, skip, p.ID, background.Killed)
	if l := s.ProcessInfos(); len(l) != 1 || l[0].State != background.Killed || l[0].EndedAt == "" {
		t.Errorf("listed once killed: %+v", l)
	}
	if n := s.Notices(); len(n) != 0 {
		t.Errorf("the model is told of a process that was killed: %+v", n)
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
	s, err := h.m.Lookup(cl, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ProcessTable().Get(p.ID).Write("go\n"); err != nil {
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
