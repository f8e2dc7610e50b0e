package daemon

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A steer during a streaming turn joins the model's next call; the turn
// ends on its answer; the steer is in the history as a steered
// user_message of the turn. With no turn running it is promptRequired,
// or starts one; a steer for another turn is refused naming the running
// one.
func TestSteer(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	steer := func(params string) map[string]any {
		return a.call("session/steer", `{"sessionId":`+quote(sid)+`,`+params+`}`)
	}
	done := a.send("session/prompt", prompt(sid, "/delay 10\n/chunks 100"))
	first := a.until("user_message")
	turn := first["turnId"].(string)
	if !strings.HasPrefix(turn, "turn_") {
		t.Fatalf("user_message %v", first)
	}
	a.until("agent_message_chunk")
	if g := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`)); g["runningTurnId"] != turn {
		t.Errorf("session/get runningTurnId %v, want %s", g["runningTurnId"], turn)
	}
	if r := steer(`"prompt":"x","expectedTurnId":"turn_other"`); errCode(r) != -32002 || r["error"].(map[string]any)["data"].(map[string]any)["runningTurnId"] != turn {
		t.Errorf("a steer for another turn: %v", r)
	}
	res := result(t, steer(`"prompt":"use the other file","expectedTurnId":"`+turn+`"`))
	if res["outcome"] != "injected" || res["turnId"] != turn {
		t.Fatalf("steer: %v", res)
	}
	pr := result(t, a.wait(done, "prompt"))
	if pr["turnId"] != turn || pr["content"] != "echo: use the other file" {
		t.Errorf("the turn's answer %v", pr)
	}
	steered := a.until("user_message")
	if steered["steered"] != true || steered["text"] != "use the other file" || steered["turnId"] != turn {
		t.Errorf("the steer in the history %v", steered)
	}
	if tc := a.until("turn_complete"); tc["turnId"] != turn {
		t.Errorf("turn_complete %v", tc)
	}
	// The stream in flight was not cut: all its 100 chunks came before
	// the steer joined.
	chunks := 0
	for _, e := range history(t, a, sid) {
		if e["type"] == "user_message" && e["steered"] == true {
			break
		}
		if e["type"] == "agent_message_chunk" {
			chunks++
		}
	}
	if chunks != 100 {
		t.Errorf("%d chunks of the call in flight before the steer, want 100", chunks)
	}
	// No turn: nothing, or a new one.
	if res := result(t, steer(`"prompt":"idle"`)); res["outcome"] != "promptRequired" {
		t.Errorf("an idle steer: %v", res)
	}
	if res := result(t, steer(`"prompt":"start it","idleBehavior":"start"`)); res["outcome"] != "startedNewTurn" {
		t.Errorf("an idle steer that starts: %v", res)
	}
	if tc := a.until("turn_complete"); tc["content"] != "echo: start it" {
		t.Errorf("the started turn %v", tc)
	}
}

// A steer racing the turn's end is injected (and the model sees it,
// once) or answered promptRequired (and nothing runs): never both,
// never lost.
func TestSteerRacingTheTurnsEnd(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	injected, required := 0, 0
	for i := range 200 {
		text := "steer " + ftoa(float64(i))
		done := a.send("session/prompt", prompt(sid, "hi"))
		res := result(t, a.call("session/steer", `{"sessionId":`+quote(sid)+`,"prompt":`+quote(text)+`}`))
		result(t, a.wait(done, "prompt")) // after the turn, steers and all
		seen := 0
		for _, e := range history(t, a, sid) {
			if e["type"] == "user_message" && e["text"] == text {
				seen++
			}
		}
		switch res["outcome"] {
		case "injected":
			injected++
			if seen != 1 {
				t.Fatalf("steer %d injected, seen %d times", i, seen)
			}
		case "promptRequired":
			required++
			if seen != 0 {
				t.Fatalf("steer %d answered promptRequired, yet seen %d times", i, seen)
			}
		default:
			t.Fatalf("steer %d: %v", i, res)
		}
	}
	t.Logf("of 200 racing steers: %d injected, %d promptRequired", injected, required)
}

// A steer sent while a tool runs waits for the tool (never cutting it)
// and joins the model's next call after the tool's result, with its
// image; every event of the turn carries the turn's id, the steer names
// the client that sent it, and session/get lists who is attached.
func TestSteerDuringAToolCall(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	args, _ := json.Marshal(map[string]string{"command": "while [ ! -e " + gate + " ]; do sleep 0.02; done; echo the tool ran whole"})
	call, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
		map[string]any{"index": 0, "id": "call_1", "type": "function", "function": map[string]any{"name": "shell", "arguments": string(args)}}}}}}})
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fake := &fakeOpenAI{scripts: [][]string{
		{string(call), `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`},
		{content("Using the other file."), stop, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"\"\n[agents.default]\nprovider = \"fake\"\nrisk = \"full\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("initialize", `{"protocolVersion":1,"clientInfo":{"name":"phone  on\nthe bus","version":"1"}}`))
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`))
	done := a.send("session/prompt", prompt(sid, "fix it"))
	turn := a.until("user_message")["turnId"].(string)
	a.until("tool_call")
	res := result(t, b.call("session/steer", `{"sessionId":`+quote(sid)+`,"prompt":"use the other file","attachments":[{"dataB64":"iVBORw0KGgo=","mimeType":"image/png"}]}`))
	if res["outcome"] != "injected" || res["turnId"] != turn {
		t.Fatalf("steer: %v", res)
	}
	g := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))
	if at, _ := g["attached"].([]any); len(at) != 2 || !strings.Contains(fmt.Sprint(at), "phone on the bus") {
		t.Errorf("session/get attached %v", g["attached"])
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if pr := result(t, a.wait(done, "prompt")); pr["content"] != "Using the other file." {
		t.Fatalf("the turn's answer %v", pr)
	}
	// The model's second call: the tool's whole result, then the steer
	// with its image.
	fake.mu.Lock()
	msgs := fake.bodies[1]["messages"].([]any)
	fake.mu.Unlock()
	n := len(msgs)
	if tr := msgs[n-2].(map[string]any); tr["role"] != "tool" || !strings.Contains(fmt.Sprint(tr["content"]), "the tool ran whole") {
		t.Errorf("before the steer: %v", tr)
	}
	last := msgs[n-1].(map[string]any)
	parts, _ := last["content"].([]any)
	if last["role"] != "user" || len(parts) != 2 || !strings.HasPrefix(parts[0].(map[string]any)["text"].(string), "use the other file") ||
		parts[1].(map[string]any)["image_url"].(map[string]any)["url"] != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("the steer as the model saw it: %v", last)
	}
	// The turn's events, as stored: each has the turn's id; the steer
	// comes after the tool's result and names its sender.
	var types []string
	for _, e := range history(t, a, sid) {
		if e["type"] == "queue_update" {
			continue
		}
		types = append(types, e["type"].(string))
		if e["turnId"] != turn {
			t.Errorf("%v has turnId %v, want %s", e["type"], e["turnId"], turn)
		}
		if e["type"] == "user_message" && e["steered"] == true && (e["clientName"] != "phone on the bus" || e["clientId"] == "" || e["clientId"] == nil) {
			t.Errorf("the steer's sender: %v", e)
		}
	}
	tr := slices.Index(types, "tool_result")
	if tr < 0 || tr+1 >= len(types) || types[tr+1] != "user_message" {
		t.Errorf("the turn's events %v: the steer should follow the tool's result", types)
	}
}
