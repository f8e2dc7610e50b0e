package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTranscriptKeepsItsEstimate(t *testing.T) {
	msgs := []Message{
		{Role: RoleUser, Text: "hello there", Images: []Image{{MimeType: "image/png", Path: "/x.png"}}},
		{Role: RoleAssistant, Text: "calling", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Input: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Role: RoleTool, ToolCallID: "c1", Name: "read_file", Text: "the file's text, which is longer than the rest"},
		{Role: RoleAssistant, Text: "done"},
	}
	var tr Transcript
	for _, m := range msgs {
		tr.Append(m)
	}
	if want := NewTranscript(msgs).Tokens; tr.Tokens != want || want < imageTokens+20 {
		t.Fatalf("appended estimate %d, fresh %d", tr.Tokens, want)
	}
	// Truncating gives the estimate of what is kept, and appending after
	// it leaves an earlier copy's messages alone.
	before := tr
	tr.Truncate(2)
	if want := NewTranscript(msgs[:2]).Tokens; tr.Tokens != want || len(tr.Messages) != 2 {
		t.Fatalf("truncated: %d messages, estimate %d, want %d", len(tr.Messages), tr.Tokens, want)
	}
	tr.Append(Message{Role: RoleUser, Text: "new"})
	if before.Messages[2].Role != RoleTool {
		t.Fatalf("append after truncate overwrote an earlier copy: %+v", before.Messages[2])
	}
	tr.Truncate(10) // longer than it is: nothing changes
	if len(tr.Messages) != 3 {
		t.Fatalf("truncate past the end: %d messages", len(tr.Messages))
	}
}

func TestEchoCountsTheEstimate(t *testing.T) {
	req := Request{System: "be brief", Messages: []Message{{Role: RoleUser, Text: "hello world"}}}
	resp, err := (&Echo{}).Stream(t.Context(), req, func(Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	want := NewTranscript(req.Messages).Tokens + EstimateRequest(req.System, nil)
	if resp.Usage.InputTokens != want {
		t.Fatalf("echo without an estimate counted %d, want %d", resp.Usage.InputTokens, want)
	}
	req.Estimate = 12345
	if resp, _ = (&Echo{}).Stream(t.Context(), req, func(Delta) {}); resp.Usage.InputTokens != 12345 {
		t.Fatalf("echo ignored the host's estimate: %d", resp.Usage.InputTokens)
	}
}

func TestTrimLeavesOutWholeTurnsAndKeepsTheLast(t *testing.T) {
	big := strings.Repeat("x", 400) // 100 tokens
	var tr Transcript
	for i := range 5 {
		tr.Append(Message{Role: RoleUser, Text: big})
		tr.Append(Message{Role: RoleAssistant, Text: big, ToolCalls: []ToolCall{{ID: "c", Name: "shell", Input: json.RawMessage(`{}`)}}})
		tr.Append(Message{Role: RoleTool, ToolCallID: "c", Name: "shell", Text: big})
		if i == 4 {
			break
		}
		tr.Append(Message{Role: RoleAssistant, Text: big})
	}
	all := tr.Tokens
	dropped := tr.Trim(all / 2)
	if tr.Cut != dropped || tr.Messages[tr.Cut].Role != RoleUser || tr.ViewTokens() > all/2 {
		t.Fatalf("trim to half: cut %d (%s), view %d of %d", tr.Cut, tr.Messages[tr.Cut].Role, tr.ViewTokens(), all)
	}
	if want := NewTranscript(tr.Messages[:tr.Cut]).Tokens; tr.CutTokens != want {
		t.Fatalf("cut tokens %d, want %d", tr.CutTokens, want)
	}
	// Nothing fits: the last turn stays whole (its call and result).
	tr.Trim(0)
	if tr.Cut != len(tr.Messages)-3 || tr.Turns() != 1 || len(tr.View()) != 3 {
		t.Fatalf("trim to nothing: cut %d of %d, %d turns", tr.Cut, len(tr.Messages), tr.Turns())
	}
	if n := tr.Trim(0); n != 0 {
		t.Fatalf("a second trim dropped %d", n)
	}
	// The transcript keeps everything.
	if len(tr.Messages) != 19 || tr.Tokens != all {
		t.Fatalf("transcript %d messages, %d tokens", len(tr.Messages), tr.Tokens)
	}
	tr.Truncate(5) // a mend before the cut: the view starts again
	if tr.Cut != 0 || tr.CutTokens != 0 {
		t.Fatalf("after truncate: cut %d", tr.Cut)
	}
}
