package sessiontest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// committedWrite waits for one store write, given its after callback.
func committedWrite(t *testing.T, write func(after func(error))) {
	t.Helper()
	ch := make(chan error, 1)
	write(func(err error) { ch <- err })
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// DeadDaemon leaves in the store what a daemon killed mid-turn leaves:
// session "c" (one turn ended), then a turn (id "turn_cut", attempts
// made so far: attempts) claimed with its user_message "go on with it"
// (clientMessageId k-cut) and its transcript message, the first words
// of the model's reply ("half a ") streamed, and a prompt "queued
// behind it" (k-queued) queued behind it; the session is left running.
// Nothing of its end is stored.
func (h *Harness) DeadDaemon(t *testing.T, attempts int) {
	t.Helper()
	ctx := context.Background()
	d := h.Start(t, nil)
	cl, _ := Client(t, "c1", "")
	d.Open(t, cl, "c")
	if r := d.Prompt(t, cl, "c", "first"); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("the first turn: %+v", r)
	}
	cl.Close()
	d.Shutdown()
	st := h.Store
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
	const turn, kind = "turn_cut", "prompt"
	committedWrite(t, func(after func(error)) {
		st.AppendEvent("c", event("input_update", map[string]any{"turnId": turn, "clientMessageId": "k-cut", "inputId": "in_cut", "state": "started"}), after)
	})
	committedWrite(t, func(after func(error)) {
		st.AppendEventWithInput("c", event("user_message", map[string]any{"turnId": turn, "text": "go on with it", "clientId": "c1"}),
			store.Input{ID: "in_cut", ClientMessageID: "k-cut", Kind: kind, State: protocol.InputStarted, TurnID: turn, Attempts: attempts,
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
		st.PutInput("c", store.Input{ID: "in_queued", ClientMessageID: "k-queued", Kind: kind, State: protocol.InputQueued,
			Prompt: []byte(`{"text":"queued behind it"}`)}, after)
	})
	committedWrite(t, func(after func(error)) {
		st.AppendEvent("c", event("input_update", map[string]any{"clientMessageId": "k-queued", "inputId": "in_queued", "state": "queued"}), after)
	})
	committedWrite(t, func(after func(error)) { st.SetState("c", store.StateRunning, after) })
}

// StoredEvents are the session's stored events, parsed.
func (h *Harness) StoredEvents(t *testing.T, sid string) []protocol.SessionUpdate {
	t.Helper()
	h.Store.Sync()
	evs, err := h.Store.Events(context.Background(), sid, 0, 0, 0)
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

// Await waits for the result of cl's input cmid in session sid.
func (d *Daemon) Await(t *testing.T, cl *session.Client, sid, cmid string) *protocol.SessionPromptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a hang guard, not a measure
	defer cancel()
	r, err := d.M.Await(ctx, cl, sid, cmid)
	if err != nil {
		t.Fatalf("await %s: %v", cmid, err)
	}
	return r
}
