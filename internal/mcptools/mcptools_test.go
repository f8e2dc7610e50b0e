package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/form"
	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// server is testdata/server, a real MCP server on the same SDK.
func server(t testing.TB) string { return mcptest.Server(t) }

func find(ts []tool.Tool, name string) tool.Tool {
	for _, t := range ts {
		if t.Spec().Name == name {
			return t
		}
	}
	return nil
}

func call(t *testing.T, ctx context.Context, tl tool.Tool, input string) tool.Result {
	t.Helper()
	if tl == nil {
		t.Fatal("no such tool")
	}
	return tl.Run(ctx, &tool.Env{}, json.RawMessage(input))
}

func TestStdioServerToolsAndApproval(t *testing.T) {
	set := newSet(map[string]config.MCPServer{"calc": {Command: server(t), AutoApprove: []string{"add"}}})
	defer set.Close()
	if st := set.Status(); st[0].State != StateStopped {
		t.Fatalf("before first use: %+v", st)
	}
	ts := set.Tools(context.Background())
	add := find(ts, "mcp__calc__add")
	if add == nil || len(ts) != 12 { // add, slow, write, ask, survey, visit, count, grow, roots, summarise, shot, crash
		t.Fatalf("tools %v", ts)
	}
	// job needs MCP tasks: not offered, and status says why.
	if find(ts, "mcp__calc__job") != nil {
		t.Fatal("a tool that needs tasks was offered")
	}
	if h := set.Status()[0].Hidden; len(h) != 1 || h[0].Name != "job" || !strings.Contains(h[0].Why, "tasks") {
		t.Fatalf("hidden tools in status: %+v", h)
	}
	var schema map[string]any
	json.Unmarshal(add.Spec().Schema, &schema)
	if props, _ := schema["properties"].(map[string]any); props["a"] == nil {
		t.Fatalf("the server's schema is not passed on: %s", add.Spec().Schema)
	}
	if add.Asks() || !find(ts, "mcp__calc__crash").Asks() {
		t.Fatal("auto_approve: add should run without asking, crash not")
	}
	if r := call(t, context.Background(), add, `{"a":2,"b":3}`); r.IsError || r.Output != "5" {
		t.Fatalf("add: %+v", r)
	}
	if st := set.Status(); st[0].State != StateReady || st[0].Tools != 12 {
		t.Fatalf("status %+v", st)
	}
}

func TestHTTPServer(t *testing.T) {
	url := mcptest.HTTP(t)
	set := newSet(map[string]config.MCPServer{"web": {URL: url, Headers: map[string]string{"X-Test": "1"}, Trust: true}})
	defer set.Close()
	ts := set.Tools(context.Background())
	add := find(ts, "mcp__web__add")
	if add == nil || add.Asks() {
		t.Fatalf("tools %v (trusted: none asks)", ts)
	}
	if r := call(t, context.Background(), add, `{"a":40,"b":2}`); r.IsError || r.Output != "42" {
		t.Fatalf("add over HTTP: %+v", r)
	}
	if find(ts, "mcp__web__job") != nil || find(ts, "mcp__web__crash") == nil {
		t.Fatalf("over HTTP, the tool that needs tasks is hidden and the others offered: %v", ts)
	}
	if h := set.Status()[0].Hidden; len(h) != 1 || h[0].Name != "job" {
		t.Fatalf("hidden tools in status: %+v", h)
	}
}

// settle waits until no server of the set is in a start.
func settle(set *Set) {
	for _, srv := range set.servers {
		srv.mu.Lock()
		ch, starting := srv.starting, srv.state == StateStarting
		srv.mu.Unlock()
		if starting {
			<-ch
		}
	}
}

// firstStarted waits until the named servers' first starts have ended.
func firstStarted(set *Set, names ...string) {
	for _, srv := range set.servers {
		if slices.Contains(names, srv.name) {
			<-srv.first
		}
	}
}

// newSet is NewSet for a test that needs its servers ready: a turn waits
// for their first start however slow the machine.
func newSet(cfgs map[string]config.MCPServer) *Set {
	return NewSet(cfgs, nil, nil).WithTurnWait(time.Minute)
}

// mu runs f with every server's lock held.
func (s *Set) mu(f func()) {
	for _, srv := range s.servers {
		srv.mu.Lock()
		defer srv.mu.Unlock()
	}
	f()
}

func statusOf(set *Set, name string) Status {
	for _, s := range set.Status() {
		if s.Name == name {
			return s
		}
	}
	return Status{}
}

// A server that hangs at start costs its start timeout in the
// background, never the turn: the turn waits for it (in its first
// start) at most the set's turn wait, goes on with the other server's
// tools, and the model is told which server is not there and why. A
// call that never answers costs its call timeout; a cancelled turn
// cancels the call.
func TestBrokenServers(t *testing.T) {
	bin := server(t)
	set := NewSet(map[string]config.MCPServer{
		"ok":   {Command: bin, CallTimeoutSecs: 1},
		"hung": {Command: bin, Args: []string{"-hang-start"}, StartTimeoutSecs: 3600},
	}, nil, nil).WithTurnWait(100 * time.Millisecond)
	defer set.Close()
	set.Start()
	firstStarted(set, "ok") // however slow the machine: the wait is for hung
	ts := set.Tools(context.Background())
	if find(ts, "mcp__hung__add") != nil || find(ts, "mcp__ok__add") == nil {
		t.Fatalf("tools %v", ts)
	}
	// The turn went on while the hung server is still in its start (of
	// an hour).
	if st := statusOf(set, "hung"); st.State != StateStarting {
		t.Fatalf("the hung server: %+v", st)
	}
	if n := set.Unavailable(); !strings.Contains(n, "hung is still starting") || strings.Contains(n, "ok") {
		t.Fatalf("the note for the model: %q", n)
	}
	// A call that never answers: the call timeout.
	if r := call(t, context.Background(), find(ts, "mcp__ok__slow"), `{}`); !r.IsError || !strings.Contains(r.Output, "no answer within 1s") {
		t.Fatalf("slow call: %+v", r)
	}
	// A cancelled turn: the call ends, cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := call(t, ctx, find(ts, "mcp__ok__slow"), `{}`); !r.IsError || !strings.Contains(r.Output, "cancelled") {
		t.Fatalf("cancelled call: %+v", r)
	}
}

// A server that crashes: its tools stay listed, a call to one says it is
// restarting (with its exit status), the turn does not wait for the
// restart, and it comes back.
func TestCrashedServerRestarts(t *testing.T) {
	set := newSet(map[string]config.MCPServer{"ok": {Command: server(t)}})
	defer set.Close()
	set.Start()
	ts := set.Tools(context.Background())
	if r := call(t, context.Background(), find(ts, "mcp__ok__crash"), `{}`); !r.IsError {
		t.Fatalf("crash: %+v", r)
	}
	// The crash is seen when the connection ends.
	for statusOf(set, "ok").State == StateReady {
		runtime.Gosched()
	}
	st := statusOf(set, "ok")
	if !strings.Contains(st.Error, "exited with status 3") {
		t.Errorf("after the crash: %+v", st)
	}
	ts = set.Tools(context.Background())
	add := find(ts, "mcp__ok__add")
	if add == nil {
		t.Fatalf("the crashed server's tools vanished: %v", ts)
	}
	if st := statusOf(set, "ok"); st.State != StateReady {
		if r := call(t, context.Background(), add, `{"a":1,"b":1}`); !r.IsError || !strings.Contains(r.Output, "MCP server ok is restarting") {
			t.Errorf("a call while it restarts: %+v", r)
		}
		if n := set.Unavailable(); !strings.Contains(n, "ok is restarting") {
			t.Errorf("the note for the model: %q", n)
		}
	}
	// It comes back after its backoff (1 s after a first crash).
	for {
		settle(set)
		if statusOf(set, "ok").State == StateReady {
			break
		}
		set.mu(func() { set.servers[0].retryAt = time.Time{} }) // no need to wait the backoff out
		set.Tools(context.Background())
	}
	if r := call(t, context.Background(), find(set.Tools(context.Background()), "mcp__ok__add"), `{"a":1,"b":1}`); r.IsError || r.Output != "2" {
		t.Fatalf("after the restart: %+v", r)
	}
}

// A server that fails at start says why: its exit status and the end of
// its stderr, in its status and to a call.
func TestStartFailureSaysWhy(t *testing.T) {
	set := newSet(map[string]config.MCPServer{"fs": {Command: server(t), Args: []string{"-fail-start", "None of the specified directories are accessible"}}})
	defer set.Close()
	set.Start()
	set.Tools(context.Background())
	settle(set)
	st := statusOf(set, "fs")
	if st.State != StateFailed || !strings.Contains(st.Error, "exited with status 1") || !strings.Contains(st.Error, "None of the specified directories are accessible") ||
		!strings.Contains(st.Error, "starting the test server") {
		t.Fatalf("status %+v", st)
	}
	if n := set.Unavailable(); !strings.Contains(n, "fs failed to start") || !strings.Contains(n, "exited with status 1") {
		t.Errorf("the note for the model: %q", n)
	}
}

func TestToolNames(t *testing.T) {
	if n := ToolName("my server", "do.it"); n != "mcp__my_server__do_it" {
		t.Fatal(n)
	}
	if n := ToolName(strings.Repeat("s", 50), strings.Repeat("t", 50)); len(n) != 64 {
		t.Fatal(len(n))
	}
}

func serverB(b *testing.B) string { return server(b) }

// A server's questions (elicitation/create, form and url modes) go to the
// user of the call in flight, and the server gets the answer; with no
// one to ask, they are declined at once.
func TestServerQuestionsReachTheUser(t *testing.T) {
	set := newSet(map[string]config.MCPServer{"q": {Command: server(t)}})
	defer set.Close()
	ts := set.Tools(context.Background())
	var asked []tool.Elicitation
	env := &tool.Env{Elicit: func(ctx context.Context, e tool.Elicitation) (tool.Answer, error) {
		asked = append(asked, e)
		if e.URL != "" {
			return tool.Answer{Action: "accept"}, nil
		}
		return tool.Answer{Action: "accept", Content: json.RawMessage(`{"answer":"blue"}`)}, nil
	}}
	r := find(ts, "mcp__q__ask").Run(context.Background(), env, json.RawMessage(`{"question":"Which colour?"}`))
	if r.IsError || r.Output != `accept {"answer":"blue"}` {
		t.Fatalf("a form question: %+v", r)
	}
	if len(asked) != 1 || asked[0].Message != "Which colour? (MCP server q)" || !strings.Contains(string(asked[0].Schema), `"answer"`) {
		t.Fatalf("asked %+v", asked)
	}
	if r := find(ts, "mcp__q__visit").Run(context.Background(), env, json.RawMessage(`{}`)); r.Output != "accept" {
		t.Fatalf("a url question: %+v", r)
	}
	if u := asked[1]; u.URL != "https://example.com/login" || u.ID != "e-1" {
		t.Fatalf("the url question asked %+v", u)
	}
	// A URL that is not a web page is declined, never shown.
	if r := find(ts, "mcp__q__visit").Run(context.Background(), env, json.RawMessage(`{"url":"javascript:alert(1)"}`)); r.Output != "decline" || len(asked) != 2 {
		t.Fatalf("a javascript: url: %+v (asked %d times)", r, len(asked))
	}
	// No one to ask: declined at once.
	if r := call(t, context.Background(), find(ts, "mcp__q__ask"), `{"question":"Anyone?"}`); r.Output != "decline null" {
		t.Fatalf("with no one to ask: %+v", r)
	}
}

// A form is passed on with its fields in the server's order, and the
// answer is sent typed as the schema says, with the defaults of the
// fields left out; an answer that does not fit is never sent.
func TestFormAnswersTypedAndCompleted(t *testing.T) {
	set := newSet(map[string]config.MCPServer{"f": {Command: server(t)}})
	defer set.Close()
	survey := find(set.Tools(context.Background()), "mcp__f__survey")
	answer := `{"age":"7","score":"1.5","zname":"Grace"}` // numbers as text, as a plain client sends them
	var order []string
	env := &tool.Env{Elicit: func(ctx context.Context, e tool.Elicitation) (tool.Answer, error) {
		f, err := form.Parse(e.Schema)
		if err != nil {
			t.Fatal(err)
		}
		order = order[:0]
		for _, fd := range f.Fields {
			order = append(order, fd.Name)
		}
		return tool.Answer{Action: "accept", Content: json.RawMessage(answer)}, nil
	}}
	r := survey.Run(context.Background(), env, json.RawMessage(`{}`))
	if want := `accept {"age":7,"score":1.5,"status":"active","verified":true,"zname":"Grace"}`; r.Output != want {
		t.Fatalf("the server got %q, want %q", r.Output, want)
	}
	if strings.Join(order, " ") != "zname age score status verified" {
		t.Errorf("fields asked in the order %q", order)
	}
	answer = `{"age":"many","zname":"Grace"}`
	if r := survey.Run(context.Background(), env, json.RawMessage(`{}`)); r.Output != "cancel null" {
		t.Fatalf("an answer that does not fit: the server got %q", r.Output)
	}
}

// A call gets a progress token: the server's progress reaches the call;
// a server that adds a tool (tools/list_changed) has it offered next.
func TestProgressAndToolsThatChange(t *testing.T) {
	changed := make(chan string, 4)
	relisted = func(server string) { changed <- server }
	defer func() { relisted = nil }()
	set := newSet(map[string]config.MCPServer{"p": {Command: server(t)}})
	defer set.Close()
	ts := set.Tools(context.Background())
	var seen []string
	env := &tool.Env{Progress: func(progress, total float64, message string) {
		seen = append(seen, fmt.Sprintf("%g/%g %s", progress, total, message))
	}}
	if r := find(ts, "mcp__p__count").Run(context.Background(), env, json.RawMessage(`{}`)); r.Output != "counted" {
		t.Fatalf("count: %+v", r)
	}
	if strings.Join(seen, ", ") != "1/3 step 1, 2/3 step 2, 3/3 step 3" {
		t.Errorf("progress seen: %q", seen)
	}
	if find(ts, "mcp__p__grown") != nil {
		t.Fatal("grown before it grew")
	}
	if r := call(t, context.Background(), find(ts, "mcp__p__grow"), `{}`); r.Output != "grew" {
		t.Fatalf("grow: %+v", r)
	}
	<-changed
	grown := find(set.Tools(context.Background()), "mcp__p__grown")
	if grown == nil {
		t.Fatal("the new tool is not offered after tools/list_changed")
	}
	if r := call(t, context.Background(), grown, `{}`); r.Output != "grown" {
		t.Fatalf("grown: %+v", r)
	}
}

// A session's set tells its servers the session's directory as their
// root; the shared set (one server for every session) tells none.
func TestRoots(t *testing.T) {
	dir := t.TempDir()
	own := newSet(map[string]config.MCPServer{"r": {Command: server(t)}}).WithRoot(dir)
	defer own.Close()
	if r := call(t, context.Background(), find(own.Tools(context.Background()), "mcp__r__roots"), `{}`); r.Output != "[file://"+dir+"]" {
		t.Fatalf("the session's roots: %+v", r)
	}
	shared := newSet(map[string]config.MCPServer{"r": {Command: server(t)}})
	defer shared.Close()
	if r := call(t, context.Background(), find(shared.Tools(context.Background()), "mcp__r__roots"), `{}`); strings.Contains(r.Output, "file://") {
		t.Fatalf("the shared set's roots: %+v", r)
	}
}

// A stdio server's stdout lines that are not JSON-RPC are skipped (and
// logged); the JSON lines pass whole, however they are read.
func TestStrayStdoutLinesSkipped(t *testing.T) {
	in := "starting up...\n{\"jsonrpc\":\"2.0\",\"id\":1}\n  \nnot json\r\n[1,2]\n" + `{"long":"` + strings.Repeat("x", 100<<10) + "\"}\nbye"
	var skipped []string
	j := newJSONOnly(io.NopCloser(strings.NewReader(in)), func(s string) { skipped = append(skipped, s) })
	var out bytes.Buffer
	buf := make([]byte, 7) // reads smaller than a line
	for {
		n, err := j.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	want := "{\"jsonrpc\":\"2.0\",\"id\":1}\n[1,2]\n" + `{"long":"` + strings.Repeat("x", 100<<10) + "\"}\n"
	if out.String() != want {
		t.Errorf("passed %d bytes, want %d: %.80q", out.Len(), len(want), out.String())
	}
	if strings.Join(skipped, "|") != "starting up...|not json|bye" {
		t.Errorf("skipped %q", skipped)
	}
}

// A server that prints a banner before speaking MCP still works.
func TestServerWithABanner(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the banner is printed by sh")
	}
	set := newSet(map[string]config.MCPServer{"b": {Command: "sh", Args: []string{"-c", "echo 'a banner, not JSON'; exec " + server(t)}}})
	defer set.Close()
	if r := call(t, context.Background(), find(set.Tools(context.Background()), "mcp__b__add"), `{"a":2,"b":3}`); r.IsError || r.Output != "5" {
		t.Fatalf("add: %+v", r)
	}
}

// A command that never speaks JSON-RPC fails at its start timeout, and
// the error shows the start of what it printed.
func TestServerThatNeverSpeaksMCP(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the command is sh")
	}
	set := newSet(map[string]config.MCPServer{"mute": {Command: "sh", Args: []string{"-c", "echo 'Usage: server --port N'; exec sleep 30"}, StartTimeoutSecs: 1}})
	defer set.Close()
	set.Start()
	firstStarted(set, "mute")
	st := statusOf(set, "mute")
	if st.State != StateFailed || !strings.Contains(st.Error, "no answer within 1s") || !strings.Contains(st.Error, `it printed on stdout what is not JSON-RPC: "Usage: server --port N"`) {
		t.Fatalf("status %+v", st)
	}
}

// A server of the current revision (2026-07-28: stateless, discovery,
// multi round-trip questions, list changes by subscription) and one of
// the revision before (2025-11-25: initialize, server-to-client
// requests, list_changed notifications) work the same: their tools, a
// question asked through a form (the user's answer reaching the
// server), a tool added while it runs; status names the revision.
func TestProtocolRevisions(t *testing.T) {
	bin := server(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			changed := make(chan string, 4)
			relisted = func(server string) { changed <- server }
			defer func() { relisted = nil }()
			set := newSet(map[string]config.MCPServer{"v": {Command: bin, Args: []string{"-protocol", version}}})
			defer set.Close()
			ts := set.Tools(context.Background())
			if r := call(t, context.Background(), find(ts, "mcp__v__add"), `{"a":2,"b":3}`); r.IsError || r.Output != "5" {
				t.Fatalf("add: %+v", r)
			}
			if st := statusOf(set, "v"); st.State != StateReady || st.ProtocolVersion != version {
				t.Fatalf("status %+v, want ready on %s", st, version)
			}
			env := &tool.Env{Elicit: func(ctx context.Context, e tool.Elicitation) (tool.Answer, error) {
				return tool.Answer{Action: "accept", Content: json.RawMessage(`{"answer":"green"}`)}, nil
			}}
			if r := find(ts, "mcp__v__ask").Run(context.Background(), env, json.RawMessage(`{"question":"Which colour?"}`)); r.IsError || r.Output != `accept {"answer":"green"}` {
				t.Fatalf("a question: %+v", r)
			}
			if r := call(t, context.Background(), find(ts, "mcp__v__grow"), `{}`); r.Output != "grew" {
				t.Fatalf("grow: %+v", r)
			}
			<-changed
			if r := call(t, context.Background(), find(set.Tools(context.Background()), "mcp__v__grown"), `{}`); r.Output != "grown" {
				t.Fatalf("the tool added: %+v", r)
			}
		})
	}
}
