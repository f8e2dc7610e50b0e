package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// longTranscript is a session of turns turns, each a prompt, a tool call
// with reasoning, its result, and an answer (about 1.3 KB a turn).
func longTranscript(turns int) Transcript {
	var t Transcript
	for i := range turns {
		t.Append(Message{Role: RoleUser, Text: fmt.Sprintf("turn %d: please look at file_%d.go and tell me what \"Run\" does", i, i)})
		t.Append(Message{Role: RoleAssistant, Text: "Let me read it.",
			ToolCalls: []ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "read_file", Input: json.RawMessage(fmt.Sprintf(`{"path":"file_%d.go"}`, i))}},
			Reasoning: &Reasoning{Text: "I should read the file first.", Field: "reasoning_content",
				Blocks: []json.RawMessage{json.RawMessage(`{"signature":"EqQBCkYIBxgCKkBx+9/z==","thinking":"I should read the file first.","type":"thinking"}`)}}})
		t.Append(Message{Role: RoleTool, ToolCallID: fmt.Sprintf("call_%d", i), Name: "read_file",
			Text: strings.Repeat("func Run(ctx context.Context) error {\n\treturn nil // <&>\n}\n", 8)})
		t.Append(Message{Role: RoleAssistant, Text: "`Run` returns nil at once: it does nothing yet."})
	}
	return t
}

func benchProviders(b *testing.B) map[string]Provider {
	env := func(string) string { return "k" }
	oa, err := New("oa", config.Provider{Kind: "openai", Model: "gpt-4o"}, env)
	if err != nil {
		b.Fatal(err)
	}
	an, err := New("an", config.Provider{Kind: "anthropic", Model: "claude-sonnet-4-5"}, env)
	if err != nil {
		b.Fatal(err)
	}
	return map[string]Provider{"openai": oa, "anthropic": an}
}

var benchTools = []ToolSpec{{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}

// BenchmarkRequestBody builds the request body of the next model call in
// a session of 10,000 turns (the calls before it made the same
// request), per dialect; b.SetBytes makes the figure per byte of body.
// BenchmarkRequestBodyFloor is what any builder must do at least: put
// that many bytes in a buffer. The ratio says whether unchanged messages
// are encoded again per call (they cost 10× and more when they are).
func BenchmarkRequestBody(b *testing.B) {
	for _, turns := range []int{100, 10000} {
		t := longTranscript(turns)
		for _, dialect := range []string{"openai", "anthropic"} {
			b.Run(fmt.Sprintf("%s/turns=%d", dialect, turns), func(b *testing.B) { requestBodies(b, dialect, t) })
		}
	}
}

func requestBodies(b *testing.B, dialect string, t Transcript) {
	p := benchProviders(b)[dialect]
	req := Request{System: "You are a coding agent.", Messages: t.View(), Tools: benchTools}
	body, err := requestBody(p, req) // an earlier call's
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		if _, err := requestBody(p, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(body)), "body-bytes")
}

func BenchmarkRequestBodyFloor(b *testing.B) {
	t := longTranscript(10000)
	for _, dialect := range []string{"openai", "anthropic"} {
		b.Run(fmt.Sprintf("%s/turns=10000", dialect), func(b *testing.B) {
			body, err := requestBody(benchProviders(b)[dialect], Request{System: "You are a coding agent.", Messages: t.View(), Tools: benchTools})
			if err != nil {
				b.Fatal(err)
			}
			// The same frame shapes: the body in the pieces it is made
			// of (each message, or each content block, and what lies
			// between them), appended to a buffer made to measure.
			pieces := split(b, body)
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for range b.N {
				out := make([]byte, 0, len(body))
				for _, p := range pieces {
					out = append(out, p...)
				}
				sink = out
			}
			b.ReportMetric(float64(len(body)), "body-bytes")
		})
	}
}

// split cuts body at the edges of its messages and their content blocks.
func split(b *testing.B, body []byte) [][]byte {
	var req struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(body, &req); err != nil {
		b.Fatal(err)
	}
	var cuts [][2]int // the parts that are one piece each
	at := 0
	for _, m := range req.Messages {
		var am struct{ Content []json.RawMessage }
		if json.Unmarshal(m, &am) == nil && len(am.Content) > 0 {
			for _, c := range am.Content {
				i := at + bytes.Index(body[at:], c)
				cuts = append(cuts, [2]int{i, i + len(c)})
				at = i + len(c)
			}
			continue
		}
		i := at + bytes.Index(body[at:], m)
		cuts = append(cuts, [2]int{i, i + len(m)})
		at = i + len(m)
	}
	var pieces [][]byte
	prev := 0
	for _, c := range cuts {
		if c[0] > prev {
			pieces = append(pieces, body[prev:c[0]])
		}
		pieces = append(pieces, body[c[0]:c[1]])
		prev = c[1]
	}
	pieces = append(pieces, body[prev:])
	if n := len(bytes.Join(pieces, nil)); n != len(body) {
		b.Fatalf("pieces hold %d bytes of %d", n, len(body))
	}
	return pieces
}

var sink []byte

// requestBody is the body p sends for req.
func requestBody(p Provider, req Request) ([]byte, error) {
	switch p := p.(type) {
	case *OpenAI:
		return p.request(req)
	case *Anthropic:
		return p.request(req)
	}
	return nil, fmt.Errorf("no request body for %T", p)
}
