package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// committed waits for one store write, given its after callback.
func committedWrite(t *testing.T, write func(after func(error))) {
	t.Helper()
	ch := make(chan error, 1)
	write(func(err error) { ch <- err })
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// deadDaemon leaves in st what a daemon killed mid-turn leaves: session
// "c" (one turn ended), then a turn (id cutTurn, attempts made so far:
// attempts) claimed with its user_message "go on with it" (cmid k-cut)
// and its transcript message, the first words of the model's reply
// streamed, and a prompt (cmid k-queued) queued behind it. Nothing of
// its end is stored.
func deadDaemon(t *testing.T, st *store.Store, attempts int) {
	t.Helper()
	ctx := context.Background()
	cfg := config.Default(func(string) string { return "" })
	a, err := NewManager(Options{Config: cfg, Store: st, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	cl := NewClient(newConn())
	cl.SetIdentity("c1", "", false, 0)
	if _, err := a.New(ctx, cl, protocol.SessionNewParams{SessionID: "c", Cwd: t.TempDir(), KeepSiblings: true}); err != nil {
		t.Fatal(err)
	}
	done, err := a.Prompt(cl, "c", "first")
	if err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.StopReason != protocol.StopEndTurn {
		t.Fatalf("the first turn: %+v", r)
	}
	cl.Close()
	a.Shutdown(ctx)
	st.Sync()
	rec, err := st.GetSession(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	seq := rec.LastSeq
	event := func(typ string, body map[string]any) store.Event {
		seq++
		body["sessionId"], body["seq"], body["type"] = "c", seq, typ
		b, _ := json.Marshal(body)
		return store.Event{Seq: seq, Type: typ, Body: b}
	}
	const turn = "turn_cut"
	committedWrite(t, func(after func(error)) {
		st.AppendEvent("c", event("input_update", map[string]any{"turnId": turn, "clientMessageId": "k-cut", "inputId": "in_cut", "state": "started"}), after)
	})
	committedWrite(t, func(after func(error)) {
		st.AppendEventWithInput("c", event("user_message", map[string]any{"turnId": turn, "text": "go on with it", "clientId": "c1"}),
			store.Input{ID: "in_cut", ClientMessageID: "k-cut", Kind: kindPrompt, State: protocol.InputStarted, TurnID: turn, Attempts: attempts,
				Prompt: []byte(`{"text":"go on with it"}`)}, after)
	})
	committedWrite(t, func(after func(error)) {
		st.AppendMessage("c", rec.MessageCount, []byte(`{"role":"user","text":"go on with it"}`), after)
	})
	for _, w := range []string{"half ", "a "} {
		committedWrite(t, func(after func(error)) {
			st.AppendEvent("c", event("agent_message_chunk", map[string]any{"turnId": turn, "text": w}), after)
		})
	}
	committedWrite(t, func(after func(error)) {
		st.PutInput("c", store.Input{ID: "in_queued", ClientMessageID: "k-queued", Kind: kindPrompt, State: protocol.InputQueued,
			Prompt: []byte(`{"text":"queued behind it"}`)}, after)
	})
	committedWrite(t, func(after func(error)) {
		st.AppendEvent("c", event("input_update", map[string]any{"clientMessageId": "k-queued", "inputId": "in_queued", "state": "queued"}), after)
	})
}

// storedEvents are the session's stored events, parsed.
func storedEvents(t *testing.T, st *store.Store, sid string) []protocol.SessionUpdate {
	t.Helper()
	st.Sync()
	evs, err := st.Events(context.Background(), sid, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []protocol.SessionUpdate
	for _, e := range evs {
		u, err := protocol.ParseUpdate(e.Body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func await(t *testing.T, h *harness, cl *Client, sid, cmid string) *protocol.SessionPromptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := h.m.Await(ctx, cl, sid, cmid)
	if err != nil {
		t.Fatalf("await %s: %v", cmid, err)
	}
	return r
}

// A daemon that finds a dead one's open inputs goes on with them: the
// cut turn under its id (turn_interrupted, turn_resumed attempt 2, the
// words the model had streamed kept as said, the model called again),
// then the prompt queued behind it, once; a client that comes back with
// their clientMessageIds gets their results, and one that sends them
// again runs nothing.
func TestContinueInterruptedGoesOnWithTheCutTurnAndTheQueue(t *testing.T) {
	h := newHarness(t, nil)
	deadDaemon(t, h.st, 1)
	h.m.ContinueInterrupted(context.Background())
	cl, _ := h.client(t, "c2")
	if res := h.open(t, cl, "c"); res.SessionID != "c" {
		t.Fatalf("attach: %+v", res)
	}
	cut := await(t, h, cl, "c", "k-cut")
	if cut.TurnID != "turn_cut" || cut.StopReason != protocol.StopEndTurn || !strings.Contains(cut.Content, "The daemon stopped during this turn") {
		t.Errorf("the cut turn: %+v", cut)
	}
	queued := await(t, h, cl, "c", "k-queued")
	if queued.StopReason != protocol.StopEndTurn || queued.Content != "echo: queued behind it" || queued.TurnID == "turn_cut" {
		t.Errorf("the queued prompt: %+v", queued)
	}
	var interrupted, resumed, completes, queuedRuns int
	for _, u := range storedEvents(t, h.st, "c") {
		switch e := u.Event.(type) {
		case protocol.TurnInterruptedEvent:
			interrupted++
			if u.TurnID != "turn_cut" || e.Reason != "daemon_exit" {
				t.Errorf("turn_interrupted: %+v %+v", u.EventHeader, e)
			}
		case protocol.TurnResumedEvent:
			resumed++
			if u.TurnID != "turn_cut" || e.Attempt != 2 {
				t.Errorf("turn_resumed: %+v %+v", u.EventHeader, e)
			}
		case protocol.TurnCompleteEvent:
			completes++
		case protocol.UserMessageEvent:
			if e.Text == "queued behind it" {
				queuedRuns++
			}
		}
	}
	if interrupted != 1 || resumed != 1 || completes != 3 || queuedRuns != 1 {
		t.Errorf("interrupted %d, resumed %d, turns completed %d, the queued prompt ran %d times", interrupted, resumed, completes, queuedRuns)
	}
	// What the model had said when the daemon died is in the transcript.
	raw, _ := h.st.Messages(context.Background(), "c")
	var said bool
	for _, b := range raw {
		said = said || strings.Contains(string(b), `"text":"half a "`)
	}
	if !said {
		t.Errorf("the partial reply is not in the transcript: %d messages", len(raw))
	}
	// Sent again, nothing runs again: the first one's result.
	p, err := h.m.Submit(cl, "c", Input{Text: "queued behind it", ClientMessageID: "k-queued"})
	if err != nil {
		t.Fatal(err)
	}
	if r := <-p.Done; !r.Duplicate || r.TurnID != queued.TurnID || r.Content != queued.Content {
		t.Errorf("sent again: %+v", r)
	}
}

// A turn the daemon died in more often than [daemon] continue_attempts
// allows is not continued: it ends failed, saying so; what was queued
// behind it still runs.
func TestContinueInterruptedGivesUpPastTheAttempts(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Daemon.ContinueAttempts = 1 })
	deadDaemon(t, h.st, 2)
	h.m.ContinueInterrupted(context.Background())
	cl, _ := h.client(t, "c2")
	h.open(t, cl, "c")
	cut := await(t, h, cl, "c", "k-cut")
	if cut.StopReason != protocol.StopError || cut.Error == nil || !strings.Contains(cut.Error.Message, "continue_attempts = 1") {
		t.Errorf("the cut turn past its attempts: %+v %+v", cut, cut.Error)
	}
	if q := await(t, h, cl, "c", "k-queued"); q.Content != "echo: queued behind it" {
		t.Errorf("the queued prompt: %+v", q)
	}
	for _, u := range storedEvents(t, h.st, "c") {
		if _, ok := u.Event.(protocol.TurnResumedEvent); ok {
			t.Errorf("the turn was resumed: %+v", u)
		}
	}
}

// With [daemon] continue_interrupted off, nothing goes on: when the
// session is next loaded its open inputs end, each answered (the cut
// turn interrupted, the queued prompt discarded), which await says; no
// turn runs.
func TestInterruptedInputsEndWhenNotContinued(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Daemon.ContinueInterrupted = false })
	deadDaemon(t, h.st, 1)
	h.m.ContinueInterrupted(context.Background()) // does nothing
	if len(h.m.Summaries()) != 0 {
		t.Fatalf("sessions loaded: %+v", h.m.Summaries())
	}
	cl, _ := h.client(t, "c2")
	h.open(t, cl, "c")
	h.st.Sync() // see TestAwaitRightAfterTheResumeThatEndsTheInputs
	cut := await(t, h, cl, "c", "k-cut")
	if cut.StopReason != protocol.StopInterrupted || cut.TurnID != "turn_cut" || cut.Error == nil || !strings.HasPrefix(cut.Error.Message, "interrupted") {
		t.Errorf("the cut turn: %+v", cut)
	}
	q := await(t, h, cl, "c", "k-queued")
	if q.StopReason != protocol.StopInterrupted || q.Error == nil || !strings.HasPrefix(q.Error.Message, "discarded") {
		t.Errorf("the queued prompt: %+v", q)
	}
	states := map[string]string{}
	for _, u := range storedEvents(t, h.st, "c") {
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
		h := newHarness(t, func(c *config.Config) { c.Daemon.ContinueInterrupted = false })
		deadDaemon(t, h.st, 1)
		cl, _ := h.client(t, "c2")
		h.open(t, cl, "c")
		if r, err := h.m.Await(context.Background(), cl, "c", "k-cut"); err != nil || r.StopReason != protocol.StopInterrupted {
			t.Fatalf("await right after the resume: %+v %v", r, err)
		}
	}
}
