package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/acp"
	"github.com/zeroclaw/zeroclaw/internal/acp/acptest"
	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

func schema(t *testing.T, def string) *jsonschema.Schema { return acptest.Schema(t, def) }

func validate(t *testing.T, def string, raw json.RawMessage) { acptest.Validate(t, def, raw) }

var responseDefs = acptest.ResponseDefs

// editor is a test ACP client: it validates every frame the bridge sends
// against the schema and answers permission requests with choose.
type editor struct {
	t      *testing.T
	nc     net.Conn
	mu     sync.Mutex
	next   int
	method map[string]string
	wait   map[string]chan map[string]any
	update chan map[string]any
	asked  chan map[string]any
	choose func(params map[string]any) string // optionId, or "" for cancelled
	done   chan struct{}
	// buffers are the editor's open files (fs/* requests), writes the
	// paths written.
	buffers   map[string]string
	writes    []string
	questions []string // elicitation/create params
	// the editor's terminal: the methods called, the last command's
	// output and exit code
	terminalCalls []string
	terminalOut   string
	terminalCode  int
}

func startBridge(t *testing.T, endpoint string) *editor {
	a, b := net.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		acp.Serve(context.Background(), a, acp.Options{Version: "test", Dial: func(ctx context.Context, h jsonrpc.Handler, caps *protocol.ClientCapabilities, editor string) (*client.Client, error) {
			return client.Dial(ctx, endpoint, client.Options{Handler: h, Capabilities: caps, ClientInfo: protocol.ClientInfo{Name: editor}})
		}})
	}()
	e := &editor{t: t, nc: b, method: map[string]string{}, wait: map[string]chan map[string]any{},
		update: make(chan map[string]any, 10000), asked: make(chan map[string]any, 10), done: make(chan struct{})}
	go e.read()
	t.Cleanup(func() { b.Close(); <-served; <-e.done })
	return e
}

func (e *editor) read() {
	defer close(e.done)
	br := bufio.NewReader(e.nc)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			e.t.Errorf("bridge sent non-JSON %q", line)
			return
		}
		if string(m["jsonrpc"]) != `"2.0"` {
			e.t.Errorf("frame without jsonrpc 2.0: %s", line)
		}
		var method string
		json.Unmarshal(m["method"], &method)
		id, hasID := m["id"]
		switch {
		case method == "session/update":
			validate(e.t, "SessionNotification", m["params"])
			var p map[string]any
			json.Unmarshal(m["params"], &p)
			e.update <- p
		case method == "session/request_permission":
			validate(e.t, "RequestPermissionRequest", m["params"])
			var p map[string]any
			json.Unmarshal(m["params"], &p)
			e.asked <- p
			outcome := `{"outcome":"cancelled"}`
			if opt := e.choose(p); opt != "" {
				outcome = `{"outcome":"selected","optionId":"` + opt + `"}`
			}
			fmt.Fprintf(e.nc, `{"jsonrpc":"2.0","id":%s,"result":{"outcome":%s}}`+"\n", id, outcome)
		case strings.HasPrefix(method, "terminal/"):
			def := map[string]string{"terminal/create": "CreateTerminalRequest", "terminal/wait_for_exit": "WaitForTerminalExitRequest",
				"terminal/output": "TerminalOutputRequest", "terminal/release": "ReleaseTerminalRequest", "terminal/kill": "KillTerminalRequest"}[method]
			validate(e.t, def, m["params"])
			var p struct {
				Command    string
				Args       []string
				Cwd        string
				TerminalID string `json:"terminalId"`
			}
			json.Unmarshal(m["params"], &p)
			reply := `{}`
			e.mu.Lock()
			e.terminalCalls = append(e.terminalCalls, method)
			switch method {
			case "terminal/create":
				cmd := exec.Command(p.Command, p.Args...)
				cmd.Dir = p.Cwd
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				e.terminalOut, e.terminalCode = string(out), code
				reply = `{"terminalId":"term-1"}`
			case "terminal/wait_for_exit":
				reply = fmt.Sprintf(`{"exitCode":%d}`, e.terminalCode)
			case "terminal/output":
				b, _ := json.Marshal(map[string]any{"output": e.terminalOut, "truncated": false})
				reply = string(b)
			}
			e.mu.Unlock()
			fmt.Fprintf(e.nc, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, reply)
		case method == "elicitation/create":
			validate(e.t, "CreateElicitationRequest", m["params"])
			e.mu.Lock()
			e.questions = append(e.questions, string(m["params"]))
			e.mu.Unlock()
			fmt.Fprintf(e.nc, `{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"answer":"blue"}}}`+"\n", id)
		case method == "fs/read_text_file" || method == "fs/write_text_file":
			def := map[string]string{"fs/read_text_file": "ReadTextFileRequest", "fs/write_text_file": "WriteTextFileRequest"}[method]
			validate(e.t, def, m["params"])
			var p struct{ SessionId, Path, Content string }
			json.Unmarshal(m["params"], &p)
			e.mu.Lock()
			if e.buffers == nil {
				e.buffers = map[string]string{}
			}
			var reply string
			if method == "fs/write_text_file" {
				e.buffers[p.Path] = p.Content
				e.writes = append(e.writes, p.Path)
				reply = `{}`
			} else {
				b, _ := json.Marshal(map[string]string{"content": e.buffers[p.Path]})
				reply = string(b)
			}
			e.mu.Unlock()
			fmt.Fprintf(e.nc, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, reply)
		case method != "":
			e.t.Errorf("bridge sent an unexpected request %s", line)
		case hasID:
			k := string(id)
			e.mu.Lock()
			meth, ch := e.method[k], e.wait[k]
			e.mu.Unlock()
			var resp map[string]any
			json.Unmarshal(line, &resp)
			if _, isErr := m["error"]; isErr {
				validate(e.t, "Error", m["error"])
			} else if def := responseDefs[meth]; def != "" {
				validate(e.t, def, m["result"])
			}
			if ch != nil {
				ch <- resp
			}
		}
	}
}

func (e *editor) send(method, params string) chan map[string]any {
	e.mu.Lock()
	id := e.next // numbered from 0, as the ACP SDK does
	e.next++
	ch := make(chan map[string]any, 1)
	e.method[fmt.Sprint(id)], e.wait[fmt.Sprint(id)] = method, ch
	e.mu.Unlock()
	fmt.Fprintf(e.nc, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
	return ch
}

func (e *editor) call(method, params string) map[string]any {
	e.t.Helper()
	select {
	case r := <-e.send(method, params):
		return r
	case <-time.After(20 * time.Second):
		e.t.Fatalf("no answer to %s", method)
	}
	return nil
}

func (e *editor) notify(method, params string) {
	fmt.Fprintf(e.nc, `{"jsonrpc":"2.0","method":%q,"params":%s}`+"\n", method, params)
}

func result(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %v", r)
	}
	return res
}

// updates drains the updates received so far, waiting briefly for more.
func (e *editor) updates() []map[string]any {
	var out []map[string]any
	for {
		select {
		case u := <-e.update:
			out = append(out, u["update"].(map[string]any))
		case <-time.After(100 * time.Millisecond):
			return out
		}
	}
}

// kinds lists the updates' kinds, less the usage and command updates
// that come beside every turn.
func kinds(us []map[string]any) string {
	var s []string
	for _, u := range us {
		k := u["sessionUpdate"].(string)
		if k == "usage_update" || k == "available_commands_update" || k == "session_info_update" {
			continue
		}
		if st, ok := u["status"].(string); ok {
			k += ":" + st
		}
		s = append(s, k)
	}
	return strings.Join(s, " ")
}

func runDaemon(t *testing.T, tune ...func(*config.Config)) string {
	dirs, _ := config.ResolveDirs(filepath.Join(t.TempDir(), "cfg"), func(string) string { return "" })
	cfg := config.Default(func(string) string { return "" })
	for _, f := range tune {
		f(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		daemon.Run(ctx, daemon.Options{Version: "test", Dirs: dirs, Config: cfg, Ready: func(string) { close(ready) }})
	}()
	<-ready
	t.Cleanup(func() { cancel(); <-done })
	return dirs.Endpoint
}

func TestBridgeAgainstDaemon(t *testing.T) {
	endpoint := runDaemon(t)
	e := startBridge(t, endpoint)
	e.choose = func(map[string]any) string { return "allow_once" }

	init := result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false}}}`))
	if init["protocolVersion"].(float64) != 1 || init["agentCapabilities"].(map[string]any)["loadSession"] != true {
		t.Fatalf("initialize %v", init)
	}
	cwd := t.TempDir()
	sid := result(t, e.call("session/new", `{"cwd":"`+cwd+`","mcpServers":[]}`))["sessionId"].(string)

	// A prompt of text and an embedded resource streams chunks.
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hello"},{"type":"resource","resource":{"uri":"file:///a.txt","text":"A"}}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	us := e.updates()
	var text string
	for _, u := range us {
		if u["sessionUpdate"] == "agent_message_chunk" {
			text += u["content"].(map[string]any)["text"].(string)
		}
	}
	if text != "echo: hello\n\n[Resource: file:///a.txt]\nA" {
		t.Errorf("streamed %q (updates %s)", text, kinds(us))
	}

	// A tool that asks: tool_call pending, the editor is asked, then the
	// call runs and completes.
	res = result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool shell {\"command\":\"echo via-acp\"}"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("tool prompt %v", res)
	}
	asked := <-e.asked
	if tc := asked["toolCall"].(map[string]any); tc["kind"] != "execute" || tc["title"] != "shell: echo via-acp" {
		t.Errorf("permission request %v", asked)
	}
	us = e.updates()
	if got := kinds(us); !strings.HasPrefix(got, "tool_call:pending tool_call_update:in_progress tool_call_update:completed agent_message_chunk") {
		t.Errorf("tool updates %s", got)
	}
	for _, u := range us {
		if u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed" {
			if c := u["content"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]; c != "via-acp\n" {
				t.Errorf("tool output %v", c)
			}
		}
	}

	// Rejected in the editor: the call fails, the turn ends normally.
	e.choose = func(map[string]any) string { return "" } // cancelled
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool write_file {\"path\":\"x\",\"content\":\"y\"}"}]}`))
	<-e.asked
	if got := kinds(e.updates()); !strings.HasPrefix(got, "tool_call:pending tool_call_update:failed") {
		t.Errorf("rejected tool updates %s", got)
	}
	if _, err := os.Stat(filepath.Join(cwd, "x")); err == nil {
		t.Error("rejected write happened")
	}

	// Cancel (a notification): the prompt answers cancelled, not an error.
	pending := e.send("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/delay 10\n/chunks 1000"}]}`)
	<-e.update
	e.notify("session/cancel", `{"sessionId":"`+sid+`"}`)
	select {
	case r := <-pending:
		if result(t, r)["stopReason"] != "cancelled" {
			t.Errorf("cancelled prompt %v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled prompt never answered")
	}
	e.updates()

	// Errors: unknown session, unknown method, unsupported content.
	if r := e.call("session/prompt", `{"sessionId":"nope","prompt":[{"type":"text","text":"x"}]}`); r["error"] == nil || r["error"].(map[string]any)["code"].(float64) != -32002 {
		t.Errorf("unknown session %v", r)
	}
	if r := e.call("session/load", `{"sessionId":"nope","cwd":"/","mcpServers":[]}`); r["error"] == nil || r["error"].(map[string]any)["code"].(float64) != -32002 {
		t.Errorf("load unknown %v", r)
	}
	if r := e.call("session/set_mode", `{"sessionId":"`+sid+`","modeId":"x"}`); r["error"].(map[string]any)["code"].(float64) != -32601 {
		t.Errorf("unknown method %v", r)
	}
	if r := e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]}`); r["error"].(map[string]any)["code"].(float64) != -32602 {
		t.Errorf("audio prompt %v", r)
	}
	// An image and a binary resource become attachments: marker lines.
	if r := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"see"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"resource","resource":{"uri":"file:///x/doc.pdf","blob":"JVBERi0=","mimeType":"application/pdf"}}]}`)); r["stopReason"] != "end_turn" {
		t.Errorf("image prompt %v", r)
	}
	var seen string
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "agent_message_chunk" {
			seen += u["content"].(map[string]any)["text"].(string)
		}
	}
	if !strings.Contains(seen, "[IMAGE:") || !strings.Contains(seen, "[Document: doc.pdf]") {
		t.Errorf("attachments not in the prompt: %q", seen)
	}

	// list, and load from a second editor: history replays as updates.
	list := result(t, e.call("session/list", `{}`))
	if ss := list["sessions"].([]any); len(ss) != 1 || ss[0].(map[string]any)["sessionId"] != sid || ss[0].(map[string]any)["title"] != "hello" {
		t.Errorf("list %v", list)
	}
	e2 := startBridge(t, endpoint)
	e2.choose = func(map[string]any) string { return "allow_once" }
	result(t, e2.call("initialize", `{"protocolVersion":1}`))
	result(t, e2.call("session/load", `{"sessionId":"`+sid+`","cwd":"`+cwd+`","mcpServers":[]}`))
	replay := e2.updates()
	got := kinds(replay)
	if !strings.HasPrefix(got, "user_message_chunk agent_message_chunk") || strings.Count(got, "user_message_chunk") != 5 || !strings.Contains(got, "tool_call:pending tool_call_update:in_progress tool_call_update:completed") {
		t.Errorf("replay %s", got)
	}
	// The loaded session takes prompts.
	if r := result(t, e2.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"again"}]}`)); r["stopReason"] != "end_turn" {
		t.Errorf("prompt after load %v", r)
	}
	if r := result(t, e2.call("session/close", `{"sessionId":"`+sid+`"}`)); len(r) != 0 {
		t.Errorf("close %v", r)
	}
}

// The validation above can fail: a tool_call without its title, or an
// unknown update, is refused by the schema.
func TestSchemaRefusesInvalidUpdates(t *testing.T) {
	for _, bad := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"1"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"tool_result"}}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if schema(t, "SessionNotification").Validate(v) == nil {
			t.Errorf("schema accepted %s", bad)
		}
	}
	v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"stopReason":"error"}`))
	if schema(t, "PromptResponse").Validate(v) == nil {
		t.Error(`schema accepted stopReason "error"`)
	}
}

// The editor's MCP servers (ACP session/new mcpServers) serve that
// session: a stdio server's tool runs end to end, asking first.
func TestEditorMCPServers(t *testing.T) {
	bin := mcptest.Server(t)
	e := startBridge(t, runDaemon(t, func(c *config.Config) { c.MCP.TurnWaitMs = 30000 })) // however slow the machine
	e.choose = func(map[string]any) string { return "allow_once" }
	init := result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	if mc := init["agentCapabilities"].(map[string]any)["mcpCapabilities"].(map[string]any); mc["http"] != true {
		t.Fatalf("mcpCapabilities %v", mc)
	}
	cwd := t.TempDir()
	sid := result(t, e.call("session/new", `{"cwd":"`+cwd+`","mcpServers":[{"name":"calc","command":"`+bin+`","args":[],"env":[{"name":"X","value":"1"}]}]}`))["sessionId"].(string)
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool mcp__calc__add {\"a\":1,\"b\":2}"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	<-e.asked
	var text string
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "agent_message_chunk" {
			text += u["content"].(map[string]any)["text"].(string)
		}
	}
	if text != "tool mcp__calc__add returned: 3" {
		t.Fatalf("answer %q", text)
	}
	// The editor's server runs in the session's sandbox: it writes the
	// session's directory, and nothing outside the writable places.
	if sandbox.Available().EnforcedBy == "landlock" {
		outside, err := os.MkdirTemp("/var/tmp", "zeroclaw-mcp-escape-")
		if err != nil {
			t.Skip("no /var/tmp to try an escape into")
		}
		defer os.RemoveAll(outside)
		write := func(path string) string {
			e.updates()
			b, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
			line, _ := json.Marshal("/tool mcp__calc__write " + string(b))
			result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+string(line)+`}]}`))
			<-e.asked
			var said string
			for _, u := range e.updates() {
				if u["sessionUpdate"] == "agent_message_chunk" {
					said += u["content"].(map[string]any)["text"].(string)
				}
			}
			return said
		}
		if said := write(filepath.Join(outside, "escaped")); !strings.Contains(said, "permission denied") {
			t.Errorf("the MCP server wrote outside: %q", said)
		}
		if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
			t.Error("the file outside exists")
		}
		if said := write(filepath.Join(cwd, "inside")); !strings.Contains(said, "wrote ") {
			t.Errorf("the MCP server could not write the session's directory: %q", said)
		}
	}
	// An SSE server is refused with a clear error.
	if r := e.call("session/new", `{"cwd":"/","mcpServers":[{"type":"sse","name":"old","url":"http://127.0.0.1:1/sse","headers":[]}]}`); r["error"] == nil {
		t.Fatalf("an sse server was accepted: %v", r)
	}
}

// Config options (model, mode), slash commands, usage, resume and delete,
// every message valid ACP.
func TestConfigOptionsCommandsUsageResume(t *testing.T) {
	endpoint := runDaemon(t)
	e := startBridge(t, endpoint)
	e.choose = func(map[string]any) string { return "allow_once" }
	init := result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sc := init["agentCapabilities"].(map[string]any)["sessionCapabilities"].(map[string]any)
	if sc["resume"] == nil || sc["delete"] == nil || sc["list"] == nil || sc["close"] == nil {
		t.Fatalf("sessionCapabilities %v", sc)
	}
	cwd := t.TempDir()
	ns := result(t, e.call("session/new", `{"cwd":"`+cwd+`","mcpServers":[]}`))
	sid := ns["sessionId"].(string)
	opts := map[string]map[string]any{}
	for _, o := range ns["configOptions"].([]any) {
		opts[o.(map[string]any)["id"].(string)] = o.(map[string]any)
	}
	if opts["model"]["currentValue"] != "echo" || opts["mode"]["currentValue"] != "ask" || opts["mode"]["category"] != "mode" {
		t.Fatalf("config options %v", opts)
	}
	var cmds []any
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "available_commands_update" {
			cmds = u["availableCommands"].([]any)
		}
	}
	if len(cmds) == 0 || cmds[0].(map[string]any)["name"] != "compact" {
		t.Fatalf("available commands %v", cmds)
	}
	// Mode read-only: a write is refused without asking.
	set := result(t, e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"mode","value":"read-only"}`))
	for _, o := range set["configOptions"].([]any) {
		if o.(map[string]any)["id"] == "mode" && o.(map[string]any)["currentValue"] != "read-only" {
			t.Fatalf("after set: %v", o)
		}
	}
	if r := e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"mode","value":"yolo"}`); r["error"] == nil {
		t.Fatalf("a bad mode was taken: %v", r)
	}
	// Thought level: the session's reasoning level.
	if opts["thought_level"]["currentValue"] != "default" || opts["thought_level"]["category"] != "thought_level" {
		t.Fatalf("thought level option %v", opts["thought_level"])
	}
	set = result(t, e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"thought_level","value":"high"}`))
	for _, o := range set["configOptions"].([]any) {
		if o.(map[string]any)["id"] == "thought_level" && o.(map[string]any)["currentValue"] != "high" {
			t.Fatalf("after setting the thought level: %v", o)
		}
	}
	if r := e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"thought_level","value":"max"}`); r["error"] == nil {
		t.Fatalf("a bad thought level was taken: %v", r)
	}
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool write_file {\"path\":\"x\",\"content\":\"y\"}"}]}`))
	select {
	case a := <-e.asked:
		t.Fatalf("asked in read-only mode: %v", a)
	default:
	}
	var usage map[string]any
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "usage_update" {
			usage = u
		}
	}
	if usage == nil || usage["size"].(float64) != 32768 || usage["used"].(float64) <= 0 {
		t.Fatalf("usage %v", usage)
	}
	if _, err := os.Stat(filepath.Join(cwd, "x")); err == nil {
		t.Fatal("read-only mode wrote a file")
	}
	// /compact is a command, answered at once.
	if r := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/compact"}]}`)); r["stopReason"] != "end_turn" {
		t.Fatalf("/compact: %v", r)
	}
	e.updates()
	// Another editor resumes it: no replay, live from now on, the mode kept.
	e2 := startBridge(t, endpoint)
	result(t, e2.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	rs := result(t, e2.call("session/resume", `{"sessionId":"`+sid+`","cwd":"`+cwd+`","mcpServers":[]}`))
	for _, o := range rs["configOptions"].([]any) {
		if o.(map[string]any)["id"] == "mode" && o.(map[string]any)["currentValue"] != "read-only" {
			t.Fatalf("resumed mode %v", o)
		}
	}
	for _, u := range e2.updates() {
		if u["sessionUpdate"] != "available_commands_update" {
			t.Fatalf("resume replayed %v", u)
		}
	}
	result(t, e2.call("session/delete", `{"sessionId":"`+sid+`"}`))
	if r := e2.call("session/resume", `{"sessionId":"`+sid+`","cwd":"/","mcpServers":[]}`); r["error"] == nil {
		t.Fatalf("a deleted session resumed: %v", r)
	}
}

// An editor that offers fs: the file tools read its buffers and write
// through it (it shows the diff); the disk is not touched.
func TestFileToolsGoThroughTheEditor(t *testing.T) {
	e := startBridge(t, runDaemon(t))
	e.choose = func(map[string]any) string { return "allow_once" }
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}}}`))
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "main.go"), []byte("on disk\n"), 0o644)
	e.mu.Lock()
	e.buffers = map[string]string{filepath.Join(cwd, "main.go"): "package main // unsaved\n"}
	e.mu.Unlock()
	sid := result(t, e.call("session/new", `{"cwd":"`+cwd+`","mcpServers":[]}`))["sessionId"].(string)
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool read_file {\"path\":\"main.go\"}"}]}`))
	var out string
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed" {
			out = u["rawOutput"].(string)
		}
	}
	if out != "package main // unsaved\n" {
		t.Fatalf("read_file gave %q, not the editor's buffer", out)
	}
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool edit_file {\"path\":\"main.go\",\"old\":\"unsaved\",\"new\":\"edited\"}"}]}`))
	e.updates()
	e.mu.Lock()
	buf, writes := e.buffers[filepath.Join(cwd, "main.go")], append([]string(nil), e.writes...)
	e.mu.Unlock()
	if buf != "package main // edited\n" || len(writes) != 1 || writes[0] != filepath.Join(cwd, "main.go") {
		t.Fatalf("edit through the editor: buffer %q, writes %v", buf, writes)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "main.go")); string(b) != "on disk\n" {
		t.Fatalf("the disk was written: %q", b)
	}
	// The path checks still hold: outside the session directory is refused
	// before the editor is asked.
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool write_file {\"path\":\"../escape.txt\",\"content\":\"x\"}"}]}`))
	e.updates()
	e.mu.Lock()
	n := len(e.writes)
	e.mu.Unlock()
	if n != 1 {
		t.Fatalf("a write outside the session directory reached the editor")
	}
}

// The agent's questions reach an editor that answers forms (ACP
// elicitation), and the session's title follows each turn.
func TestQuestionsAndTitleReachTheEditor(t *testing.T) {
	e := startBridge(t, runDaemon(t))
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{}}}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[]}`))["sessionId"].(string)
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool ask_user {\"question\":\"Which color?\"}"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	var output, title string
	for _, u := range e.updates() {
		switch u["sessionUpdate"] {
		case "tool_call_update":
			if u["status"] == "completed" {
				output = u["rawOutput"].(string)
			}
		case "session_info_update":
			title, _ = u["title"].(string)
		}
	}
	e.mu.Lock()
	qs := append([]string(nil), e.questions...)
	e.mu.Unlock()
	if len(qs) != 1 || !strings.Contains(qs[0], "Which color?") || !strings.Contains(output, "blue") {
		t.Fatalf("questions %v, tool output %q", qs, output)
	}
	if !strings.Contains(title, "ask_user") {
		t.Fatalf("session title %q", title)
	}
}

// An editor with a terminal runs the shell tool's commands; the tool call
// shows the terminal, and the output and exit code reach the model.
func TestShellRunsInTheEditorsTerminal(t *testing.T) {
	e := startBridge(t, runDaemon(t))
	e.choose = func(map[string]any) string { return "allow_once" }
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"terminal":true}}`))
	cwd := t.TempDir()
	sid := result(t, e.call("session/new", `{"cwd":"`+cwd+`","mcpServers":[]}`))["sessionId"].(string)
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool shell {\"command\":\"pwd; echo in-terminal; exit 3\"}"}]}`))
	var shown bool
	var output string
	for _, u := range e.updates() {
		if u["sessionUpdate"] != "tool_call_update" {
			continue
		}
		if c, ok := u["content"].([]any); ok && len(c) > 0 {
			if c[0].(map[string]any)["type"] == "terminal" {
				shown = true
			}
		}
		if u["status"] == "failed" {
			output = u["rawOutput"].(string)
		}
	}
	e.mu.Lock()
	calls := strings.Join(e.terminalCalls, " ")
	e.mu.Unlock()
	if calls != "terminal/create terminal/wait_for_exit terminal/output terminal/release" {
		t.Fatalf("terminal calls: %s", calls)
	}
	if !shown || !strings.Contains(output, cwd) || !strings.Contains(output, "in-terminal") || !strings.Contains(output, "[exit code 3]") {
		t.Fatalf("shown %v, output %q", shown, output)
	}
}

// _meta the bridge does not know is accepted wherever ACP allows it, and
// never breaks a request.
func TestUnknownMetaIsAccepted(t *testing.T) {
	e := startBridge(t, runDaemon(t))
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"_meta":{"zed.dev/x":1}},"_meta":{"trace":"abc"}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[],"_meta":{"editor":{"window":3}}}`))["sessionId"].(string)
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hi","_meta":{"x":true}}],"_meta":{"traceId":"t1"}}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt with _meta: %v", res)
	}
	e.updates()
}

// A tool call starts pending exactly when the daemon will ask for its
// approval, as the daemon says (needsApproval): not a shell under the
// full mode, nor a tool allowed for the session already; an untrusted
// MCP tool, which the bridge cannot know by its name, does.
func TestToolCallPendingExactlyWhenApprovalFollows(t *testing.T) {
	bin := mcptest.Server(t)
	e := startBridge(t, runDaemon(t, func(c *config.Config) { c.MCP.TurnWaitMs = 30000 })) // however slow the machine
	answer := "allow_once"
	e.choose = func(map[string]any) string { return answer }
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[{"name":"calc","command":"`+bin+`","args":[],"env":[]}]}`))["sessionId"].(string)
	e.updates()
	turn := func(what, prompt string) (status string, asked int) {
		t.Helper()
		res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+strconv.Quote(prompt)+`}]}`))
		if res["stopReason"] != "end_turn" {
			t.Fatalf("%s: %v", what, res)
		}
		for _, u := range e.updates() {
			if u["sessionUpdate"] == "tool_call" {
				status = u["status"].(string)
			}
		}
		for {
			select {
			case <-e.asked:
				asked++
			default:
				return status, asked
			}
		}
	}
	for _, c := range []struct {
		what, mode, answer, prompt, status string
		asked                              int
	}{
		{"a shell under ask", "ask", "allow_once", `/tool shell {"command":"echo a"}`, "pending", 1},
		{"a shell under full", "full", "", `/tool shell {"command":"echo b"}`, "in_progress", 0},
		{"an untrusted MCP tool", "ask", "allow_always", `/tool mcp__calc__add {"a":1,"b":2}`, "pending", 1},
		{"the MCP tool, allowed for the session", "ask", "", `/tool mcp__calc__add {"a":2,"b":3}`, "in_progress", 0},
		{"a read under ask", "ask", "", `/tool list_dir {}`, "in_progress", 0},
	} {
		result(t, e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"mode","value":"`+c.mode+`"}`))
		e.updates()
		answer = c.answer
		if status, asked := turn(c.what, c.prompt); status != c.status || asked != c.asked {
			t.Errorf("%s: tool_call %q, asked %d times; want %q, %d", c.what, status, asked, c.status, c.asked)
		}
	}
}

// A turn stopped by the budget ends with ACP's nearest stop reason, and
// the editor is told which limit in the reply; usage_update carries the
// session's cost.
func TestBudgetReachesTheEditor(t *testing.T) {
	endpoint := runDaemon(t, func(c *config.Config) {
		p := c.Providers[c.Agents["default"].Provider]
		p.Pricing = &config.Pricing{Input: 1e6} // $1 an input token
		c.Providers[c.Agents["default"].Provider] = p
		c.Budget.MaxCostUSDPerSession = 0.5
	})
	e := startBridge(t, endpoint)
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sid := result(t, e.call("session/new", `{"cwd":`+strconv.Quote(t.TempDir())+`,"mcpServers":[]}`))["sessionId"].(string)
	r := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"hi"}]}`))
	if r["stopReason"] != "max_turn_requests" {
		t.Fatalf("budget stop: %v", r)
	}
	var said string
	var cost map[string]any
	for _, u := range e.updates() {
		switch u["sessionUpdate"] {
		case "agent_message_chunk":
			said += u["content"].(map[string]any)["text"].(string)
		case "usage_update":
			cost, _ = u["cost"].(map[string]any)
		}
	}
	if !strings.HasPrefix(said, "echo: hi") || !strings.Contains(said, "max_cost_usd_per_session = 0.5") {
		t.Errorf("the editor was told %q", said)
	}
	if cost == nil || cost["currency"] != "USD" || cost["amount"].(float64) < 1 {
		t.Errorf("usage_update cost %v", cost)
	}
}

// "/undo" in the editor undoes the last turn's files and says what it
// restored; session/fork (unstable) opens a fork of the session.
func TestUndoAndForkFromTheEditor(t *testing.T) {
	endpoint := runDaemon(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = "full"
		c.Agents["default"] = a
	})
	e := startBridge(t, endpoint)
	init := result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	if caps := init["agentCapabilities"].(map[string]any)["sessionCapabilities"].(map[string]any); caps["fork"] == nil {
		t.Errorf("fork is not advertised: %v", caps)
	}
	cwd := t.TempDir()
	sid := result(t, e.call("session/new", `{"cwd":`+strconv.Quote(cwd)+`,"mcpServers":[]}`))["sessionId"].(string)
	prompt := func(id, text string) map[string]any {
		b, _ := json.Marshal(text)
		return result(t, e.call("session/prompt", `{"sessionId":"`+id+`","prompt":[{"type":"text","text":`+string(b)+`}]}`))
	}
	prompt(sid, `/tool write_file {"path":"made.txt","content":"x"}`)
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); err != nil {
		t.Fatal(err)
	}
	e.updates()
	if r := prompt(sid, "/undo"); r["stopReason"] != "end_turn" {
		t.Fatalf("/undo: %v", r)
	}
	var said string
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "agent_message_chunk" {
			said += u["content"].(map[string]any)["text"].(string)
		}
	}
	if !strings.Contains(said, "Undid turn 1") || !strings.Contains(said, "removed made.txt") {
		t.Errorf("the editor was told %q", said)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); err == nil {
		t.Error("made.txt is still there after /undo")
	}
	fork := result(t, e.call("session/fork", `{"sessionId":"`+sid+`","cwd":`+strconv.Quote(cwd)+`,"mcpServers":[]}`))
	fid, _ := fork["sessionId"].(string)
	if fid == "" || fid == sid || fork["configOptions"] == nil {
		t.Fatalf("fork: %v", fork)
	}
	if r := prompt(fid, "in the fork"); r["stopReason"] != "end_turn" {
		t.Errorf("a prompt in the fork: %v", r)
	}
}

// until reads updates until one satisfies ok (the test's deadline ends
// a wait for one that never comes).
func (e *editor) until(ok func(u map[string]any) bool) []map[string]any {
	e.t.Helper()
	var seen []map[string]any
	for {
		select {
		case u := <-e.update:
			up := u["update"].(map[string]any)
			seen = append(seen, up)
			if ok(up) {
				return seen
			}
		case <-time.After(20 * time.Second):
			e.t.Fatalf("the update waited for never came; saw %v", kinds(seen))
		}
	}
}

func chunkText(us []map[string]any, kind string) string {
	var s string
	for _, u := range us {
		if u["sessionUpdate"] == kind {
			s += u["content"].(map[string]any)["text"].(string)
		}
	}
	return s
}

// The steering extension as claude-agent-acp and codex-acp have it:
// advertised in initialize's _meta, a steer joins the running turn, a
// second prompt while one runs waits its turn, an idle steer starts a
// turn or (opted in) answers promptRequired; another client's prompt on
// the session reaches the editor as it is sent.
func TestSteeringExtension(t *testing.T) {
	endpoint := runDaemon(t)
	e := startBridge(t, endpoint)
	init := result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"zed","version":"1"}}`))
	if st, _ := init["_meta"].(map[string]any)["steering"].(map[string]any); st["supported"] != true {
		t.Fatalf("steering is not advertised: %v", init["_meta"])
	}
	sid := result(t, e.call("session/new", `{"cwd":`+strconv.Quote(t.TempDir())+`,"mcpServers":[]}`))["sessionId"].(string)
	steer := func(text, meta string) map[string]any {
		return e.call("_session/steering", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+strconv.Quote(text)+`}]`+meta+`}`)
	}
	running := e.send("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/delay 5\n/chunks 200"}]}`)
	queued := e.send("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"the second prompt"}]}`)
	e.until(func(u map[string]any) bool { return u["sessionUpdate"] == "agent_message_chunk" })
	if r := result(t, steer("use the other file", "")); r["outcome"] != "injected" {
		t.Fatalf("a steer during a turn: %v", r)
	}
	if r := result(t, <-running); r["stopReason"] != "end_turn" {
		t.Fatalf("the steered turn: %v", r)
	}
	if r := result(t, <-queued); r["stopReason"] != "end_turn" {
		t.Fatalf("the queued prompt: %v", r)
	}
	// The steer joined the first turn; the second prompt ran after it.
	us := e.until(func(u map[string]any) bool {
		return u["sessionUpdate"] == "agent_message_chunk" && strings.Contains(u["content"].(map[string]any)["text"].(string), "prompt")
	})
	txt := chunkText(us, "agent_message_chunk")
	if steered, second := strings.Index(txt, "echo: use the other file"), strings.Index(txt, "echo: the second prompt"); steered < 0 || second < steered {
		t.Errorf("the turns streamed %q", txt)
	}
	e.updates()

	// Idle: promptRequired when asked for, else a new turn.
	if r := result(t, steer("idle", `,"_meta":{"steering":{"idleBehavior":"promptRequired"}}`)); r["outcome"] != "promptRequired" || r["reason"] != "noRunningTurn" {
		t.Errorf("an idle steer, promptRequired: %v", r)
	}
	if r := steer("idle", `,"_meta":{"steering":{"idleBehavior":"sometimes"}}`); r["error"].(map[string]any)["code"] != -32602.0 {
		t.Errorf("an unknown idleBehavior: %v", r)
	}
	if r := result(t, steer("start a turn", "")); r["outcome"] != "startedNewTurn" {
		t.Errorf("an idle steer: %v", r)
	}
	us = e.until(func(u map[string]any) bool { return strings.Contains(fmt.Sprint(u["content"]), "turn") })
	if txt := chunkText(us, "agent_message_chunk"); !strings.Contains(txt, "start") {
		t.Errorf("the started turn streamed %q", txt)
	}

	// Another client on the session: its prompt is shown to the editor.
	other, err := client.Dial(context.Background(), endpoint, client.Options{ClientInfo: protocol.ClientInfo{Name: "phone"}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.NewSession(context.Background(), protocol.SessionNewParams{SessionID: sid, KeepSiblings: true}); err != nil {
		t.Fatal(err)
	}
	text := "from the phone"
	if _, err := other.Prompt(context.Background(), protocol.SessionPromptParams{SessionID: sid, Prompt: &text}); err != nil {
		t.Fatal(err)
	}
	us = e.until(func(u map[string]any) bool {
		return u["sessionUpdate"] == "agent_message_chunk" && strings.Contains(fmt.Sprint(u["content"]), "phone")
	})
	if got := chunkText(us, "user_message_chunk"); got != text {
		t.Errorf("the other client's prompt reached the editor as %q", got)
	}
}

// An MCP server's question reaches the editor as ACP elicitation/create
// (valid against the schema), and the server gets the editor's answer.
func TestMCPServerQuestionReachesTheEditor(t *testing.T) {
	bin := mcptest.Server(t)
	e := startBridge(t, runDaemon(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = "full"
		c.Agents["default"] = a
		c.MCP.TurnWaitMs = 30000 // however slow the machine, the server is there
		c.MCP.Servers = map[string]config.MCPServer{"q": {Command: bin}}
	}))
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{}}}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[]}`))["sessionId"].(string)
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool mcp__q__ask {\"question\":\"Which colour?\"}"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	var said string
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "agent_message_chunk" {
			said += u["content"].(map[string]any)["text"].(string)
		}
	}
	e.mu.Lock()
	qs := append([]string(nil), e.questions...)
	e.mu.Unlock()
	if len(qs) != 1 || !strings.Contains(qs[0], "Which colour? (MCP server q)") || !strings.Contains(said, `accept {"answer":"blue"}`) {
		t.Fatalf("questions %v, the model was told %q", qs, said)
	}
}

// An editor that shows no forms: a form with defaults for every field
// it needs is answered by them, a form without is declined, and the
// conversation says which, naming the answers.
func TestFormsWithoutAnEditorThatShowsThem(t *testing.T) {
	bin := mcptest.Server(t)
	e := startBridge(t, runDaemon(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = "full"
		c.Agents["default"] = a
		c.MCP.TurnWaitMs = 30000 // however slow the machine, the server is there
		c.MCP.Servers = map[string]config.MCPServer{"q": {Command: bin}}
	}))
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[]}`))["sessionId"].(string)
	said := func() string {
		var s string
		for _, u := range e.updates() {
			if u["sessionUpdate"] == "agent_message_chunk" {
				s += u["content"].(map[string]any)["text"].(string)
			}
		}
		return s
	}
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool mcp__q__survey {}"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	got := said()
	for _, w := range []string{`accept {"age":36,"score":9.5,"status":"active","verified":true,"zname":"Ada"}`,
		`This editor does not show forms: "About you (MCP server q)" was answered with its defaults (Name: Ada, age: 36, score: 9.5, status: active, verified: y)`} {
		if !strings.Contains(got, w) {
			t.Errorf("the conversation does not say %q:\n%s", w, got)
		}
	}
	res = result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool mcp__q__ask {\"question\":\"Which colour?\"}"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	got = said()
	for _, w := range []string{"decline null", `"Which colour? (MCP server q)" needs an answer with no default (answer): declined.`} {
		if !strings.Contains(got, w) {
			t.Errorf("the conversation does not say %q:\n%s", w, got)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.questions) != 0 {
		t.Errorf("an editor without forms was asked %v", e.questions)
	}
}

// An MCP server's prompts reach the editor as available commands, and
// one sent as a prompt is expanded by the daemon.
func TestMCPPromptsAreAvailableCommands(t *testing.T) {
	bin := mcptest.Server(t)
	e := startBridge(t, runDaemon(t, func(c *config.Config) {
		c.MCP.TurnWaitMs = 30000 // however slow the machine, the server is there
		c.MCP.Servers = map[string]config.MCPServer{"p": {Command: bin}}
	}))
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[]}`))["sessionId"].(string)
	e.until(func(u map[string]any) bool {
		return u["sessionUpdate"] == "available_commands_update" && strings.Contains(fmt.Sprint(u["availableCommands"]), "mcp__p__review")
	})
	res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/mcp__p__review main.go"}]}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt %v", res)
	}
	us := e.until(func(u map[string]any) bool {
		return u["sessionUpdate"] == "agent_message_chunk" && strings.Contains(fmt.Sprint(u["content"]), "style.")
	})
	if txt := chunkText(us, "agent_message_chunk"); !strings.Contains(txt, "Review main.go in the plain style.") {
		t.Errorf("the prompt sent: %q", txt)
	}
}

// A server ready only after the session opened (past the turn's wait)
// still reaches the editor: its prompts come in an
// available_commands_update once it is ready (session/mcpChanged).
func TestMCPPromptsOfALateServerFollow(t *testing.T) {
	bin := mcptest.Server(t)
	gate := filepath.Join(t.TempDir(), "go")
	e := startBridge(t, runDaemon(t, func(c *config.Config) {
		c.MCP.TurnWaitMs = 1
		c.MCP.Servers = map[string]config.MCPServer{"p": {Command: bin, Args: []string{"-start-gate", gate}}}
	}))
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[]}`))
	first := e.until(func(u map[string]any) bool { return u["sessionUpdate"] == "available_commands_update" })
	if strings.Contains(fmt.Sprint(first), "mcp__p__review") {
		t.Fatalf("the server's prompts before it started: %v", first)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.until(func(u map[string]any) bool {
		return u["sessionUpdate"] == "available_commands_update" && strings.Contains(fmt.Sprint(u["availableCommands"]), "mcp__p__review")
	})
}

// A background process is a tool call of its own in the editor: opened
// when it starts, its content the output as it comes, completed when it
// exits.
func TestBackgroundProcessInTheEditor(t *testing.T) {
	endpoint := runDaemon(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = "full"
		c.Agents["default"] = a
	})
	e := startBridge(t, endpoint)
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sid := result(t, e.call("session/new", `{"cwd":`+strconv.Quote(t.TempDir())+`,"mcpServers":[]}`))["sessionId"].(string)
	line := `/tool shell {"command":"echo first; sleep 0.7; echo second","background":true}`
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+strconv.Quote(line)+`}]}`))
	content := func(u map[string]any) string {
		cs, _ := u["content"].([]any)
		if len(cs) == 0 {
			return ""
		}
		return fmt.Sprint(cs[0].(map[string]any)["content"].(map[string]any)["text"])
	}
	seen := e.until(func(u map[string]any) bool {
		id, _ := u["toolCallId"].(string)
		return u["sessionUpdate"] == "tool_call_update" && strings.HasPrefix(id, "proc_p_") && u["status"] == "completed"
	})
	var opened, first bool
	for _, u := range seen {
		id, _ := u["toolCallId"].(string)
		if !strings.HasPrefix(id, "proc_") {
			continue
		}
		switch {
		case u["sessionUpdate"] == "tool_call":
			opened = u["kind"] == "execute" && u["status"] == "in_progress" && strings.Contains(fmt.Sprint(u["title"]), "echo first")
		case u["status"] == nil && strings.Contains(content(u), "first") && !strings.Contains(content(u), "second"):
			first = true // followed while it ran
		}
	}
	last := seen[len(seen)-1]
	if !opened || !first || !strings.Contains(content(last), "first\nsecond\n") || !strings.Contains(content(last), "exited with exit code 0") {
		t.Fatalf("the process's tool call: opened %v, output while running %v, last %v", opened, first, last)
	}
}

// A task in the editor: its tool call (kind think) names the child's
// session in _meta.zeroclaw.subagent, whose history session/load
// replays.
func TestSubagentInTheEditor(t *testing.T) {
	endpoint := runDaemon(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = "full"
		c.Agents["default"] = a
	})
	e := startBridge(t, endpoint)
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	cwd := t.TempDir()
	sid := result(t, e.call("session/new", `{"cwd":`+strconv.Quote(cwd)+`,"mcpServers":[]}`))["sessionId"].(string)
	line := `/tool task {"description":"a helper","prompt":"hello child"}`
	result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":`+strconv.Quote(line)+`}]}`))
	var kind, child string
	for _, u := range e.updates() {
		switch {
		case u["sessionUpdate"] == "tool_call" && strings.Contains(fmt.Sprint(u["title"]), "a helper"):
			kind, _ = u["kind"].(string)
		case u["sessionUpdate"] == "tool_call_update":
			if m, ok := u["_meta"].(map[string]any); ok {
				if z, ok := m["zeroclaw"].(map[string]any); ok {
					if s, ok := z["subagent"].(map[string]any); ok {
						child, _ = s["sessionId"].(string)
					}
				}
			}
		}
	}
	if kind != "think" || !strings.HasPrefix(child, "ses_") {
		t.Fatalf("the task's tool call: kind %q, child %q; updates %v", kind, child, kinds(e.updates()))
	}
	e2 := startBridge(t, endpoint)
	result(t, e2.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	result(t, e2.call("session/load", `{"sessionId":"`+child+`","cwd":`+strconv.Quote(cwd)+`,"mcpServers":[]}`))
	if said := chunkText(e2.updates(), "agent_message_chunk"); !strings.Contains(said, "echo: hello child") {
		t.Fatalf("the child's session, loaded: %q", said)
	}
}
