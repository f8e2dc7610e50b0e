package continuation_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/continuation"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// A daemon that finds a dead one's open inputs goes on with them: the
// cut turn under its id (turn_interrupted, turn_resumed attempt 2, the
// words the model had streamed kept as said, the model called again),
// then the prompt queued behind it, once; a client that comes back with
// their clientMessageIds gets their results, and one that sends them
// again runs nothing.
func TestRunGoesOnWithTheCutTurnAndTheQueue(t *testing.T) {
	h := sessiontest.New(t, nil)
	h.DeadDaemon(t, 1)
	dead, err := h.Store.GetSession(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	d := h.Start(t, nil)
	continuation.Run(context.Background(), d.M, h.Store, slog.Default())
	cl, _ := sessiontest.Client(t, "c2", "")
	if sid := d.Open(t, cl, "c"); sid != "c" {
		t.Fatalf("attach: %s", sid)
	}
	cut := d.Await(t, cl, "c", "k-cut")
	if cut.TurnID != "turn_cut" || cut.StopReason != protocol.StopEndTurn || !strings.Contains(cut.Content, "The daemon stopped during this turn") {
		t.Errorf("the cut turn: %+v", cut)
	}
	queued := d.Await(t, cl, "c", "k-queued")
	if queued.StopReason != protocol.StopEndTurn || queued.Content != "echo: queued behind it" || queued.TurnID == "turn_cut" {
		t.Errorf("the queued prompt: %+v", queued)
	}
	var interrupted, resumed, completes, queuedRuns int
	for _, u := range h.StoredEvents(t, "c") {
		if u.Seq == dead.LastSeq+1 && u.Type != protocol.EventTurnInterrupted {
			// The survive issue and docs/protocol.md put it there.
			t.Errorf("seq %d after the dead daemon's last is %s, not turn_interrupted", u.Seq, u.Type)
		}
		switch e := u.Event.(type) {
		case protocol.TurnInterruptedEvent:
			interrupted++
			if u.TurnID != "turn_cut" || e.Reason != "daemon_exit" || u.Seq != dead.LastSeq+1 {
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
	raw, _ := h.Store.Messages(context.Background(), "c")
	var said bool
	for _, b := range raw {
		said = said || strings.Contains(string(b), `"text":"half a "`)
	}
	if !said {
		t.Errorf("the partial reply is not in the transcript: %d messages", len(raw))
	}
	// Sent again, nothing runs again: the first one's result.
	p, err := d.M.Submit(cl, "c", session.Input{Text: "queued behind it", ClientMessageID: "k-queued"})
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
func TestRunGivesUpPastTheAttempts(t *testing.T) {
	h := sessiontest.New(t, func(c *config.Config) { c.Daemon.ContinueAttempts = 1 })
	h.DeadDaemon(t, 2)
	d := h.Start(t, nil)
	continuation.Run(context.Background(), d.M, h.Store, slog.Default())
	cl, _ := sessiontest.Client(t, "c2", "")
	d.Open(t, cl, "c")
	cut := d.Await(t, cl, "c", "k-cut")
	if cut.StopReason != protocol.StopError || cut.Error == nil || !strings.Contains(cut.Error.Message, "continue_attempts = 1") {
		t.Errorf("the cut turn past its attempts: %+v %+v", cut, cut.Error)
	}
	if q := d.Await(t, cl, "c", "k-queued"); q.Content != "echo: queued behind it" {
		t.Errorf("the queued prompt: %+v", q)
	}
	for _, u := range h.StoredEvents(t, "c") {
		if _, ok := u.Event.(protocol.TurnResumedEvent); ok {
			t.Errorf("the turn was resumed: %+v", u)
		}
	}
}

// With [daemon] continue_interrupted off, Run loads nothing and runs
// nothing: the inputs end when the session is next loaded (the
// session's own tests show how).
func TestRunDoesNothingWhenNotContinued(t *testing.T) {
	h := sessiontest.New(t, func(c *config.Config) { c.Daemon.ContinueInterrupted = false })
	h.DeadDaemon(t, 1)
	d := h.Start(t, nil)
	continuation.Run(context.Background(), d.M, h.Store, slog.Default())
	if len(d.M.Summaries()) != 0 {
		t.Fatalf("sessions loaded: %+v", d.M.Summaries())
	}
}

// What a cut attempt left is read from its events: the calls that
// started and did not end, those whose approval no one gave, and what
// the model streamed after its last ended call; events of other turns
// are not its.
func TestReadCutReadsWhatTheAttemptLeft(t *testing.T) {
	h := sessiontest.New(t, nil)
	h.DeadDaemon(t, 1) // session "c"
	rec, err := h.Store.GetSession(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	seq := rec.LastSeq
	since := seq + 1
	const turn = "turn_x"
	for _, ev := range []struct {
		typ  string
		body map[string]any
	}{
		{"user_message", map[string]any{"turnId": turn, "text": "cut"}},
		{"tool_call", map[string]any{"turnId": turn, "toolCallId": "c1", "name": "shell"}},
		{"agent_message_chunk", map[string]any{"turnId": turn, "text": "before the result "}},
		{"tool_result", map[string]any{"turnId": turn, "toolCallId": "c1", "name": "shell"}},
		{"tool_call", map[string]any{"turnId": turn, "toolCallId": "c2", "name": "write_file"}},
		{"approval_request", map[string]any{"turnId": turn, "requestId": "r2", "toolCallId": "c2"}},
		{"tool_call", map[string]any{"turnId": turn, "toolCallId": "c3", "name": "shell"}},
		{"approval_request", map[string]any{"turnId": turn, "requestId": "r3", "toolCallId": "c3"}},
		{"approval_resolved", map[string]any{"requestId": "r3"}},
		{"agent_message_chunk", map[string]any{"turnId": turn, "text": "said "}},
		{"agent_message_chunk", map[string]any{"turnId": "turn_other", "text": "not this turn's "}},
		{"agent_message_chunk", map[string]any{"turnId": turn, "text": "so far"}},
	} {
		seq++
		ev.body["sessionId"], ev.body["seq"], ev.body["type"] = "c", seq, ev.typ
		b, _ := json.Marshal(ev.body)
		done := make(chan error, 1)
		h.Store.AppendEvent("c", store.Event{Seq: seq, Type: ev.typ, Body: b}, func(err error) { done <- err })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	c := &session.Cut{TurnID: turn, Attempt: 2, Since: since}
	if err := continuation.ReadCut(context.Background(), h.Store, "c", c); err != nil {
		t.Fatal(err)
	}
	if c.Partial != "said so far" {
		t.Errorf("partial %q", c.Partial)
	}
	if len(c.Calls) != 2 || c.Calls["c2"] != "write_file" || c.Calls["c3"] != "shell" {
		t.Errorf("calls started and not ended: %v", c.Calls)
	}
	if len(c.Asked) != 1 || !c.Asked["c2"] {
		t.Errorf("calls still asked: %v", c.Asked)
	}
	if len(c.Started) != 3 || !c.Started["c1"] || !c.Started["c2"] || !c.Started["c3"] {
		t.Errorf("calls started, ended or not: %v", c.Started)
	}
}

// A child's cut turn goes on with its parent's (the parent loaded with
// it, its task call that started the child found still open), and a
// child whose parent is gone goes on alone: each cut turn is continued
// once, before anything queued after it.
func TestRunGivesChildrenBackToTheirParents(t *testing.T) {
	h := sessiontest.New(t, nil)
	st, ctx := h.Store, context.Background()
	cwd := t.TempDir()
	seqs := map[string]int64{}
	write := func(sid, typ string, body map[string]any, in *store.Input) {
		t.Helper()
		seqs[sid]++
		body["sessionId"], body["seq"], body["type"] = sid, seqs[sid], typ
		b, _ := json.Marshal(body)
		done := make(chan error, 1)
		ev := store.Event{Seq: seqs[sid], Type: typ, Body: b}
		if in != nil {
			st.AppendEventWithInput(sid, ev, *in, func(err error) { done <- err })
		} else {
			st.AppendEvent(sid, ev, func(err error) { done <- err })
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	cutTurn := func(sid, parent, callID string) {
		t.Helper()
		depth := 0
		if parent != "" {
			depth = 1
		}
		if err := st.CreateSession(&store.Session{ID: sid, AgentAlias: "default", Cwd: cwd, ParentID: parent, ParentToolCallID: callID, Depth: depth}); err != nil {
			t.Fatal(err)
		}
		turn := "turn_" + sid
		write(sid, "user_message", map[string]any{"turnId": turn, "text": "go"},
			&store.Input{ID: "in_" + sid, Kind: "prompt", State: protocol.InputStarted, TurnID: turn, Attempts: 1, Prompt: []byte(`{"text":"go"}`)})
	}
	cutTurn("p", "", "")
	write("p", "tool_call", map[string]any{"turnId": "turn_p", "toolCallId": "call_task", "name": "task"}, nil)
	cutTurn("ch", "p", "call_task")
	cutTurn("orphan", "gone", "call_x")

	d := h.Start(t, nil)
	continuation.Run(ctx, d.M, st, slog.Default())
	cl, _ := sessiontest.Client(t, "c2", "")
	for _, sid := range []string{"p", "ch", "orphan"} {
		d.Open(t, cl, sid)
		// A prompt queued behind the continued turn runs after it.
		if r := d.Prompt(t, cl, sid, "after"); r.Content != "echo: after" {
			t.Fatalf("%s: the prompt after: %+v", sid, r)
		}
		var resumed, completes int
		for _, u := range h.StoredEvents(t, sid) {
			switch u.Event.(type) {
			case protocol.TurnResumedEvent:
				resumed++
			case protocol.TurnCompleteEvent:
				completes++
			}
		}
		if resumed != 1 || completes != 2 {
			t.Errorf("%s: its cut turn resumed %d times; %d turns completed, want 2", sid, resumed, completes)
		}
	}
}
