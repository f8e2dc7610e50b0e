package review

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// reviewerModel is the reviewer's model: a local server that speaks
// OpenAI's chat-completions stream as gpt-4o-mini streams it (the
// recorded openai-gpt4omini-get-capital: a first chunk with the role,
// each call's id and name with empty arguments, then the arguments in
// pieces, finish_reason tool_calls, a usage chunk with no choices,
// [DONE]). It answers every request with reply, which reads the input
// of the call under review (the prompt's "- input: " line); it keeps
// each request it was sent.
type reviewerModel struct {
	reply func(t *testing.T, input string) answer

	mu       sync.Mutex
	requests []chatRequest
}

// answer is one reply of the reviewer's model: text, then calls.
type answer struct {
	text  string
	calls []toolCall
}

// toolCall is one call in an answer: a tool's name and its arguments
// (sent as they are, whatever they hold).
type toolCall struct{ name, args string }

// say is an answer of text only.
func say(text string) answer { return answer{text: text} }

// call is an answer of one call of verdict.
func call(args string) answer { return answer{calls: []toolCall{{"verdict", args}}} }

// chatRequest is what the reviewer's model is sent, as far as the tests
// read it.
type chatRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// serve starts m on a local port for the test's length; its URL is the
// provider's base_url.
func (m *reviewerModel) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			t.Errorf("the reviewer's request: %v", err)
			http.Error(w, `{"error":{"message":"bad request"}}`, 400)
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, req)
		m.mu.Unlock()
		_, input, _ := strings.Cut(req.Messages[len(req.Messages)-1].Content, "\n- input: ")
		input, _, _ = strings.Cut(input, "\n")
		m.reply(t, input).stream(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// stream writes a as OpenAI streams it.
func (a answer) stream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choices any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-review", "object": "chat.completion.chunk", "created": 1782955817,
			"model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_d0469e1700", "choices": choices, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	delta := func(d map[string]any, finish any) {
		chunk([]any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}, nil)
	}
	first := map[string]any{"role": "assistant", "content": "", "refusal": nil}
	if a.text == "" {
		first["content"] = nil
	}
	for _, word := range strings.SplitAfter(a.text, " ") {
		if word != "" {
			first["content"] = word
			delta(first, nil)
			first = map[string]any{}
		}
	}
	for i, c := range a.calls {
		first["tool_calls"] = []any{map[string]any{"index": i, "id": fmt.Sprintf("call_review%d", i), "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}
		delta(first, nil)
		first = map[string]any{}
		for args := c.args; args != ""; {
			n := min(len(args), 7)
			delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args[:n]}}}}, nil)
			args = args[n:]
		}
	}
	finish := "stop"
	if len(a.calls) > 0 {
		finish = "tool_calls"
	}
	delta(map[string]any{}, finish)
	chunk([]any{}, map[string]any{"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
