package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// fakeServer streams the given SSE body (a list of raw "data:" payloads or
// whole event blocks) after answering failFirst requests with status fail.
type fakeServer struct {
	t         *testing.T
	path      string
	events    []string // each written as-is followed by "\n\n", flushed
	failFirst int
	fail      int
	hold      chan struct{} // if set, the stream pauses after the first event until closed
	lastEnd   string        // if set, what ends the last event instead of "\n\n"
	requests  atomic.Int32
	lastBody  atomic.Value // map[string]any
	lastHdr   atomic.Value // http.Header
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	if r.URL.Path != f.path {
		http.Error(w, `{"error":{"message":"no such path `+r.URL.Path+`"}}`, 404)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		f.t.Errorf("request body is not JSON: %v", err)
	}
	f.lastBody.Store(body)
	f.lastHdr.Store(r.Header.Clone())
	if int(n) <= f.failFirst {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(f.fail)
		fmt.Fprintf(w, `{"error":{"message":"overloaded, try again"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, e := range f.events {
		end := "\n\n"
		if i == len(f.events)-1 && f.lastEnd != "" {
			end = f.lastEnd
		}
		fmt.Fprintf(w, "%s%s", e, end)
		w.(http.Flusher).Flush()
		if i == 0 && f.hold != nil {
			select {
			case <-f.hold:
			case <-r.Context().Done():
				return
			}
		}
	}
}

func serve(t *testing.T, f *fakeServer) string {
	f.t = t
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func collect(t *testing.T, p Provider, req Request) (*Response, string, string, error) {
	var text, thought strings.Builder
	resp, err := p.Stream(context.Background(), req, func(d Delta) {
		text.WriteString(d.Text)
		thought.WriteString(d.Thought)
	})
	return resp, text.String(), thought.String(), err
}

func env(k string) string { return map[string]string{"KEY": "sekrit"}[k] }

var tools = []ToolSpec{{Name: "read_file", Description: "read", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}

func TestOpenAIStreamsTextAndSplitToolCalls(t *testing.T) {
	f := &fakeServer{path: "/v1/chat/completions", events: []string{
		`data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"let me look"}}]}`,
		`data: {"choices":[{"index":0,"delta":{"content":"Reading "}}]}`,
		`data: {"choices":[{"index":0,"delta":{"content":"it."}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.txt\"}"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"b.txt\"}"}}]}}]}`,
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: {"choices":[],"usage":{"prompt_tokens":42,"completion_tokens":7}}`,
		`data: [DONE]`,
	}}
	url := serve(t, f)
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: url + "/v1", APIKeyEnv: "KEY", Model: "m1"}, env)
	resp, text, thought, err := collect(t, p, Request{System: "be careful", Messages: []Message{
		{Role: RoleUser, Text: "read a and b"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c0", Name: "list_dir", Input: json.RawMessage(`{}`)}}},
		{Role: RoleTool, ToolCallID: "c0", Name: "list_dir", Text: "a.txt b.txt"},
	}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if text != "Reading it." || resp.Text != text || thought != "let me look" {
		t.Errorf("text %q resp %q thought %q", text, resp.Text, thought)
	}
	if resp.StopReason != StopToolUse || len(resp.ToolCalls) != 2 {
		t.Fatalf("stop %q calls %+v", resp.StopReason, resp.ToolCalls)
	}
	if c := resp.ToolCalls[0]; c.ID != "call_1" || c.Name != "read_file" || string(c.Input) != `{"path":"a.txt"}` {
		t.Errorf("call 0: %+v", c)
	}
	if c := resp.ToolCalls[1]; c.ID != "call_2" || string(c.Input) != `{"path":"b.txt"}` {
		t.Errorf("call 1: %+v %s", c, c.Input)
	}
	if resp.Usage != (Usage{InputTokens: 42, OutputTokens: 7}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	// What went on the wire.
	body := f.lastBody.Load().(map[string]any)
	if body["model"] != "m1" || body["stream"] != true {
		t.Errorf("model/stream: %v %v", body["model"], body["stream"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 4 || msgs[0].(map[string]any)["role"] != "system" {
		t.Fatalf("messages %v", msgs)
	}
	asst := msgs[2].(map[string]any)
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if tc["id"] != "c0" || tc["function"].(map[string]any)["arguments"] != "{}" {
		t.Errorf("assistant tool call on the wire: %v", tc)
	}
	if tm := msgs[3].(map[string]any); tm["role"] != "tool" || tm["tool_call_id"] != "c0" || tm["content"] != "a.txt b.txt" {
		t.Errorf("tool message on the wire: %v", tm)
	}
	if tl := body["tools"].([]any)[0].(map[string]any)["function"].(map[string]any); tl["name"] != "read_file" || tl["parameters"] == nil {
		t.Errorf("tool on the wire: %v", tl)
	}
	if h := f.lastHdr.Load().(http.Header); h.Get("Authorization") != "Bearer sekrit" {
		t.Errorf("authorization %q", h.Get("Authorization"))
	}
}

func TestOpenAIRetriesOverloadThenStreams(t *testing.T) {
	f := &fakeServer{path: "/v1/chat/completions", failFirst: 2, fail: 503, events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`, `data: [DONE]`}}
	url := serve(t, f)
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: url + "/v1"}, env)
	p.(*OpenAI).http.retryBase = time.Millisecond
	resp, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil || resp.Text != "hi" || resp.StopReason != StopEndTurn {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if n := f.requests.Load(); n != 3 {
		t.Errorf("%d requests, want 3 (two 503s retried)", n)
	}
}

// A stream whose last event ends with one newline ("data: [DONE]\n",
// then EOF) is whole: the event is used, not reported as cut short.
func TestOpenAIStreamEndingWithOneNewline(t *testing.T) {
	f := &fakeServer{path: "/v1/chat/completions", lastEnd: "\n", events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`, `data: [DONE]`}}
	url := serve(t, f)
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: url + "/v1"}, env)
	resp, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err != nil || resp.Text != "hi" || resp.StopReason != StopEndTurn {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestProviderErrorsNameProviderAndURL(t *testing.T) {
	f := &fakeServer{path: "/v1/chat/completions", failFirst: 100, fail: 401}
	url := serve(t, f)
	p, _ := New("work", config.Provider{Kind: "openai", BaseURL: url + "/v1"}, env)
	_, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	var pe *Error
	if !errors.As(err, &pe) || pe.Status != 401 {
		t.Fatalf("err %v", err)
	}
	want := "provider work (" + url + "/v1/chat/completions): HTTP 401: overloaded, try again"
	if err.Error() != want {
		t.Errorf("error %q\nwant %q", err, want)
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("%d requests: a 401 must not be retried", n)
	}
	// 429 is retried, and the error says how often it was tried.
	f2 := &fakeServer{path: "/v1/messages", failFirst: 100, fail: 429}
	url2 := serve(t, f2)
	a, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: url2}, env)
	a.(*Anthropic).http.retryBase = time.Millisecond
	_, _, _, err = collect(t, a, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "provider claude ("+url2+"/v1/messages): HTTP 429") || !strings.Contains(err.Error(), "after 4 attempts") {
		t.Errorf("429 error %v", err)
	}
	// Nothing listening: a connection error names the URL too.
	srv := httptest.NewServer(http.NotFoundHandler())
	dead := srv.URL
	srv.Close()
	d, _ := New("gone", config.Provider{Kind: "openai", BaseURL: dead}, env)
	d.(*OpenAI).http.retries = 0
	_, _, _, err = collect(t, d, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err == nil || !strings.HasPrefix(err.Error(), "provider gone ("+dead+"/chat/completions): ") {
		t.Errorf("connection error %v", err)
	}
}

func TestAnthropicStreamsThinkingTextAndToolUse(t *testing.T) {
	f := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":30}}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\"}}",
		"event: ping\ndata: {\"type\":\"ping\"}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"check.\"}}",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read_file\",\"input\":{}}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"RE\"}}",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"ADME.md\\\"}\"}}",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":12}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}",
	}}
	url := serve(t, f)
	p, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: url, APIKeyEnv: "KEY", Model: "claude-x"}, env)
	resp, text, thought, err := collect(t, p, Request{System: "sys", Messages: []Message{
		{Role: RoleUser, Text: "go"},
		{Role: RoleAssistant, Text: "first", ToolCalls: []ToolCall{{ID: "t1", Name: "list_dir", Input: json.RawMessage(`{}`)}, {ID: "t2", Name: "list_dir", Input: json.RawMessage(`{"path":"x"}`)}}},
		{Role: RoleTool, ToolCallID: "t1", Name: "list_dir", Text: "a"},
		{Role: RoleTool, ToolCallID: "t2", Name: "list_dir", Text: "no such dir", IsError: true},
	}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if text != "Let me check." || thought != "hmm" || resp.StopReason != StopToolUse {
		t.Errorf("text %q thought %q stop %q", text, thought, resp.StopReason)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "toolu_1" || string(resp.ToolCalls[0].Input) != `{"path": "README.md"}` {
		t.Errorf("tool calls %+v", resp.ToolCalls)
	}
	if resp.Usage != (Usage{InputTokens: 30, OutputTokens: 12}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	body := f.lastBody.Load().(map[string]any)
	msgs := body["messages"].([]any)
	// user, assistant (text + 2 tool_use), user (2 tool_result blocks)
	if len(msgs) != 3 || mustJSON(body["system"]) != `[{"cache_control":{"type":"ephemeral"},"text":"sys","type":"text"}]` || body["model"] != "claude-x" {
		t.Fatalf("wire messages %v", msgs)
	}
	results := msgs[2].(map[string]any)["content"].([]any)
	if len(results) != 2 || results[1].(map[string]any)["is_error"] != true || results[1].(map[string]any)["tool_use_id"] != "t2" {
		t.Errorf("tool results on the wire %v", results)
	}
	h := f.lastHdr.Load().(http.Header)
	if h.Get("x-api-key") != "sekrit" || h.Get("anthropic-version") == "" {
		t.Errorf("headers %v", h)
	}
}

func TestAnthropicStreamError(t *testing.T) {
	f := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
	}}
	url := serve(t, f)
	p, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: url}, env)
	_, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "overloaded_error: Overloaded") || !strings.Contains(err.Error(), url+"/v1/messages") {
		t.Errorf("err %v", err)
	}
}

func TestCancelStopsStreamPromptly(t *testing.T) {
	f := &fakeServer{path: "/chat/completions", hold: make(chan struct{}), events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"partial"}}]}`,
		`data: {"choices":[{"index":0,"delta":{"content":" never"},"finish_reason":"stop"}]}`, `data: [DONE]`}}
	defer close(f.hold)
	url := serve(t, f)
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: url}, env)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 1)
	var resp *Response
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err = p.Stream(ctx, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}}, func(d Delta) { got <- d.Text })
	}()
	select {
	case s := <-got:
		if s != "partial" {
			t.Fatalf("first delta %q", s)
		}
	case <-done:
		t.Fatalf("stream ended before its first delta: %v", err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || resp == nil || resp.Text != "partial" {
		t.Errorf("after cancel: resp %+v err %v", resp, err)
	}
}

func TestStallTimeout(t *testing.T) {
	f := &fakeServer{path: "/chat/completions", hold: make(chan struct{}), events: []string{
		`data: {"choices":[{"index":0,"delta":{"content":"a"}}]}`, `data: [DONE]`}}
	defer close(f.hold)
	url := serve(t, f)
	p, _ := New("slow", config.Provider{Kind: "openai", BaseURL: url}, env)
	p.(*OpenAI).http.stall = 50 * time.Millisecond
	_, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "stream stalled") || !strings.Contains(err.Error(), "provider slow") {
		t.Errorf("err %v", err)
	}
}

func TestEchoDirectives(t *testing.T) {
	e := &Echo{}
	resp, text, thought, err := collect(t, e, Request{Messages: []Message{{Role: RoleUser, Text: "hello  world\n/think pondering\n/tool read_file {\"path\":\"a\"}"}}})
	if err != nil {
		t.Fatal(err)
	}
	if text != "echo: hello  world" || thought != "pondering" || resp.StopReason != StopToolUse {
		t.Errorf("text %q thought %q stop %q", text, thought, resp.StopReason)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "read_file" || string(resp.ToolCalls[0].Input) != `{"path":"a"}` {
		t.Errorf("calls %+v", resp.ToolCalls)
	}
	var chunks int
	e.Stream(context.Background(), Request{Messages: []Message{{Role: RoleUser, Text: "/chunks 5"}}}, func(d Delta) { chunks++ })
	if chunks != 5 {
		t.Errorf("/chunks 5 gave %d chunks", chunks)
	}
	resp, text, _, _ = collect(t, e, Request{Messages: []Message{
		{Role: RoleUser, Text: "/tool x {}"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "x"}}},
		{Role: RoleTool, ToolCallID: "1", Name: "x", Text: "fine"},
	}})
	if text != "tool x returned: fine" || resp.StopReason != StopEndTurn {
		t.Errorf("after tool: %q %q", text, resp.StopReason)
	}
	if _, _, _, err := collect(t, e, Request{Messages: []Message{{Role: RoleUser, Text: "/fail boom"}}}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("/fail: %v", err)
	}
	if _, _, _, err := collect(t, e, Request{Messages: []Message{{Role: RoleUser, Text: "/tool x [1]"}}}); err == nil {
		t.Error("/tool with non-object arguments accepted")
	}
}

func TestImagesGoToTheModelAsImageContent(t *testing.T) {
	img := filepath.Join(t.TempDir(), "shot.png")
	os.WriteFile(img, []byte("PNGDATA"), 0o600)
	want := base64.StdEncoding.EncodeToString([]byte("PNGDATA"))
	msgs := []Message{{Role: RoleUser, Text: "what is this?", Images: []Image{{MimeType: "image/png", Path: img}}}}

	f := &fakeServer{path: "/chat/completions", events: []string{`data: {"choices":[{"index":0,"delta":{"content":"a cat"},"finish_reason":"stop"}]}`, `data: [DONE]`}}
	url := serve(t, f)
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: url}, env)
	if _, _, _, err := collect(t, p, Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	parts := f.lastBody.Load().(map[string]any)["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if len(parts) != 2 || parts[0].(map[string]any)["text"] != "what is this?" ||
		parts[1].(map[string]any)["image_url"].(map[string]any)["url"] != "data:image/png;base64,"+want {
		t.Errorf("openai content %v", parts)
	}

	fa := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}"}}
	urla := serve(t, fa)
	a, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: urla}, env)
	if _, _, _, err := collect(t, a, Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	blocks := fa.lastBody.Load().(map[string]any)["messages"].([]any)[0].(map[string]any)["content"].([]any)
	src, _ := blocks[0].(map[string]any)["source"].(map[string]any)
	if len(blocks) != 2 || src["type"] != "base64" || src["media_type"] != "image/png" || src["data"] != want || blocks[1].(map[string]any)["text"] != "what is this?" {
		t.Errorf("anthropic content %v", blocks)
	}
	// A vanished image is a clear error, not a silent drop.
	os.Remove(img)
	if _, _, _, err := collect(t, p, Request{Messages: msgs}); err == nil || !strings.Contains(err.Error(), "image "+img) {
		t.Errorf("missing image: %v", err)
	}
}

// An image a tool gave reaches the model as an image: Anthropic's in the
// tool_result's content; OpenAI's tool messages take text only, so in a
// user message after the run of tool messages (never between them).
func TestToolImagesGoToTheModel(t *testing.T) {
	img := filepath.Join(t.TempDir(), "shot.png")
	os.WriteFile(img, []byte("PNGDATA"), 0o600)
	want := base64.StdEncoding.EncodeToString([]byte("PNGDATA"))
	msgs := []Message{
		{Role: RoleUser, Text: "take a screenshot"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "shot", Input: json.RawMessage(`{}`)}, {ID: "c2", Name: "add", Input: json.RawMessage(`{}`)}}},
		{Role: RoleTool, ToolCallID: "c1", Name: "shot", Text: "[image image/png, 7 bytes]", Images: []Image{{MimeType: "image/png", Path: img}}},
		{Role: RoleTool, ToolCallID: "c2", Name: "add", Text: "3"},
	}
	f := &fakeServer{path: "/chat/completions", events: []string{`data: {"choices":[{"index":0,"delta":{"content":"a cat"},"finish_reason":"stop"}]}`, `data: [DONE]`}}
	p, _ := New("local", config.Provider{Kind: "openai", BaseURL: serve(t, f)}, env)
	if _, _, _, err := collect(t, p, Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	sent := f.lastBody.Load().(map[string]any)["messages"].([]any)
	var roles []string
	for _, m := range sent {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	if strings.Join(roles, " ") != "user assistant tool tool user" {
		t.Fatalf("openai roles %v", roles)
	}
	if c := sent[2].(map[string]any)["content"]; c != "[image image/png, 7 bytes]" {
		t.Errorf("the tool message: %v", c)
	}
	parts := sent[4].(map[string]any)["content"].([]any)
	if len(parts) != 2 || !strings.Contains(parts[0].(map[string]any)["text"].(string), "c1 (shot)") ||
		parts[1].(map[string]any)["image_url"].(map[string]any)["url"] != "data:image/png;base64,"+want {
		t.Errorf("openai's image message %v", parts)
	}

	fa := &fakeServer{path: "/v1/messages", events: []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}"}}
	a, _ := New("claude", config.Provider{Kind: "anthropic", BaseURL: serve(t, fa)}, env)
	if _, _, _, err := collect(t, a, Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	am := fa.lastBody.Load().(map[string]any)["messages"].([]any)
	results := am[2].(map[string]any)["content"].([]any)
	first := results[0].(map[string]any)
	content, _ := first["content"].([]any)
	if first["type"] != "tool_result" || first["tool_use_id"] != "c1" || len(content) != 2 {
		t.Fatalf("anthropic tool result %v", first)
	}
	src, _ := content[1].(map[string]any)["source"].(map[string]any)
	if content[0].(map[string]any)["text"] != "[image image/png, 7 bytes]" || src["media_type"] != "image/png" || src["data"] != want {
		t.Errorf("anthropic tool result's content %v", content)
	}
	if second := results[1].(map[string]any); second["content"] != "3" {
		t.Errorf("a result without images is text: %v", second)
	}
}

// Every kind the config accepts makes a provider that says it is of
// that kind; one it does not is refused by name.
func TestEveryConfigKindIsAProvider(t *testing.T) {
	for _, kind := range config.ProviderKinds {
		p, err := New("p", config.Provider{Kind: kind, BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, func(string) string { return "" })
		if err != nil {
			t.Errorf("kind %s: %v", kind, err)
			continue
		}
		if got := p.Info().Kind; got != kind {
			t.Errorf("kind %s: the provider says %q", kind, got)
		}
	}
	if _, err := New("p", config.Provider{Kind: "gemini"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), `unknown kind "gemini"`) {
		t.Errorf("unknown kind: %v", err)
	}
}
