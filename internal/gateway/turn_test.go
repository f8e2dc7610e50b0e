package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

// A turn over /ws that asks for approval: the events stream, the
// approval is answered over the same WebSocket, the tool runs.
func TestWSTurnWithApproval(t *testing.T) {
	g := start(t, func(c *config.Config, _ *daemon.Options) {
		a := c.Agents["default"]
		a.Risk = "supervised"
		c.Agents["default"] = a
	})
	tok, _ := g.pair("ws")
	c := wsDial(t, g, "/ws", tok, nil)
	wsCall(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	cwd := t.TempDir()
	if m := wsCall(t, c, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"sessionId":"w1","cwd":"`+cwd+`"}}`); errCode(m) != 0 {
		t.Fatal(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"w1","prompt":"/tool shell {\"command\":\"echo hi\"}"}}`))
	var types []string
	var output string
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (events so far %v)", err, types)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Type, RequestID, RawOutput string
			} `json:"params"`
			Result struct{ StopReason string } `json:"result"`
		}
		json.Unmarshal(b, &m)
		if m.Method == "session/update" {
			types = append(types, m.Params.Type)
			switch m.Params.Type {
			case "approval_request":
				c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":4,"method":"session/approve","params":{"sessionId":"w1","requestId":"`+m.Params.RequestID+`","decision":"allow_once"}}`))
			case "tool_result":
				output = m.Params.RawOutput
			}
			continue
		}
		if string(m.ID) == "3" {
			if m.Result.StopReason != "end_turn" {
				t.Fatalf("prompt answer %s", b)
			}
			break
		}
	}
	if !strings.Contains(output, "hi") || !strings.Contains(strings.Join(types, " "), "tool_call approval_request approval_resolved tool_result") {
		t.Fatalf("events %v, tool output %q", types, output)
	}
}

type sseEvent struct {
	id   int64
	name string
	data string
}

// readSSE reads events until stop says so or the stream ends.
func readSSE(t *testing.T, resp *http.Response, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	var out []sseEvent
	var ev sseEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, ev)
			if stop != nil && stop(ev) {
				return out
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
	return out
}

// A turn streamed as Server-Sent Events, the stream dropped mid-turn and
// resumed with Last-Event-ID: every event once, in order, then the result.
func TestSSEPromptResumesAfterADrop(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("sse")
	req, _ := http.NewRequest("POST", g.url+"/api/sessions/s1/prompt", strings.NewReader(`{"prompt":"/chunks 40\n/delay 20","cwd":"`+t.TempDir()+`"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := g.http.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("prompt: %v %v", resp, err)
	}
	first := readSSE(t, resp, func(e sseEvent) bool { return e.id >= 5 })
	resp.Body.Close() // the drop
	last := first[len(first)-1].id
	req, _ = http.NewRequest("POST", g.url+"/api/sessions/s1/prompt", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	resp, err = g.http.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("resume: %v %v", resp, err)
	}
	rest := readSSE(t, resp, func(e sseEvent) bool { return e.name == "result" })
	resp.Body.Close()
	all := append(first, rest...)
	for i, e := range all[:len(all)-1] {
		if e.name != "session/update" || e.id != int64(i+1) {
			t.Fatalf("event %d: %+v (want seq %d)", i, e, i+1)
		}
	}
	if end := all[len(all)-2]; !strings.Contains(end.data, `"turn_complete"`) {
		t.Fatalf("last update %+v", end)
	}
	if res := all[len(all)-1]; res.name != "result" {
		t.Fatalf("stream ends with %+v", res)
	}
	// The session is idle now: a resume from the start replays it all and
	// ends.
	req, _ = http.NewRequest("POST", g.url+"/api/sessions/s1/prompt", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Last-Event-ID", "0")
	resp, _ = g.http.Do(req)
	again := readSSE(t, resp, nil)
	resp.Body.Close()
	if len(again) != len(all) || again[len(again)-1].name != "result" {
		t.Fatalf("replay of a finished turn: %d events, want %d", len(again), len(all))
	}
}

func TestWebhook(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("hook")
	resp, body := g.do("POST", "/webhook?wait=true", bearer(tok), `{"prompt":"from a hook","sessionId":"hook1","cwd":"`+t.TempDir()+`"}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"content":"echo: from a hook"`) {
		t.Fatalf("wait=true: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("POST", "/webhook", bearer(tok), `{"prompt":"later"}`)
	var r struct{ SessionID string }
	json.Unmarshal(body, &r)
	if resp.StatusCode != 202 || r.SessionID == "" {
		t.Fatalf("202: %d %s", resp.StatusCode, body)
	}
	// The turn runs on after the answer: its events reach the store.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body = g.do("GET", "/api/sessions/"+r.SessionID+"/history", bearer(tok), "")
		if strings.Contains(string(body), "turn_complete") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook's turn never completed: %s", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp, body = g.do("POST", "/webhook", bearer(tok), `{"sessionId":"x"}`); resp.StatusCode != 400 {
		t.Fatalf("no prompt: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("DELETE", "/api/sessions/hook1", bearer(tok), "")
	if resp.StatusCode != 200 {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	if resp, _ = g.do("GET", "/api/sessions/hook1", bearer(tok), ""); resp.StatusCode != 404 {
		t.Fatalf("deleted session: %d", resp.StatusCode)
	}
}
