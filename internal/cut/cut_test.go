package cut

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// A cut attempt's events say which calls started, which ended, which
// waited for an approval no one gave, and what the model was streaming
// after its last ended call; another turn's events are not its.
func TestReadWhatTheAttemptLeft(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(&store.Session{ID: "c", AgentAlias: "default", Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	const turn = "turn_x"
	var seq int64
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
		{"tool_call", map[string]any{"turnId": "turn_other", "toolCallId": "o1", "name": "shell"}},
		{"agent_message_chunk", map[string]any{"turnId": turn, "text": "said "}},
		{"agent_message_chunk", map[string]any{"turnId": "turn_other", "text": "not this turn's "}},
		{"agent_message_chunk", map[string]any{"turnId": turn, "text": "so far"}},
	} {
		seq++
		ev.body["sessionId"], ev.body["seq"], ev.body["type"] = "c", seq, ev.typ
		b, _ := json.Marshal(ev.body)
		done := make(chan error, 1)
		st.AppendEvent("c", store.Event{Seq: seq, Type: ev.typ, Body: b}, func(err error) { done <- err })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	l, err := Read(context.Background(), st, "c", turn, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Partial != "said so far" {
		t.Errorf("partial %q", l.Partial)
	}
	if got := l.Started(); len(got) != 3 || !got["c1"] || !got["c2"] || !got["c3"] {
		t.Errorf("started: %v", got)
	}
	if open := l.Open(); len(open) != 2 || open["c2"] != "write_file" || open["c3"] != "shell" {
		t.Errorf("open: %v", open)
	}
	if len(l.Asked) != 1 || !l.Asked["c2"] {
		t.Errorf("asked: %v", l.Asked)
	}
	if l, err := Read(context.Background(), st, "c", turn, 0); err != nil || len(l.Calls) != 0 {
		t.Errorf("no attempt: %+v %v", l, err)
	}
}

// The repair gives every open call a result where a model needs one:
// ended calls keep theirs, the last reply's calls that waited are held,
// those that never started are said not run, the rest interrupted.
func TestRepairAnswersEveryOpenCall(t *testing.T) {
	call := func(id string) provider.ToolCall { return provider.ToolCall{ID: id, Name: "shell"} }
	h := []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call("a"), call("b")}},
		{Role: provider.RoleTool, ToolCallID: "a", Text: "done"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{call("c"), call("d"), call("e")}},
	}
	out, r := Repair(h, map[string]bool{"d": true}, map[string]bool{"c": true, "d": true})
	if len(r.Cut) != 2 || r.Cut[0].ID != "b" || r.Cut[1].ID != "c" || len(r.Held) != 1 || r.Held[0].ID != "d" || len(r.Unrun) != 1 || r.Unrun[0].ID != "e" {
		t.Fatalf("repaired: %+v", r)
	}
	var results []string
	for _, m := range out {
		if m.Role == provider.RoleTool {
			results = append(results, m.ToolCallID+"="+m.Text)
		}
	}
	want := []string{"a=done", "b=" + Interrupted, "c=" + Interrupted, "e=" + Unrun}
	if strings.Join(results, "|") != strings.Join(want, "|") {
		t.Errorf("results %q, want %q", results, want)
	}
	// Which calls started unknown: every open call is interrupted.
	if _, r := Repair(h, nil, nil); len(r.Cut) != 4 || len(r.Unrun) != 0 {
		t.Errorf("started unknown: %+v", r)
	}
}

func TestNoteSpeaksOfARunningCallOnlyWhenOneRan(t *testing.T) {
	if n := Note(2, false); strings.Contains(n, "tool call") || !strings.Contains(n, "attempt 2") {
		t.Errorf("no call ran: %q", n)
	}
	if n := Note(3, true); !strings.Contains(n, "A tool call that was running then was not run again") {
		t.Errorf("a call ran: %q", n)
	}
}
