package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// deepSeek plays DeepSeek's thinking mode as recorded: the first call
// streams reasoning_content and then a tool call; a request whose
// assistant tool-call message lacks its reasoning_content is refused
// with 400, as DeepSeek refuses it; else it answers.
type deepSeek struct {
	t     *testing.T
	field string // the member the reasoning streams in
	calls int
}

func (d *deepSeek) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.calls++
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	json.Unmarshal(b, &body)
	for _, m := range body.Messages {
		if m["role"] == "assistant" && m["tool_calls"] != nil && m[d.field] != "I should list the files." {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"Missing %s field in the assistant message"}}`, d.field)
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var events []string
	if d.calls == 1 {
		for _, piece := range []string{"I should", " list", " the files."} {
			events = append(events, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":null,%q:%q}}]}`, d.field, piece))
		}
		events = append(events,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
	} else {
		events = append(events, `{"choices":[{"index":0,"delta":{"content":"It says hi."},"finish_reason":"stop"}]}`)
	}
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// A tool loop on a reasoning server: the reasoning streamed before a
// tool call is kept with the assistant message and sent back on it, in
// the member it came in, so the second call is answered (DeepSeek refuses
// it otherwise); the reasoning shows as thought.
func TestReasoningGoesBackWithToolCalls(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		d := &deepSeek{t: t, field: field}
		srv := httptest.NewServer(d)
		defer srv.Close()
		p, _ := New("deepseek", config.Provider{Kind: "openai", BaseURL: srv.URL, Model: "deepseek-reasoner"}, env)
		msgs := []Message{{Role: RoleUser, Text: "what does a.txt say?"}}
		resp, _, thought, err := collect(t, p, Request{Messages: msgs, Tools: tools})
		if err != nil || resp.StopReason != StopToolUse || thought != "I should list the files." {
			t.Fatalf("%s, call 1: %+v %q %v", field, resp, thought, err)
		}
		if resp.Reasoning == nil || resp.Reasoning.Text != "I should list the files." || resp.Reasoning.Field != field {
			t.Fatalf("%s: reasoning kept as %+v", field, resp.Reasoning)
		}
		msgs = append(msgs,
			Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning},
			Message{Role: RoleTool, ToolCallID: "call_0", Name: "read_file", Text: "hi"})
		resp, text, _, err := collect(t, p, Request{Messages: msgs, Tools: tools})
		if err != nil || text != "It says hi." || resp.StopReason != StopEndTurn {
			t.Fatalf("%s, call 2: %+v %q %v", field, resp, text, err)
		}
		// Without it the server says no, as DeepSeek does.
		msgs[1].Reasoning = nil
		if _, _, _, err := collect(t, p, Request{Messages: msgs, Tools: tools}); err == nil || !strings.Contains(err.Error(), "400") {
			t.Fatalf("%s: the fake accepted a tool-call message without its reasoning: %v", field, err)
		}
	}
}

// A refusal streams in delta.refusal with content null: it is the
// reply the person reads, and the turn ends as a refusal.
func TestRefusalIsShownAndEndsAsRefusal(t *testing.T) {
	f := &fakeServer{path: "/v1/chat/completions", events: []string{
		`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""}}]}`,
		`data: {"choices":[{"index":0,"delta":{"refusal":"I'm sorry,"}}]}`,
		`data: {"choices":[{"index":0,"delta":{"refusal":" I can't help with that."}}]}`,
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`data: [DONE]`,
	}}
	url := serve(t, f)
	p, _ := New("openai", config.Provider{Kind: "openai", BaseURL: url + "/v1", Model: "gpt-4o"}, env)
	resp, text, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil || text != "I'm sorry, I can't help with that." || resp.Text != text || resp.StopReason != StopRefusal {
		t.Fatalf("refusal: %+v %q %v", resp, text, err)
	}
}

// The output limit reached in the middle of a tool call is the limit,
// not a malformed call: the reply ends max_tokens, the cut call dropped;
// max_tokens is what the provider's config says.
func TestMaxTokensInTheMiddleOfAToolCall(t *testing.T) {
	oa := &fakeServer{path: "/v1/chat/completions", events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"Writing it."}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a very lo"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
		`data: [DONE]`,
	}}
	url := serve(t, oa)
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: url + "/v1", Model: "m", MaxTokens: 300}, env)
	resp, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}, Tools: tools})
	if err != nil || resp.StopReason != StopMaxTokens || len(resp.ToolCalls) != 0 || resp.Text != "Writing it." {
		t.Fatalf("openai cut mid-call: %+v %v", resp, err)
	}
	if mt := oa.lastBody.Load().(map[string]any)["max_tokens"]; mt != float64(300) {
		t.Errorf("openai max_tokens on the wire: %v", mt)
	}
	an := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":30}}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"RE\"}}",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":124}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}",
	}}
	url = serve(t, an)
	for _, c := range []struct {
		configured int
		want       float64
	}{{0, 8192}, {64000, 64000}} {
		p, _ = New("claude", config.Provider{Kind: "anthropic", BaseURL: url, Model: "claude-x", MaxTokens: c.configured}, env)
		resp, _, _, err = collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}, Tools: tools})
		if err != nil || resp.StopReason != StopMaxTokens || len(resp.ToolCalls) != 0 {
			t.Fatalf("anthropic cut mid-call: %+v %v", resp, err)
		}
		if mt := an.lastBody.Load().(map[string]any)["max_tokens"]; mt != c.want {
			t.Errorf("anthropic max_tokens with %d configured: %v", c.configured, mt)
		}
	}
}

// Anthropic's thinking before a tool call (its signature streamed in
// signature_delta) and a redacted_thinking block go back first and
// unchanged on the assistant message with the tool use, as Anthropic
// requires; message_delta's cumulative usage is taken.
func TestAnthropicThinkingGoesBackFirstAndUnchanged(t *testing.T) {
	f := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":30}}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"I need \"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"the file.\"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxh==\"}}",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix/LafPsn4a\"}}",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\\\"a.txt\\\"}\"}}",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"input_tokens\":61,\"output_tokens\":40}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}",
	}}
	url := serve(t, f)
	p, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: url, Model: "claude-x"}, env)
	msgs := []Message{{Role: RoleUser, Text: "what does a.txt say?"}}
	resp, _, thought, err := collect(t, p, Request{Messages: msgs, Tools: tools})
	if err != nil || resp.StopReason != StopToolUse || thought != "I need the file." {
		t.Fatalf("call 1: %+v %q %v", resp, thought, err)
	}
	if resp.Usage != (Usage{InputTokens: 61, OutputTokens: 40}) {
		t.Errorf("usage %+v (message_delta's is cumulative)", resp.Usage)
	}
	if resp.Reasoning == nil || len(resp.Reasoning.Blocks) != 2 {
		t.Fatalf("kept reasoning %+v", resp.Reasoning)
	}
	// Stored and read back (a resumed session sends the same).
	stored, _ := json.Marshal(Message{Role: RoleAssistant, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning})
	var back Message
	json.Unmarshal(stored, &back)
	msgs = append(msgs, back, Message{Role: RoleTool, ToolCallID: "toolu_1", Name: "read_file", Text: "hi"})
	if _, _, _, err := collect(t, p, Request{Messages: msgs, Tools: tools}); err != nil {
		t.Fatal(err)
	}
	sent := f.lastBody.Load().(map[string]any)["messages"].([]any)[1].(map[string]any)["content"].([]any)
	if len(sent) != 3 {
		t.Fatalf("assistant content sent back: %v", sent)
	}
	th, red, use := sent[0].(map[string]any), sent[1].(map[string]any), sent[2].(map[string]any)
	if th["type"] != "thinking" || th["thinking"] != "I need the file." || th["signature"] != "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxh==" {
		t.Errorf("thinking sent back as %v", th)
	}
	if red["type"] != "redacted_thinking" || red["data"] != "EmwKAhgBEgy3va3pzix/LafPsn4a" {
		t.Errorf("redacted thinking sent back as %v", red)
	}
	if use["type"] != "tool_use" || use["id"] != "toolu_1" {
		t.Errorf("then the tool use: %v", use)
	}
}

// OpenRouter streams reasoning_details beside reasoning, Snowflake
// streams reasoning_details alone: the text shows as thought (once), and
// the details, each index's pieces joined with its signature, go back on
// the assistant tool-call message, across a store round trip.
func TestReasoningDetailsShownAndSentBack(t *testing.T) {
	for _, withReasoning := range []bool{true, false} {
		piece := func(extra string) string {
			r := ""
			if withReasoning {
				var d map[string]any
				json.Unmarshal([]byte(extra), &d)
				if s, _ := d["text"].(string); s != "" {
					b, _ := json.Marshal(s)
					r = `"reasoning":` + string(b) + `,`
				}
			}
			return `data: {"choices":[{"index":0,"delta":{"content":"",` + r + `"reasoning_details":[` + extra + `]}}]}`
		}
		f := &fakeServer{path: "/v1/chat/completions", events: []string{
			piece(`{"type":"reasoning.text","text":"15 * 27","format":"anthropic-claude-v1","index":0}`),
			piece(`{"type":"reasoning.text","text":" = 405","format":"anthropic-claude-v1","index":0}`),
			piece(`{"type":"reasoning.text","signature":"EqQBsig==","format":"anthropic-claude-v1","index":0}`),
			piece(`{"type":"reasoning.encrypted","data":"opaque","format":"anthropic-claude-v1","index":1}`),
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}]}}]}`,
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`data: [DONE]`,
		}}
		url := serve(t, f)
		p, _ := New("or", config.Provider{Kind: "openai", BaseURL: url + "/v1", Model: "anthropic/claude"}, env)
		msgs := []Message{{Role: RoleUser, Text: "x"}}
		resp, _, thought, err := collect(t, p, Request{Messages: msgs, Tools: tools})
		if err != nil || resp.StopReason != StopToolUse || thought != "15 * 27 = 405" {
			t.Fatalf("reasoning %v: %+v thought %q %v", withReasoning, resp, thought, err)
		}
		stored, _ := json.Marshal(Message{Role: RoleAssistant, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning})
		var back Message
		json.Unmarshal(stored, &back)
		msgs = append(msgs, back, Message{Role: RoleTool, ToolCallID: "call_0", Name: "read_file", Text: "hi"})
		if _, _, _, err := collect(t, p, Request{Messages: msgs, Tools: tools}); err != nil {
			t.Fatal(err)
		}
		am := f.lastBody.Load().(map[string]any)["messages"].([]any)[1].(map[string]any)
		got, _ := json.Marshal(am["reasoning_details"])
		want := `[{"format":"anthropic-claude-v1","index":0,"signature":"EqQBsig==","text":"15 * 27 = 405","type":"reasoning.text"},{"data":"opaque","format":"anthropic-claude-v1","index":1,"type":"reasoning.encrypted"}]`
		if string(got) != want {
			t.Errorf("reasoning %v: details sent back\n%s\nwant\n%s", withReasoning, got, want)
		}
		if withReasoning && am["reasoning"] != "15 * 27 = 405" {
			t.Errorf("reasoning sent back as %v", am["reasoning"])
		}
		if !withReasoning && (am["reasoning"] != nil || am["reasoning_content"] != nil) {
			t.Errorf("a member the server never sent: %v", am)
		}
	}
}

// The reasoning level goes on the wire as each dialect takes it:
// Anthropic's thinking budget (max_tokens raised above it), OpenAI's
// reasoning_effort only to models that take it; "off" sends nothing; a
// request's level and max_tokens override the provider's.
func TestReasoningLevelOnTheWire(t *testing.T) {
	an := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}",
	}}
	url := serve(t, an)
	for _, c := range []struct {
		configured, requested string
		maxTokens             int
		wantThinking          any
		wantMax               float64
	}{
		{"", "", 0, nil, 8192},
		{"off", "", 0, nil, 8192},
		{"high", "", 0, map[string]any{"type": "enabled", "budget_tokens": float64(24576)}, 24576 + 8192},
		{"low", "", 0, map[string]any{"type": "enabled", "budget_tokens": float64(2048)}, 8192},
		{"high", "off", 0, nil, 8192},
		{"", "medium", 20000, map[string]any{"type": "enabled", "budget_tokens": float64(8192)}, 20000},
	} {
		p, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: url, Model: "claude-x", Reasoning: c.configured}, env)
		if _, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}, Reasoning: c.requested, MaxTokens: c.maxTokens}); err != nil {
			t.Fatal(err)
		}
		body := an.lastBody.Load().(map[string]any)
		if got, _ := json.Marshal(body["thinking"]); string(got) != mustJSON(c.wantThinking) || body["max_tokens"] != c.wantMax {
			t.Errorf("anthropic %q/%q: thinking %s max_tokens %v", c.configured, c.requested, got, body["max_tokens"])
		}
	}
	oa := &fakeServer{path: "/v1/chat/completions", events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, `data: [DONE]`,
	}}
	url = serve(t, oa)
	for _, c := range []struct {
		model, level string
		want         any
	}{
		{"o3-mini", "low", "low"},
		{"openai/gpt-5", "high", "high"},
		{"gpt-4o", "high", nil},
		{"deepseek-reasoner", "medium", nil},
		{"o4-mini", "off", nil},
	} {
		p, _ := New("oa", config.Provider{Kind: "openai", BaseURL: url + "/v1", Model: c.model, Reasoning: c.level}, env)
		if _, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}}); err != nil {
			t.Fatal(err)
		}
		if got := oa.lastBody.Load().(map[string]any)["reasoning_effort"]; got != c.want {
			t.Errorf("openai %s at %q: reasoning_effort %v, want %v", c.model, c.level, got, c.want)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Prompt caching: Anthropic breakpoints after the system prompt, after
// the tools and on the conversation's last block (not on a thinking
// block sent back), none with prompt_cache = false; the cache figures
// of message_start and the cumulative message_delta are taken, and
// OpenAI's cached prompt tokens too.
func TestPromptCacheBreakpointsAndUsage(t *testing.T) {
	f := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":3000,\"cache_read_input_tokens\":0,\"output_tokens\":1}}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7,\"cache_read_input_tokens\":2500}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}",
	}}
	url := serve(t, f)
	thinking := json.RawMessage(`{"type":"thinking","thinking":"t","signature":"s"}`)
	msgs := []Message{
		{Role: RoleUser, Text: "one"},
		{Role: RoleAssistant, Text: "", ToolCalls: []ToolCall{{ID: "c1", Name: "read_file", Input: json.RawMessage(`{}`)}}, Reasoning: &Reasoning{Blocks: []json.RawMessage{thinking}}},
		{Role: RoleTool, ToolCallID: "c1", Name: "read_file", Text: "hi"},
	}
	off := false
	for _, cache := range []*bool{nil, &off} {
		p, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: url, Model: "claude-x", PromptCache: cache}, env)
		resp, _, _, err := collect(t, p, Request{System: "sys", Messages: msgs, Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage != (Usage{InputTokens: 12 + 3000 + 2500, OutputTokens: 7, CacheWriteTokens: 3000, CacheReadTokens: 2500}) {
			t.Errorf("usage %+v", resp.Usage)
		}
		body, _ := json.Marshal(f.lastBody.Load())
		n := strings.Count(string(body), `"cache_control":{"type":"ephemeral"}`)
		var b struct {
			System   any `json:"system"`
			Tools    []map[string]any
			Messages []struct {
				Content []map[string]any
			}
		}
		json.Unmarshal(body, &b)
		lastMsg := b.Messages[len(b.Messages)-1].Content
		lastTool := b.Tools[len(b.Tools)-1]
		if cache == nil {
			if n != 3 || mustJSON(b.System) != `[{"cache_control":{"type":"ephemeral"},"text":"sys","type":"text"}]` ||
				lastTool["cache_control"] == nil || lastMsg[len(lastMsg)-1]["cache_control"] == nil {
				t.Errorf("breakpoints (%d):\n%s", n, body)
			}
			if th := b.Messages[1].Content[0]; th["type"] != "thinking" || th["cache_control"] != nil {
				t.Errorf("the thinking block is sent back unchanged: %v", th)
			}
		} else if n != 0 || b.System != "sys" {
			t.Errorf("prompt_cache = false still sends breakpoints (%d):\n%s", n, body)
		}
	}
	oa := &fakeServer{path: "/v1/chat/completions", events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
		`data: {"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920}}}`,
		`data: [DONE]`,
	}}
	url = serve(t, oa)
	p, _ := New("oa", config.Provider{Kind: "openai", BaseURL: url + "/v1", Model: "gpt-4o"}, env)
	resp, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil || resp.Usage != (Usage{InputTokens: 2006, OutputTokens: 300, CacheReadTokens: 1920}) {
		t.Errorf("openai usage %+v %v", resp.Usage, err)
	}
}
