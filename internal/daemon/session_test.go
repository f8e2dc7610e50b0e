package daemon

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/schema/schematest"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// peer is a test client of the daemon's socket: it routes responses to
// their callers, keeps every session/update, and answers the daemon's
// requests with onRequest.
type peer struct {
	t  *testing.T
	nc net.Conn

	mu        sync.Mutex
	nextID    int
	waiting   map[string]chan map[string]any
	methods   map[string]string // id → the method asked, to check its result against the schema
	checked   map[any]int       // events of each type checked against the schema so far
	events    []map[string]any
	eventCh   chan map[string]any
	changes   chan map[string]any // session/changed notifications
	notes     chan string         // the other notifications' methods and params, "METHOD PARAMS"
	closed    chan struct{}
	onRequest func(method string, params map[string]any) string // returns the raw reply frame's "result"/"error" part
}

func connect(t *testing.T, path string, caps string) *peer {
	t.Helper()
	nc, err := transport.Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, nc: nc, waiting: map[string]chan map[string]any{}, methods: map[string]string{}, eventCh: make(chan map[string]any, 1<<16),
		changes: make(chan map[string]any, 1<<10), notes: make(chan string, 1<<10), closed: make(chan struct{})}
	t.Cleanup(func() { nc.Close(); <-p.closed })
	go p.read()
	params := `{"protocolVersion":1}`
	if caps != "" {
		params = `{"protocolVersion":1,"clientCapabilities":` + caps + `}`
	}
	if r := p.call("initialize", params); r["error"] != nil {
		t.Fatalf("initialize: %v", r)
	}
	return p
}

// checkEvent says whether to check this event against the schema: the
// first 64 of each type and one in 4,096 after (a turn of 200,000 chunks
// would otherwise spend longer being checked than streamed, and slow the
// reader the tests measure). Read-loop only.
func (p *peer) checkEvent(typ any) bool {
	if p.checked == nil {
		p.checked = map[any]int{}
	}
	n := p.checked[typ]
	p.checked[typ] = n + 1
	return n < 64 || n%4096 == 0
}

func (p *peer) read() {
	defer close(p.closed)
	br := bufio.NewReaderSize(p.nc, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Errorf("daemon sent invalid JSON %q", line)
			return
		}
		if m["jsonrpc"] != "2.0" {
			p.t.Errorf("frame without jsonrpc 2.0: %s", line)
		}
		method, _ := m["method"].(string)
		id, hasID := m["id"]
		switch {
		case method == "session/update":
			ev := m["params"].(map[string]any)
			if p.checkEvent(ev["type"]) {
				var raw struct{ Params json.RawMessage }
				json.Unmarshal(line, &raw)
				schematest.Event(p.t, raw.Params)
			}
			p.mu.Lock()
			p.events = append(p.events, ev)
			p.mu.Unlock()
			select {
			case p.eventCh <- ev:
			default: // a test that does not wait on events; snapshot has them all
			}
		case method == "session/changed":
			var raw struct{ Params json.RawMessage }
			json.Unmarshal(line, &raw)
			schematest.Params(p.t, method, raw.Params)
			params, _ := m["params"].(map[string]any)
			select {
			case p.changes <- params:
			default:
			}
		case method != "" && !hasID: // a notification
			var raw struct{ Params json.RawMessage }
			json.Unmarshal(line, &raw)
			schematest.Params(p.t, method, raw.Params)
			select {
			case p.notes <- method + " " + string(raw.Params):
			default:
			}
		case method != "":
			var raw struct{ Params json.RawMessage }
			json.Unmarshal(line, &raw)
			schematest.Params(p.t, method, raw.Params)
			params, _ := m["params"].(map[string]any)
			reply := `"result":null`
			if p.onRequest != nil {
				reply = p.onRequest(method, params)
			}
			idj, _ := json.Marshal(id)
			if reply != "" {
				fmt.Fprintf(p.nc, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", idj, reply)
			}
		case hasID:
			k := fmt.Sprint(id)
			p.mu.Lock()
			ch := p.waiting[k]
			delete(p.waiting, k)
			asked := p.methods[k]
			delete(p.methods, k)
			p.mu.Unlock()
			if _, ok := m["result"]; ok && asked != "" {
				var raw struct{ Result json.RawMessage }
				json.Unmarshal(line, &raw)
				schematest.Result(p.t, asked, raw.Result)
			}
			if ch != nil {
				ch <- m
			}
		}
	}
}

// send sends a request and returns the channel of its response.
func (p *peer) send(method, params string) chan map[string]any {
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	ch := make(chan map[string]any, 1)
	p.waiting[fmt.Sprint(id)] = ch
	p.methods[fmt.Sprint(id)] = method
	p.mu.Unlock()
	fmt.Fprintf(p.nc, `{"jsonrpc":"2.0","method":%q,"params":%s,"id":%d}`+"\n", method, params, id)
	return ch
}

func (p *peer) call(method, params string) map[string]any {
	p.t.Helper()
	return p.wait(p.send(method, params), method)
}

func (p *peer) wait(ch chan map[string]any, what string) map[string]any {
	p.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		p.t.Fatalf("no answer to %s", what)
	}
	return nil
}

func result(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %v", r)
	}
	return res
}

// until reads events until one of type typ arrives, returning it.
func (p *peer) until(typ string) map[string]any {
	p.t.Helper()
	for {
		select {
		case ev := <-p.eventCh:
			if ev["type"] == typ {
				return ev
			}
		case <-time.After(20 * time.Second):
			p.t.Fatalf("no %s event", typ)
		}
	}
}

func (p *peer) snapshot() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.events...)
}

func types(evs []map[string]any) string {
	var s []string
	for _, e := range evs {
		s = append(s, e["type"].(string))
	}
	return strings.Join(s, " ")
}

// checkSeqs asserts seqs run from first with no gap.
func checkSeqs(t *testing.T, evs []map[string]any, first int) {
	t.Helper()
	for i, e := range evs {
		if int(e["seq"].(float64)) != first+i {
			lo, hi := max(i-3, 0), min(i+3, len(evs))
			t.Fatalf("event %d of %d has seq %v, want %d (gap or reorder); around it: %v", i, len(evs), e["seq"], first+i, types(evs[lo:hi]))
		}
	}
}

// startWith runs a daemon with config.toml text (after the defaults).
func startWith(t *testing.T, toml string, tune ...func(*Options)) *running {
	t.Helper()
	return startOn(t, testDirs(t), toml, tune...)
}

// startOn is startWith on given directories (to restart on the same data).
func startOn(t *testing.T, dirs config.Dirs, toml string, tune ...func(*Options)) *running {
	t.Helper()
	os.MkdirAll(dirs.ConfigDir, 0o700)
	path := filepath.Join(dirs.ConfigDir, "config.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	r := &running{dirs: dirs, stop: cancel, done: make(chan error, 1)}
	o := Options{Version: "test", Dirs: dirs, Config: cfg, Ready: func(string) { close(ready) },
		Getenv: func(string) string { return "" }}
	for _, f := range tune {
		f(&o)
	}
	go func() { r.done <- Run(ctx, o) }()
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("daemon did not start: %v", err)
	}
	t.Cleanup(func() { cancel(); r.wait(t) })
	return r
}

const echoAgent = `
[providers.echo]
kind = "echo"
[agents.default]
provider = "echo"
`

func newSession(t *testing.T, p *peer, extra string) string {
	t.Helper()
	cwd := t.TempDir()
	r := result(t, p.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"`+extra+`}`))
	return r["sessionId"].(string)
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func prompt(sid, text string) string {
	return `{"sessionId":` + quote(sid) + `,"prompt":` + quote(text) + `}`
}

// fakeOpenAI serves scripted Chat Completions streams, one per request.
type fakeOpenAI struct {
	url     string // where it serves, when a test keeps it
	mu      sync.Mutex
	scripts [][]string
	bodies  []map[string]any
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
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
	for _, d := range script {
		fmt.Fprintf(w, "data: %s\n\n", d)
		w.(http.Flusher).Flush()
	}
}

func content(s string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}}}})
	return string(b)
}

func TestPromptToolApprovalAndAnswerWithFakeOpenAI(t *testing.T) {
	fake := &fakeOpenAI{scripts: [][]string{
		{content("I'll "), content("check."),
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_9","type":"function","function":{"name":"shell","arguments":"{\"comm"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"and\":\"echo hello-from-shell\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":11,"completion_tokens":5}}`, `[DONE]`},
		{content("The shell "), content("said hello."), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":4}}`, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, `
[providers.fake]
kind = "openai"
base_url = "`+srv.URL+`/v1"
model = "test-model"
[agents.default]
provider = "fake"
system_prompt = "be brief"
`)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	b := connect(t, r.dirs.Endpoint, "")
	if res := result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`)); res["resumed"] != true {
		t.Fatalf("second client attach: %v", res)
	}
	done := a.send("session/prompt", prompt(sid, "say hello via the shell"))
	req := b.until("approval_request")
	if req["toolName"] != "shell" || req["summary"] != "Run: echo hello-from-shell" {
		t.Fatalf("approval request %v", req)
	}
	ok := result(t, b.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(req["requestId"].(string))+`,"decision":"allow_once"}`))
	if ok["accepted"] != true {
		t.Fatalf("approve: %v", ok)
	}
	// A second answer loses.
	late := result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(req["requestId"].(string))+`,"decision":"reject_once"}`))
	if late["accepted"] != false {
		t.Fatalf("second answer accepted: %v", late)
	}
	res := result(t, a.wait(done, "prompt"))
	if res["stopReason"] != "end_turn" || res["content"] != "The shell said hello." {
		t.Fatalf("result %v", res)
	}
	a.until("turn_complete") // already here: it is written before the result
	evA := a.snapshot()
	want := "input_update user_message agent_message_chunk agent_message_chunk context_usage tool_call approval_request approval_resolved tool_result agent_message_chunk agent_message_chunk context_usage input_update turn_complete"
	if got := types(evA); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	checkSeqs(t, evA, 1)
	// The result is the text streamed after the last tool result.
	var streamed string
	for _, e := range evA[9:11] {
		streamed += e["text"].(string)
	}
	if streamed != res["content"] {
		t.Errorf("streamed %q, result %q", streamed, res["content"])
	}
	if tr := evA[8]; tr["rawOutput"] != "hello-from-shell\n" || tr["isError"] != false || tr["toolCallId"] != "call_9" {
		t.Errorf("tool result %v", tr)
	}
	if ar := evA[7]; ar["decision"] != "allow_once" || ar["by"] != "client" {
		t.Errorf("approval resolved %v", ar)
	}
	// The second client saw the same events, same seqs (turn_complete
	// may still be on its way).
	b.until("turn_complete")
	evB := b.snapshot()
	if types(evB) != want {
		t.Errorf("client B events %s", types(evB))
	}
	for i := range evB {
		if evB[i]["seq"] != evA[i]["seq"] {
			t.Fatalf("seq mismatch at %d", i)
		}
	}
	// The model got the tool result and the system prompt.
	fake.mu.Lock()
	second := fake.bodies[1]
	fake.mu.Unlock()
	msgs := second["messages"].([]any)
	if sys, _ := msgs[0].(map[string]any)["content"].(string); !strings.HasPrefix(sys, "be brief\n\n<environment>") || msgs[3].(map[string]any)["content"] != "hello-from-shell\n" {
		t.Errorf("second request messages %v", msgs)
	}
	// History replays exactly what was streamed.
	h := result(t, a.call("session/history", `{"sessionId":`+quote(sid)+`}`))
	if evs := h["events"].([]any); len(evs) != len(evA) || h["lastSeq"].(float64) != float64(len(evA)) {
		t.Errorf("history has %d events (lastSeq %v), streamed %d", len(evs), h["lastSeq"], len(evA))
	}
	// A provider failure ends the turn with stopReason error; the session
	// stays usable.
	fail := result(t, a.call("session/prompt", prompt(sid, "again")))
	if fail["stopReason"] != "error" || !strings.Contains(fail["error"].(map[string]any)["message"].(string), "provider fake ("+srv.URL+"/v1/chat/completions): HTTP 400: no more scripted responses") {
		t.Errorf("failed turn %v", fail)
	}
	tc := a.until("turn_complete")
	if tc["outcome"] != "failed" {
		t.Errorf("turn_complete %v", tc)
	}
}

// The model is told where it is and what the project asks: the
// environment and the AGENTS.md files from the repository root down to
// the session's directory; a resumed session is told again, as things
// are then.
func TestSystemPromptTellsTheModelWhereItIs(t *testing.T) {
	fake := &fakeOpenAI{scripts: [][]string{
		{content("ok"), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`},
		{content("ok"), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("ref: refs/heads/topic\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Use tabs."), 0o644)
	cwd := filepath.Join(repo, "cmd")
	os.MkdirAll(cwd, 0o755)
	toml := "[providers.fake]\nkind = \"openai\"\nbase_url = \"" + srv.URL + "\"\n[agents.default]\nprovider = \"fake\"\n"
	dirs := testDirs(t)
	r := startOn(t, dirs, toml)
	a := connect(t, r.dirs.Endpoint, "")
	res := result(t, a.call("session/new", `{"sessionId":"where","cwd":`+quote(cwd)+`}`))
	if files, _ := res["instructions"].([]any); len(files) != 1 || files[0] != filepath.Join(repo, "AGENTS.md") {
		t.Fatalf("session/new instructions: %v", res["instructions"])
	}
	result(t, a.call("session/prompt", prompt("where", "hi")))
	r.stop()
	r.wait(t)
	os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("Use spaces now."), 0o644)
	r2 := startOn(t, dirs, toml)
	b := connect(t, r2.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":"where"}`))
	result(t, b.call("session/prompt", prompt("where", "again")))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	system := func(i int) string {
		m := fake.bodies[i]["messages"].([]any)[0].(map[string]any)
		if m["role"] != "system" {
			t.Fatalf("request %d starts with %v", i, m)
		}
		return m["content"].(string)
	}
	first, second := system(0), system(1)
	for _, want := range []string{"Working directory: " + cwd, "branch topic", "Today's date: " + time.Now().Format("2006-01-02"), "Use tabs."} {
		if !strings.Contains(first, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, first)
		}
	}
	if !strings.Contains(second, "Use spaces now.") || strings.Contains(second, "Use tabs.") {
		t.Errorf("the resumed session's system prompt is not refreshed:\n%s", second)
	}
}

// A session resumed by a new daemon gives the model its whole transcript.
func TestResumedSessionKeepsModelContext(t *testing.T) {
	fake := &fakeOpenAI{scripts: [][]string{
		{content("Paris."), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`},
		{content("Lyon."), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	toml := "[providers.fake]\nkind = \"openai\"\nbase_url = \"" + srv.URL + "\"\n[agents.default]\nprovider = \"fake\"\n"
	dirs := testDirs(t)
	r := startOn(t, dirs, toml)
	a := connect(t, r.dirs.Endpoint, "")
	result(t, a.call("session/new", `{"sessionId":"geo"}`))
	result(t, a.call("session/prompt", prompt("geo", "Capital of France?")))
	r.stop()
	r.wait(t)

	r2 := startOn(t, dirs, toml)
	b := connect(t, r2.dirs.Endpoint, "")
	res := result(t, b.call("session/new", `{"sessionId":"geo"}`))
	if res["resumed"] != true || res["messageCount"].(float64) != 2 || res["lastSeq"].(float64) != 6 {
		t.Fatalf("resume %v", res)
	}
	if got := result(t, b.call("session/prompt", prompt("geo", "And its second city?"))); got["content"] != "Lyon." {
		t.Fatalf("second turn %v", got)
	}
	fake.mu.Lock()
	msgs := fake.bodies[1]["messages"].([]any)
	fake.mu.Unlock()
	var roles []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["role"] == "system" {
			continue
		}
		roles = append(roles, fmt.Sprint(mm["role"], ":", mm["content"]))
	}
	if got := strings.Join(roles, " | "); got != "user:Capital of France? | assistant:Paris. | user:And its second city?" {
		t.Errorf("model context after resume: %s", got)
	}
	if ev := b.until("input_update"); ev["seq"].(float64) != 7 {
		t.Errorf("first event after resume has seq %v, want 7", ev["seq"])
	}
}

// An image attached to a prompt reaches the model as image content, and
// a marker typed into prompt text does not read any file.
func TestImageAttachmentReachesTheModel(t *testing.T) {
	fake := &fakeOpenAI{scripts: [][]string{
		{content("A dot."), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`},
		{content("ok"), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"\"\n[agents.default]\nprovider = \"fake\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	result(t, a.call("session/prompt", `{"sessionId":`+quote(sid)+`,"prompt":"describe","attachments":[{"dataB64":"iVBORw0KGgo=","mimeType":"image/png"}]}`))
	result(t, a.call("session/prompt", prompt(sid, "[IMAGE:/etc/hostname]")))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	first := fake.bodies[0]["messages"].([]any)[1].(map[string]any)["content"].([]any) // after the system prompt
	if len(first) != 2 || first[1].(map[string]any)["image_url"].(map[string]any)["url"] != "data:image/png;base64,iVBORw0KGgo=" {
		t.Errorf("image not sent: %v", first)
	}
	msgs := fake.bodies[1]["messages"].([]any)
	if typed := msgs[len(msgs)-1].(map[string]any)["content"]; typed != "[IMAGE:/etc/hostname]" {
		t.Errorf("typed marker became %v", typed)
	}
	// The transcript keeps the image for later turns.
	if again := msgs[1].(map[string]any)["content"].([]any); len(again) != 2 {
		t.Errorf("first message in the second request: %v", again)
	}
}

// A session on a small context window: older turns leave the model's
// view (history_trimmed), every message stays stored, and session/compact
// forces it.
func TestContextWindowCompaction(t *testing.T) {
	// One tool: the window's room for the conversation does not shrink
	// as tools are added.
	r := startWith(t, "[providers.e]\nkind = \"echo\"\ncontext_window = 2048\n[agents.default]\nprovider = \"e\"\ntools = [\"read_file\"]\n")
	a := connect(t, r.dirs.Endpoint, "")
	result(t, a.call("session/new", `{"sessionId":"long","cwd":"/"}`))
	long := strings.Repeat("word ", 240) // 300 tokens
	for i := range 20 {
		if res := result(t, a.call("session/prompt", prompt("long", fmt.Sprintf("turn %d %s", i, long)))); res["stopReason"] != "end_turn" {
			t.Fatalf("turn %d: %v", i, res)
		}
	}
	tr := a.until("history_trimmed")
	if tr["reason"] != "context_window" || tr["droppedMessages"].(float64) < 2 || tr["keptTurns"].(float64) < 1 {
		t.Fatalf("history_trimmed %v", tr)
	}
	for _, e := range a.snapshot() {
		if e["type"] == "context_usage" && e["maxContextTokens"].(float64) != 2048 {
			t.Fatalf("context_usage %v", e)
		}
	}
	for i := range 3 { // short turns: the view holds them all
		result(t, a.call("session/prompt", prompt("long", fmt.Sprintf("short %d", i))))
	}
	res := result(t, a.call("session/compact", `{"sessionId":"long"}`))
	if res["sessionId"] != "long" {
		t.Fatalf("compact: %v", res)
	}
	forced := a.until("history_trimmed")
	for forced["reason"] != "requested" {
		forced = a.until("history_trimmed")
	}
	if res["droppedMessages"].(float64) == 0 || forced["keptTurns"].(float64) != 1 {
		t.Fatalf("no forced trim to one turn: %v", forced)
	}
	// Everything is stored still.
	list := result(t, a.call("session/get", `{"sessionId":"long"}`))
	if list["messageCount"].(float64) != 46 {
		t.Fatalf("stored messages: %v", list["messageCount"])
	}
	users, since := 0, 0.0
	for {
		h := result(t, a.call("session/history", fmt.Sprintf(`{"sessionId":"long","sinceSeq":%d}`, int64(since))))
		for _, e := range h["events"].([]any) {
			ev := e.(map[string]any)
			if ev["type"] == "user_message" {
				users++
			}
			since = ev["seq"].(float64)
		}
		if h["more"] != true {
			break
		}
	}
	if users != 23 {
		t.Fatalf("history has %d user messages, want 23", users)
	}
}

// The agent's model overrides the provider's; session/configure switches
// a session's model (kept across a restart); models lists the provider's.
func TestModelsAndSessionConfigure(t *testing.T) {
	fake := &fakeOpenAI{}
	for range 3 {
		fake.scripts = append(fake.scripts, []string{content("ok"), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`, `[DONE]`})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"agent-model"},{"id":"other-model"}]}`))
	})
	mux.Handle("POST /v1/chat/completions", fake)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	toml := "[providers.fake]\nkind = \"openai\"\nbase_url = \"" + srv.URL + "/v1\"\nmodel = \"provider-model\"\n[agents.default]\nprovider = \"fake\"\nmodel = \"agent-model\"\n"
	dirs := testDirs(t)
	r := startOn(t, dirs, toml)
	a := connect(t, r.dirs.Endpoint, "")
	ns := result(t, a.call("session/new", `{"sessionId":"m"}`))
	if ns["provider"] != "fake" || ns["model"] != "agent-model" || ns["providerUrl"] != srv.URL+"/v1" || ns["contextWindow"].(float64) != 8192 {
		t.Fatalf("session/new: %v", ns)
	}
	st := result(t, a.call("status", `{}`))
	if st["model"] != "agent-model" || st["providerUrl"] != srv.URL+"/v1" {
		t.Fatalf("status: %v", st)
	}
	ml := result(t, a.call("models", `{}`))
	if ml["current"] != "agent-model" || fmt.Sprint(ml["models"]) != "[agent-model other-model]" {
		t.Fatalf("models: %v", ml)
	}
	result(t, a.call("session/prompt", prompt("m", "one")))
	cr := result(t, a.call("session/configure", `{"sessionId":"m","model":"other-model","risk":"readonly"}`))
	if cr["model"] != "other-model" || cr["risk"] != "readonly" {
		t.Fatalf("configure: %v", cr)
	}
	if bad := a.call("session/configure", `{"sessionId":"m","risk":"yolo"}`); errCode(bad) != -32602 {
		t.Fatalf("a bad risk: %v", bad)
	}
	result(t, a.call("session/prompt", prompt("m", "two")))
	r.stop()
	r.wait(t)
	r2 := startOn(t, dirs, toml)
	b := connect(t, r2.dirs.Endpoint, "")
	if ns := result(t, b.call("session/new", `{"sessionId":"m"}`)); ns["model"] != "other-model" || ns["risk"] != "readonly" {
		t.Fatalf("resumed: %v", ns)
	}
	result(t, b.call("session/prompt", prompt("m", "three")))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	var models []string
	for _, body := range fake.bodies {
		models = append(models, body["model"].(string))
	}
	if strings.Join(models, " ") != "agent-model other-model other-model" {
		t.Fatalf("models sent: %v", models)
	}
}

// mcpServer is the MCP test server (internal/mcptools/testdata/server).
func mcpServer(t testing.TB) string { return mcptest.Server(t) }

// mcpReady waits until the MCP server name is ready, a's session open
// already: status says so, or the session/mcpChanged its start sends
// comes.
func mcpReady(t *testing.T, a *peer, name string) {
	t.Helper()
	for {
		for _, s := range result(t, a.call("status", `{}`))["mcpServers"].([]any) {
			if s := s.(map[string]any); s["name"] == name && s["state"] == "ready" {
				return
			}
		}
		select {
		case <-a.notes:
		case <-time.After(30 * time.Second):
			t.Fatalf("MCP server %s never became ready", name)
		}
	}
}

// A configured server that hangs at start never stalls a turn: the
// turns go on without it (waiting only in its first turn_wait_ms), the
// other server's tools are there, and the model is told which server is
// not and why.
func TestHungMCPServerStallsNoTurn(t *testing.T) {
	bin := mcpServer(t)
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fake := &fakeOpenAI{scripts: [][]string{{content("one"), stop, `[DONE]`}, {content("two"), stop, `[DONE]`}}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"\"\n[agents.default]\nprovider = \"fake\"\n"+
		"[mcp]\nturn_wait_ms = 50\n[mcp.servers.hung]\ncommand = \""+bin+"\"\nargs = [\"-hang-start\"]\nstart_timeout_secs = 3600\n"+
		"[mcp.servers.calc]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	mcpReady(t, a, "calc") // however slow the machine: the turn's short wait is for hung
	for _, want := range []string{"one", "two"} {
		if res := result(t, a.call("session/prompt", prompt(sid, "hello"))); res["content"] != want {
			t.Fatalf("a turn: %v", res)
		}
	}
	// Both turns ended while the hung server is still in its start of
	// an hour: neither waited for it.
	for _, s := range result(t, a.call("status", `{}`))["mcpServers"].([]any) {
		if s := s.(map[string]any); s["name"] == "hung" && s["state"] != "starting" {
			t.Errorf("the hung server: %v", s)
		}
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for i, body := range fake.bodies {
		system := fmt.Sprint(body["messages"].([]any)[0].(map[string]any)["content"])
		if !strings.Contains(system, "MCP servers not available now") || !strings.Contains(system, "hung is still starting") {
			t.Errorf("request %d does not tell the model about the hung server: %.300s", i, system)
		}
		if !strings.Contains(fmt.Sprint(body["tools"]), "mcp__calc__add") {
			t.Errorf("request %d lacks the ready server's tools", i)
		}
	}
}

// A configured MCP server's tool, end to end: started with the daemon,
// offered to the model as mcp__NAME__TOOL, asking for approval, its
// answer back to the model; status shows the server.
func TestMCPServerToolInATurn(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, "[mcp]\nturn_wait_ms = 30000\n[mcp.servers.calc]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	st := result(t, a.call("status", `{}`))
	if s := st["mcpServers"].([]any)[0].(map[string]any); s["name"] != "calc" || (s["state"] != "starting" && s["state"] != "ready") {
		t.Fatalf("started with the daemon: %v", s)
	}
	sid := newSession(t, a, "")
	done := a.send("session/prompt", prompt(sid, `/tool mcp__calc__add {"a":20,"b":22}`))
	req := a.until("approval_request")
	if req["toolName"] != "mcp__calc__add" || !strings.Contains(req["summary"].(string), "MCP server calc") {
		t.Fatalf("approval request %v", req)
	}
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(req["requestId"].(string))+`,"decision":"allow_once"}`))
	res := result(t, a.wait(done, "prompt"))
	if res["content"] != "tool mcp__calc__add returned: 42" {
		t.Fatalf("result %v", res)
	}
	st = result(t, a.call("status", `{}`))
	if s := st["mcpServers"].([]any)[0].(map[string]any); s["state"] != "ready" || s["tools"].(float64) != 12 {
		t.Fatalf("after use: %v", s)
	}
}

// A reply cut at the output limit, here inside a tool call, ends the
// turn max_tokens with a notice naming the limit and the key that
// raises it, in the prompt's result and in turn_complete alike.
func TestMaxTokensNamesTheLimitAndTheKey(t *testing.T) {
	cut := []string{
		content("Writing the file."),
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"a lo"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`, `[DONE]`,
	}
	fake := &fakeOpenAI{scripts: [][]string{cut, cut}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"\"\nmax_tokens = 300\n[agents.default]\nprovider = \"fake\"\n"+
		"[agents.big]\nprovider = \"fake\"\nmax_tokens = 900\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	res := result(t, a.call("session/prompt", prompt(sid, "write a.txt")))
	want := "the reply reached its output limit, max_tokens = 300: raise max_tokens under [providers.fake] in config.toml" +
		" (it was cut off inside the arguments of a call to write_file, which was not run)"
	if res["stopReason"] != "max_tokens" || res["notice"] != want || res["content"] != "Writing the file." {
		t.Fatalf("result %v", res)
	}
	if ev := a.until("turn_complete"); ev["stopReason"] != "max_tokens" || ev["notice"] != want {
		t.Fatalf("turn_complete %v", ev)
	}
	fake.mu.Lock()
	sent := fake.bodies[0]["max_tokens"]
	fake.mu.Unlock()
	if sent != float64(300) {
		t.Errorf("max_tokens sent: %v", sent)
	}
	// An agent's own max_tokens is sent, and named where it is set.
	big := newSession(t, a, `,"agentAlias":"big"`)
	res = result(t, a.call("session/prompt", prompt(big, "write a.txt")))
	if want := "the reply reached its output limit, max_tokens = 900: raise max_tokens under [agents.big] in config.toml" +
		" (it was cut off inside the arguments of a call to write_file, which was not run)"; res["notice"] != want {
		t.Errorf("agent's limit: %v", res)
	}
	fake.mu.Lock()
	sent = fake.bodies[1]["max_tokens"]
	fake.mu.Unlock()
	if sent != float64(900) {
		t.Errorf("the agent's max_tokens sent: %v", sent)
	}
}

// session/configure sets a session's reasoning level: the next model
// call sends it, a bad level is a params error naming the choices, and
// the level outlives a daemon restart.
func TestConfigureReasoning(t *testing.T) {
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fake := &fakeOpenAI{scripts: [][]string{{content("a"), stop, `[DONE]`}, {content("b"), stop, `[DONE]`}, {content("c"), stop, `[DONE]`}}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	toml := "[providers.fake]\nkind = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"o3-mini\"\n[agents.default]\nprovider = \"fake\"\nreasoning = \"low\"\n"
	dirs := testDirs(t)
	r := startOn(t, dirs, toml)
	a := connect(t, r.dirs.Endpoint, "")
	result(t, a.call("session/new", `{"sessionId":"think"}`))
	result(t, a.call("session/prompt", prompt("think", "one")))
	if e := a.call("session/configure", `{"sessionId":"think","reasoning":"max"}`); errCode(e) != -32602 ||
		!strings.Contains(e["error"].(map[string]any)["message"].(string), "off, low, medium, high") {
		t.Fatalf("bad level: %v", e)
	}
	if res := result(t, a.call("session/configure", `{"sessionId":"think","reasoning":"high"}`)); res["reasoning"] != "high" {
		t.Fatalf("configure: %v", res)
	}
	result(t, a.call("session/prompt", prompt("think", "two")))
	r.stop()
	r.wait(t)
	r2 := startOn(t, dirs, toml)
	b := connect(t, r2.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":"think"}`))
	result(t, b.call("session/prompt", prompt("think", "three")))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	var got []any
	for _, body := range fake.bodies {
		got = append(got, body["reasoning_effort"])
	}
	if fmt.Sprint(got) != "[low high high]" {
		t.Errorf("reasoning_effort per call: %v, want [low high high]", got)
	}
}

// An MCP server's questions (elicitation, form and url modes) reach the
// client that prompted, as the daemon's own do, and the server gets the
// answer; a client that cannot go to a URL declines that one at once.
func TestMCPServerQuestionsReachTheClient(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"risk = \"full\"\n[mcp]\nturn_wait_ms = 30000\n[mcp.servers.q]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, `{"elicitation":{"form":{},"url":{}}}`)
	sid := newSession(t, a, "")
	var asked []map[string]any
	a.onRequest = func(method string, params map[string]any) string {
		asked = append(asked, params)
		if params["mode"] == "url" {
			return `"result":{"action":"accept"}`
		}
		return `"result":{"action":"accept","content":{"answer":"blue"}}`
	}
	res := result(t, a.call("session/prompt", prompt(sid, `/tool mcp__q__ask {"question":"Which colour?"}`)))
	if res["content"] != `tool mcp__q__ask returned: accept {"answer":"blue"}` {
		t.Fatalf("a form question: %v", res)
	}
	res = result(t, a.call("session/prompt", prompt(sid, `/tool mcp__q__visit {}`)))
	if res["content"] != "tool mcp__q__visit returned: accept" {
		t.Fatalf("a url question: %v", res)
	}
	if len(asked) != 2 || asked[0]["message"] != "Which colour? (MCP server q)" || asked[0]["mode"] != "form" ||
		asked[1]["mode"] != "url" || asked[1]["url"] != "https://example.com/login" || asked[1]["elicitationId"] != "e-1" {
		t.Fatalf("asked %v", asked)
	}
	// A client that answers forms only: the url question is declined.
	b := connect(t, r.dirs.Endpoint, `{"elicitation":{"form":{}}}`)
	sid2 := newSession(t, b, "")
	b.onRequest = func(method string, params map[string]any) string {
		t.Errorf("asked a client that cannot go to a URL: %v", params)
		return `"result":{"action":"accept"}`
	}
	if res := result(t, b.call("session/prompt", prompt(sid2, `/tool mcp__q__visit {}`))); res["content"] != "tool mcp__q__visit returned: decline" {
		t.Fatalf("a url question to a forms-only client: %v", res)
	}
}

// A long MCP tool says how far it is: tool_progress events of its call
// (the last one, at its total, always), stored with the turn's events.
func TestMCPToolProgress(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"risk = \"full\"\n[mcp]\nturn_wait_ms = 30000\n[mcp.servers.p]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	if res := result(t, a.call("session/prompt", prompt(sid, `/tool mcp__p__count {}`))); res["content"] != "tool mcp__p__count returned: counted" {
		t.Fatalf("count: %v", res)
	}
	var callID string
	var last map[string]any
	for _, e := range history(t, a, sid) {
		switch e["type"] {
		case "tool_call":
			callID = e["toolCallId"].(string)
		case "tool_progress":
			last = e
			if e["toolCallId"] != callID || e["turnId"] == nil {
				t.Errorf("progress of another call: %v", e)
			}
		}
	}
	if last == nil || last["progress"] != 3.0 || last["total"] != 3.0 || last["message"] != "step 3" {
		t.Fatalf("the last tool_progress: %v", last)
	}
}

// A configured server with per_session = true runs once per session, its
// root the session's directory; status lists it with the session.
func TestPerSessionMCPServerHasTheSessionsRoot(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"risk = \"full\"\n[mcp]\nturn_wait_ms = 30000\n[mcp.servers.files]\ncommand = \""+bin+"\"\nper_session = true\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	res := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`}`))
	sid := res["sessionId"].(string)
	if res := result(t, a.call("session/prompt", prompt(sid, `/tool mcp__files__roots {}`))); res["content"] != "tool mcp__files__roots returned: [file://"+cwd+"]" {
		t.Fatalf("roots: %v", res)
	}
	st := result(t, a.call("status", `{}`))["mcpServers"].([]any)
	if len(st) != 1 || st[0].(map[string]any)["perSession"] != true || st[0].(map[string]any)["sessionId"] != sid {
		t.Fatalf("status: %v", st)
	}
}

// An MCP server's sampling request is answered by the session's own
// model after the user approves it (an approval_request of kind
// sampling, the messages shown), charged to the session; refused, the
// server hears so; a trusted server is not asked about.
func TestMCPSamplingAsksAndUsesTheSessionsModel(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"[mcp]\nturn_wait_ms = 30000\n[mcp.servers.s]\ncommand = \""+bin+"\"\nauto_approve = [\"summarise\"]\n[mcp.servers.trusted]\ncommand = \""+bin+"\"\ntrust = true\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	answer := func(decision string) {
		req := a.until("approval_request")
		if req["kind"] != "sampling" || req["toolName"] != "sampling: MCP server s" || !strings.Contains(req["summary"].(string), "user: hello there") {
			t.Fatalf("the sampling approval: %v", req)
		}
		result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(req["requestId"].(string))+`,"decision":"`+decision+`"}`))
	}
	done := a.send("session/prompt", prompt(sid, `/tool mcp__s__summarise {"question":"hello there"}`))
	answer("allow_once")
	res := result(t, a.wait(done, "prompt"))
	if res["content"] != "tool mcp__s__summarise returned: the model (echo) said: echo: hello there" {
		t.Fatalf("a sampled answer: %v", res)
	}
	// The sampling call is the session's: its usage counts it.
	turn := res["usage"].(map[string]any)["inputTokens"].(float64)
	got := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))["usage"].(map[string]any)["inputTokens"].(float64)
	if got <= turn {
		t.Errorf("the session's usage %v does not count the sampling call beside the turn's %v", got, turn)
	}
	done = a.send("session/prompt", prompt(sid, `/tool mcp__s__summarise {"question":"hello there"}`))
	answer("reject_once")
	if res := result(t, a.wait(done, "prompt")); !strings.Contains(res["content"].(string), "declined the model call") {
		t.Fatalf("a refused sampling: %v", res)
	}
	// A trusted server: no one is asked.
	if res := result(t, a.call("session/prompt", prompt(sid, `/tool mcp__trusted__summarise {"question":"hi"}`))); res["content"] != "tool mcp__trusted__summarise returned: the model (echo) said: echo: hi" {
		t.Fatalf("a trusted server's sampling: %v", res)
	}
}

// An MCP server's prompt is a slash command: /mcp__SERVER__PROMPT with
// its arguments (name=value or in order) sends the prompt's text; a
// missing argument or an unknown prompt is a clear error.
func TestMCPPromptAsSlashCommand(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"[mcp]\nturn_wait_ms = 30000\n[mcp.servers.p]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	for _, tc := range []struct{ prompt, want string }{
		{"/mcp__p__review main.go style=terse", "echo: Review main.go in the terse style."},
		{"/mcp__p__review main.go brief\nand be quick", "echo: Review main.go in the brief style.\n\nand be quick"},
	} {
		if res := result(t, a.call("session/prompt", prompt(sid, tc.prompt))); res["content"] != tc.want {
			t.Errorf("%q: %v", tc.prompt, res["content"])
		}
	}
	// The prompt is taken at once and read in its turn: one that cannot
	// be read fails its turn, saying why.
	failed := func(res map[string]any, want string) bool {
		e, _ := res["error"].(map[string]any)
		return res["stopReason"] == "error" && e != nil && strings.Contains(e["message"].(string), want)
	}
	if res := result(t, a.call("session/prompt", prompt(sid, "/mcp__p__review"))); !failed(res, "needs file") {
		t.Errorf("a missing argument: %v", res)
	}
	if res := result(t, a.call("session/prompt", prompt(sid, "/mcp__p__nope x"))); !failed(res, "no MCP server") {
		t.Errorf("an unknown prompt: %v", res)
	}
}

// An MCP server's resource attached to a prompt is read from the server
// (in the turn) and joins the prompt; an unknown server fails the turn
// with a clear error.
func TestMCPResourceAttachment(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"[mcp]\nturn_wait_ms = 30000\n[mcp.servers.p]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	res := result(t, a.call("session/prompt", `{"sessionId":`+quote(sid)+`,"prompt":"read this","attachments":[{"resource":{"server":"p","uri":"test://greeting"}}]}`))
	if res["content"] != "echo: read this\n\n[Resource: test://greeting]\nhello from a resource" {
		t.Fatalf("a resource attached: %v", res["content"])
	}
	res = result(t, a.call("session/prompt", `{"sessionId":`+quote(sid)+`,"prompt":"x","attachments":[{"resource":{"server":"nope","uri":"test://greeting"}}]}`))
	if e, _ := res["error"].(map[string]any); res["stopReason"] != "error" || e == nil || e["message"] != `attachments: test://greeting: no MCP server "nope" for this session` {
		t.Errorf("an unknown server: %v", res)
	}
}

// session/mcp lists what the session's MCP servers offer besides tools:
// their prompts (as the slash commands that send them) and resources.
func TestSessionMCPListsPromptsAndResources(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, echoAgent+"[mcp]\nturn_wait_ms = 30000\n[mcp.servers.p]\ncommand = \""+bin+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	res := result(t, a.call("session/mcp", `{"sessionId":`+quote(sid)+`}`))
	ps, rs := res["prompts"].([]any), res["resources"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["command"] != "/mcp__p__review" || len(ps[0].(map[string]any)["arguments"].([]any)) != 2 {
		t.Errorf("prompts %v", ps)
	}
	if len(rs) != 1 || rs[0].(map[string]any)["uri"] != "test://greeting" || rs[0].(map[string]any)["server"] != "p" {
		t.Errorf("resources %v", rs)
	}
}

// An image an MCP tool gives reaches the model as an image (here
// OpenAI's dialect: a user message after the tool message), is kept with
// the uploads, and is sent again in the session's later requests; the
// audio beside it is named, not sent.
func TestMCPToolImageReachesTheModel(t *testing.T) {
	bin := mcpServer(t)
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fake := &fakeOpenAI{scripts: [][]string{
		{`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"mcp__calc__shot","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`},
		{content("a screen"), stop, `[DONE]`},
		{content("still"), stop, `[DONE]`}}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"\"\n[agents.default]\nprovider = \"fake\"\n"+
		"[mcp]\nturn_wait_ms = 30000\n[mcp.servers.calc]\ncommand = \""+bin+"\"\ntrust = true\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	if res := result(t, a.call("session/prompt", prompt(sid, "look"))); res["content"] != "a screen" {
		t.Fatalf("the turn: %v", res)
	}
	if res := result(t, a.call("session/prompt", prompt(sid, "and now?"))); res["content"] != "still" {
		t.Fatalf("the next turn: %v", res)
	}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nSCREEN"))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for i, body := range fake.bodies[1:] {
		msgs := body["messages"].([]any)
		var tool, shown map[string]any
		for j, m := range msgs {
			if m := m.(map[string]any); m["role"] == "tool" {
				tool = m
				shown, _ = msgs[j+1].(map[string]any)
			}
		}
		if tool == nil || !strings.Contains(tool["content"].(string), "[image image/png, 14 bytes]") ||
			!strings.Contains(tool["content"].(string), "[audio audio/wav, 8 bytes]") {
			t.Fatalf("request %d: the tool message %v", i+1, tool)
		}
		parts, _ := shown["content"].([]any)
		if shown["role"] != "user" || len(parts) != 2 || parts[1].(map[string]any)["image_url"].(map[string]any)["url"] != "data:image/png;base64,"+png {
			t.Fatalf("request %d: the image after the tool message: %v", i+1, shown)
		}
	}
	kept, _ := filepath.Glob(filepath.Join(r.dirs.DataDir, "uploads", "*.png"))
	if len(kept) != 1 {
		t.Fatalf("the image is not kept with the uploads: %v", kept)
	}
}

// What a session's MCP servers offer changes (here a tool call makes the
// server add a tool, and it says its list changed): the session's
// clients are told (session/mcpChanged), and the next turn offers the
// new tool.
func TestMCPChangeReachesTheSessionsClients(t *testing.T) {
	bin := mcpServer(t)
	r := startWith(t, "[mcp]\nturn_wait_ms = 30000\n[mcp.servers.calc]\ncommand = \""+bin+"\"\ntrust = true\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	if res := result(t, a.call("session/prompt", prompt(sid, `/tool mcp__calc__grow {}`))); res["content"] != "tool mcp__calc__grow returned: grew" {
		t.Fatalf("grow: %v", res)
	}
	// Told at each change (the server's becoming ready may be one, if
	// it came after the session opened): the one after its list
	// changed is the one that has the new tool.
	want := "session/mcpChanged " + `{"sessionId":` + quote(sid) + `}`
	for grown := false; !grown; {
		select {
		case n := <-a.notes:
			if n != want {
				t.Fatalf("notification %s", n)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no session/mcpChanged after the list changed")
		}
		st := result(t, a.call("status", `{}`))
		grown = st["mcpServers"].([]any)[0].(map[string]any)["tools"].(float64) == 13
	}
	if res := result(t, a.call("session/prompt", prompt(sid, `/tool mcp__calc__grown {}`))); res["content"] != "tool mcp__calc__grown returned: grown" {
		t.Fatalf("the new tool: %v", res)
	}
}
