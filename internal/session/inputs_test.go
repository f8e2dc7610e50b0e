package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func steerText(s string) *string { return &s }

// A prompt's clientMessageId: a malformed one is refused; sent again
// while its turn runs, nothing more runs (the answer names the running
// turn); session/await answers once the turn ends (and is given up with
// its context); sent again after, the first one's result, from the store.
func TestClientMessageIDRunsOnceAndIsAwaited(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	ctx := context.Background()
	for _, bad := range []string{"has space", strings.Repeat("x", 129), "é"} {
		var pe *protocol.ParamsError
		if _, err := h.m.Submit(cl, "s", Input{Text: "x", ClientMessageID: bad}); !errors.As(err, &pe) || pe.Field != "clientMessageId" {
			t.Errorf("submit with clientMessageId %q: %v", bad, err)
		}
		if _, err := h.m.Await(ctx, cl, "s", bad); !errors.As(err, &pe) {
			t.Errorf("await %q: %v", bad, err)
		}
	}
	if _, err := h.m.Await(ctx, cl, "s", ""); err == nil {
		t.Error("await with no clientMessageId")
	}
	if _, err := h.m.Await(ctx, cl, "s", "never-sent"); err == nil || !strings.Contains(err.Error(), "no prompt") {
		t.Errorf("await of a prompt never sent: %v", err)
	}

	first, err := h.m.Submit(cl, "s", Input{Text: "/delay 20\n/chunks 100000", ClientMessageID: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor[protocol.AgentMessageChunkEvent](t, c, 0)
	running := ""
	for _, e := range c.events(t) {
		if _, ok := e.Event.(protocol.UserMessageEvent); ok {
			running = e.TurnID
		}
	}
	again, err := h.m.Submit(cl, "s", Input{Text: "/delay 20\n/chunks 100000", ClientMessageID: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := <-again.Done; !r.Duplicate || r.TurnID != running || r.StopReason != "" {
		t.Errorf("sent again while it runs: %+v (running %s)", r, running)
	}
	if q, _ := h.m.Queue(cl, "s"); len(q.Items) != 0 {
		t.Errorf("sent again, it was queued: %+v", q.Items)
	}
	// An await given up returns with its context's error.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.m.Await(gone, cl, "s", "k1"); !errors.Is(err, context.Canceled) {
		t.Errorf("an await given up: %v", err)
	}
	awaited := make(chan *protocol.SessionPromptResult, 1)
	go func() {
		r, err := h.m.Await(ctx, cl, "s", "k1")
		if err != nil {
			t.Error(err)
		}
		awaited <- r
	}()
	h.m.Cancel(cl, "s")
	res := <-first.Done
	if res.StopReason != protocol.StopCancelled || res.TurnID != running {
		t.Fatalf("the first: %+v", res)
	}
	if r := <-awaited; r == nil || r.TurnID != res.TurnID || r.StopReason != res.StopReason || r.InputID != res.InputID {
		t.Errorf("awaited %+v, the prompt's result %+v", r, res)
	}
	p, err := h.m.Submit(cl, "s", Input{Text: "anything", ClientMessageID: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	if r := <-p.Done; !r.Duplicate || r.TurnID != res.TurnID || r.StopReason != protocol.StopCancelled {
		t.Errorf("sent again after its end: %+v", r)
	}
	for _, e := range c.events(t) {
		if u, ok := e.Event.(protocol.UserMessageEvent); ok && u.Text == "anything" {
			t.Error("a prompt sent again ran")
		}
	}
	if r, err := h.m.Await(ctx, cl, "s", "k1"); err != nil || r.TurnID != res.TurnID {
		t.Errorf("await after the end: %+v %v", r, err)
	}
}

// session/steer: checked first; with no turn running it does nothing
// unless asked to start one; into a running turn it is injected once
// (sent again: the first one's outcome, duplicate), only into the turn
// expected; a queued prompt named by its clientMessageId moves into the
// turn once, and one that started its own turn cannot.
func TestSteersAndTheirClientMessageIDs(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	ctx := context.Background()
	steer := func(p protocol.SessionSteerParams) *protocol.SessionSteerResult {
		t.Helper()
		p.SessionID = "s"
		r, err := h.m.Steer(ctx, cl, p)
		if err != nil {
			t.Fatalf("steer %+v: %v", p, err)
		}
		return r
	}
	if _, err := h.m.Steer(ctx, cl, protocol.SessionSteerParams{SessionID: "s", Prompt: steerText("  ")}); err == nil {
		t.Error("an empty steer")
	}
	if _, err := h.m.Steer(ctx, cl, protocol.SessionSteerParams{SessionID: "s", Prompt: steerText("x"), IdleBehavior: "later"}); err == nil {
		t.Error("a bad idleBehavior")
	}
	if _, err := h.m.Steer(ctx, cl, protocol.SessionSteerParams{SessionID: "s", Prompt: steerText("x"), ClientMessageID: "a b"}); err == nil {
		t.Error("a bad clientMessageId")
	}
	// Idle: nothing, and not remembered (sent again, tried again).
	for range 2 {
		if r := steer(protocol.SessionSteerParams{Prompt: steerText("idle"), ClientMessageID: "st0"}); r.Outcome != protocol.SteerPromptRequired || r.Duplicate {
			t.Errorf("an idle steer: %+v", r)
		}
	}
	// Idle, asked to start: a turn of its own, once.
	started := steer(protocol.SessionSteerParams{Prompt: steerText("start me"), ClientMessageID: "st1", IdleBehavior: "start"})
	if started.Outcome != protocol.SteerStartedNewTurn || started.InputID == "" {
		t.Errorf("a steer that starts: %+v", started)
	}
	if r := await(t, h, cl, "s", "st1"); r.Content != "echo: start me" {
		t.Errorf("the turn the steer started: %+v", r)
	}
	if r := steer(protocol.SessionSteerParams{Prompt: steerText("start me"), ClientMessageID: "st1", IdleBehavior: "start"}); !r.Duplicate || r.Outcome != protocol.SteerStartedNewTurn {
		t.Errorf("the starting steer sent again: %+v", r)
	}

	skip := len(c.events(t))
	done, err := h.m.Submit(cl, "s", Input{Text: "/delay 20\n/chunks 100000", ClientMessageID: "long"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor[protocol.AgentMessageChunkEvent](t, c, skip)
	queued, err := h.m.Submit(cl, "s", Input{Text: "move me", ClientMessageID: "kq"})
	if err != nil {
		t.Fatal(err)
	}
	in := steer(protocol.SessionSteerParams{Prompt: steerText("look here"), ClientMessageID: "st2"})
	if in.Outcome != protocol.SteerInjected || in.TurnID == "" {
		t.Fatalf("a steer into the turn: %+v", in)
	}
	if r := steer(protocol.SessionSteerParams{Prompt: steerText("look here"), ClientMessageID: "st2"}); !r.Duplicate || r.Outcome != protocol.SteerInjected || r.TurnID != in.TurnID || r.InputID != in.InputID {
		t.Errorf("the steer sent again: %+v, first %+v", r, in)
	}
	var tm *TurnMismatch
	if _, err := h.m.Steer(ctx, cl, protocol.SessionSteerParams{SessionID: "s", Prompt: steerText("x"), ExpectedTurnID: "turn_other"}); !errors.As(err, &tm) || !errors.Is(err, ErrBusy) || tm.Running != in.TurnID || !strings.Contains(err.Error(), in.TurnID) {
		t.Errorf("a steer for another turn: %v", err)
	}
	if _, err := h.m.QueueSteer(ctx, cl, "s", "", "nobody"); err == nil {
		t.Error("moved a prompt never sent")
	}
	if _, err := h.m.QueueSteer(ctx, cl, "s", "", "long"); err == nil || !strings.Contains(err.Error(), "started its own turn") {
		t.Errorf("moved the running prompt: %v", err)
	}
	if r, err := h.m.QueueSteer(ctx, cl, "s", "", "kq"); err != nil || r.Outcome != protocol.SteerInjected || r.TurnID != in.TurnID {
		t.Errorf("moved by clientMessageId: %+v %v", r, err)
	}
	if r, err := h.m.QueueSteer(ctx, cl, "s", "", "kq"); err != nil || !r.Duplicate || r.Outcome != protocol.SteerInjected {
		t.Errorf("moved again: %+v %v", r, err)
	}
	h.m.Cancel(cl, "s")
	res := <-done.Done
	if r := <-queued.Done; r.TurnID != res.TurnID {
		t.Errorf("the moved prompt's answer %+v, the turn's %+v", r, res)
	}
	// Once the turn ended, the moved prompt is still answered by its
	// move, from the store.
	if r, err := h.m.QueueSteer(ctx, cl, "s", "", "kq"); err != nil || !r.Duplicate || r.Outcome != protocol.SteerInjected {
		t.Errorf("moved again after the turn: %+v %v", r, err)
	}
	if r := steer(protocol.SessionSteerParams{Prompt: steerText("look here"), ClientMessageID: "st2"}); !r.Duplicate || r.Outcome != protocol.SteerInjected || r.TurnID != in.TurnID {
		t.Errorf("the steer sent again after the turn: %+v", r)
	}
}

func await(t *testing.T, h *harness, cl *Client, sid, cmid string) *protocol.SessionPromptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard, not a measure
	defer cancel()
	r, err := h.m.Await(ctx, cl, sid, cmid)
	if err != nil {
		t.Fatalf("await %s: %v", cmid, err)
	}
	return r
}
