package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// scripted serves one scripted SSE response per request (each frame
// written as given, then a blank line) and keeps every request body
// exactly as it came.
type scripted struct {
	mu      sync.Mutex
	scripts [][]string
	bodies  [][]byte
}

func (f *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	if len(f.scripts) == 0 {
		f.mu.Unlock()
		http.Error(w, `{"error":{"message":"no more scripted responses"}}`, 400)
		return
	}
	script := f.scripts[0]
	f.scripts = f.scripts[1:]
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, frame := range script {
		io.WriteString(w, frame+"\n\n")
		w.(http.Flusher).Flush()
	}
}

// message is request n's message i, as its bytes went on the wire.
func (f *scripted) message(t *testing.T, n, i int) json.RawMessage {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var req struct{ Messages []json.RawMessage }
	if n >= len(f.bodies) || json.Unmarshal(f.bodies[n], &req) != nil || i >= len(req.Messages) {
		t.Fatalf("request %d has no message %d (%d requests)", n, i, len(f.bodies))
	}
	return req.Messages[i]
}

// The reasoning a server wants back with a tool call (Anthropic's signed
// thinking blocks, DeepSeek's reasoning_content) goes back byte for byte
// on the next call, and again after the daemon restarts: it is kept in
// the store with the transcript.
func TestReasoningGoesBackAcrossARestart(t *testing.T) {
	anthropic := [][]string{{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":40,"output_tokens":1}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The file <a.txt> & \u00e9 \u2028 says?"}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkBx+9/z=="}}`,
		`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}}`,
		`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":1}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"read_file","input":{}}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.txt\"}"}}`,
		`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":2}`,
		`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}`,
		`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
	}}
	answer := func(text string) []string {
		return []string{
			`event: message_start` + "\n" + `data: {"type":"message_start","message":{"usage":{"input_tokens":90,"output_tokens":1}}}`,
			`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + text + `"}}`,
			`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
			`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
			`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
		}
	}
	anthropic = append(anthropic, answer("It says hi."), answer("Still hi."))

	deepseek := [][]string{{
		`data: {"id":"1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"I should read \u003ca.txt\u003e."},"finish_reason":null}]}`,
		`data: {"id":"1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0_x","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}]},"finish_reason":null}]}`,
		`data: {"id":"1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":339,"completion_tokens":83,"total_tokens":422,"prompt_tokens_details":{"cached_tokens":320}}}`,
		`data: [DONE]`,
	}}
	oaAnswer := func(text string) []string {
		return []string{`data: {"choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":"stop"}]}`, `data: [DONE]`}
	}
	deepseek = append(deepseek, oaAnswer("It says hi."), oaAnswer("Still hi."))

	for _, c := range []struct {
		name, provider string
		scripts        [][]string
		at             int // the tool-call message's place (OpenAI's system prompt is a message)
		// check says whether the assistant tool-call message carries the
		// reasoning as the server wants it.
		check func(msg map[string]any) bool
	}{
		{"anthropic", `kind = "anthropic"` + "\nmodel = \"claude-sonnet-4-5\"\n", anthropic, 1, func(m map[string]any) bool {
			content, _ := m["content"].([]any)
			if len(content) != 3 {
				return false
			}
			th, red, use := content[0].(map[string]any), content[1].(map[string]any), content[2].(map[string]any)
			return th["type"] == "thinking" && th["thinking"] == "The file <a.txt> & \u00e9 \u2028 says?" && th["signature"] == "EqQBCkYIBxgCKkBx+9/z==" &&
				red["type"] == "redacted_thinking" && red["data"] == "EmwKAhgBEgy3va3pzix/LafPsn4a" && use["type"] == "tool_use" && use["id"] == "toolu_01"
		}},
		{"deepseek", `kind = "openai"` + "\nmodel = \"deepseek-reasoner\"\n", deepseek, 2, func(m map[string]any) bool {
			calls, _ := m["tool_calls"].([]any)
			return m["reasoning_content"] == "I should read <a.txt>." && len(calls) == 1
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &scripted{scripts: c.scripts}
			srv := httptest.NewServer(f)
			defer srv.Close()
			base := srv.URL
			if c.name == "deepseek" {
				base += "/v1"
			}
			conf := "[providers.p]\n" + c.provider + "base_url = \"" + base + "\"\n[agents.default]\nprovider = \"p\"\n"
			dirs := testDirs(t)
			r := startOn(t, dirs, conf)
			a := connect(t, r.dirs.Endpoint, "")
			cwd := t.TempDir()
			os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("hi\n"), 0o644)
			sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
			if res := result(t, a.call("session/prompt", prompt(sid, "what does a.txt say?"))); res["content"] != "It says hi." {
				t.Fatalf("the tool loop: %v", res)
			}
			// Request 1 sent the assistant tool-call message back.
			inTurn := f.message(t, 1, c.at)
			var msg map[string]any
			if json.Unmarshal(inTurn, &msg); !c.check(msg) {
				t.Fatalf("the tool-call message went back as %s", inTurn)
			}
			a.nc.Close()
			r.stop()
			r.wait(t)

			// A new daemon reads the session from the store and sends the
			// same bytes.
			r = startOn(t, dirs, conf)
			a = connect(t, r.dirs.Endpoint, "")
			if res := result(t, a.call("session/new", `{"sessionId":`+quote(sid)+`}`)); res["resumed"] != true {
				t.Fatalf("resume: %v", res)
			}
			if res := result(t, a.call("session/prompt", prompt(sid, "and now?"))); res["content"] != "Still hi." {
				t.Fatalf("after the restart: %v", res)
			}
			if after := f.message(t, 2, c.at); string(after) != string(inTurn) {
				t.Errorf("after the restart the message went back as\n%s\nnot as before\n%s", after, inTurn)
			}
			if strings.Contains(string(f.message(t, 2, c.at)), "cache_control") {
				t.Errorf("a breakpoint on an old message")
			}
		})
	}
}
