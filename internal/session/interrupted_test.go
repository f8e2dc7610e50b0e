package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
)

// With [daemon] continue_interrupted off, nothing goes on: when the
// session is next loaded its open inputs end, each answered (the cut
// turn interrupted, the queued prompt discarded), which await says; no
// turn runs.
func TestInterruptedInputsEndWhenNotContinued(t *testing.T) {
	h := sessiontest.New(t, func(c *config.Config) { c.Daemon.ContinueInterrupted = false })
	h.DeadDaemon(t, 1)
	d := h.Start(t, nil)
	cl, _ := sessiontest.Client(t, "c2", "")
	d.Open(t, cl, "c")
	h.Store.Sync() // see TestAwaitRightAfterTheResumeThatEndsTheInputs
	cut := d.Await(t, cl, "c", "k-cut")
	if cut.StopReason != protocol.StopInterrupted || cut.TurnID != "turn_cut" || cut.Error == nil || !strings.HasPrefix(cut.Error.Message, "interrupted") {
		t.Errorf("the cut turn: %+v", cut)
	}
	q := d.Await(t, cl, "c", "k-queued")
	if q.StopReason != protocol.StopInterrupted || q.Error == nil || !strings.HasPrefix(q.Error.Message, "discarded") {
		t.Errorf("the queued prompt: %+v", q)
	}
	states := map[string]string{}
	for _, u := range h.StoredEvents(t, "c") {
		if e, ok := u.Event.(protocol.InputUpdateEvent); ok {
			states[e.ClientMessageID] = e.State
		}
		if e, ok := u.Event.(protocol.UserMessageEvent); ok && e.Text == "queued behind it" {
			t.Error("the queued prompt ran")
		}
	}
	if states["k-cut"] != protocol.InputCancelled || states["k-queued"] != protocol.InputDiscarded {
		t.Errorf("the inputs' last states: %v", states)
	}
}

// The resume that ends a dead daemon's inputs (interruptInputs) waits
// for their ends to be stored: a client that awaits one right after
// session/new resumed the session gets its result (interrupted), never
// "it has no result to wait for" from a row not yet written.
func TestAwaitRightAfterTheResumeThatEndsTheInputs(t *testing.T) {
	for range 20 {
		h := sessiontest.New(t, func(c *config.Config) { c.Daemon.ContinueInterrupted = false })
		h.DeadDaemon(t, 1)
		d := h.Start(t, nil)
		cl, _ := sessiontest.Client(t, "c2", "")
		d.Open(t, cl, "c")
		if r, err := d.M.Await(context.Background(), cl, "c", "k-cut"); err != nil || r.StopReason != protocol.StopInterrupted {
			t.Fatalf("await right after the resume: %+v %v", r, err)
		}
	}
}
