package mcptools

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

var (
	buildOnce sync.Once
	serverBin string
	buildErr  error
)

// server builds testdata/server, a real MCP server on the same SDK.
func server(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zeroclaw-mcp-server")
		if err != nil {
			buildErr = err
			return
		}
		serverBin = filepath.Join(dir, "server")
		out, err := exec.Command("go", "build", "-o", serverBin, "./testdata/server").CombinedOutput()
		if err != nil {
			buildErr = err
			serverBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building the test MCP server: %v\n%s", buildErr, serverBin)
	}
	return serverBin
}

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
	set := NewSet(map[string]config.MCPServer{"calc": {Command: server(t), AutoApprove: []string{"add"}}}, nil, nil)
	defer set.Close()
	if st := set.Status(); st[0].State != StateStopped {
		t.Fatalf("before first use: %+v", st)
	}
	ts := set.Tools(context.Background())
	add := find(ts, "mcp__calc__add")
	if add == nil || len(ts) != 4 { // add, slow, write, crash
		t.Fatalf("tools %v", ts)
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
	if st := set.Status(); st[0].State != StateReady || st[0].Tools != 4 {
		t.Fatalf("status %+v", st)
	}
}

func TestHTTPServer(t *testing.T) {
	cmd := exec.Command(server(t), "-http", "127.0.0.1:0")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(map[string]config.MCPServer{"web": {URL: strings.TrimSpace(url), Headers: map[string]string{"X-Test": "1"}, Trust: true}}, nil, nil)
	defer set.Close()
	ts := set.Tools(context.Background())
	add := find(ts, "mcp__web__add")
	if add == nil || add.Asks() {
		t.Fatalf("tools %v (trusted: none asks)", ts)
	}
	if r := call(t, context.Background(), add, `{"a":40,"b":2}`); r.IsError || r.Output != "42" {
		t.Fatalf("add over HTTP: %+v", r)
	}
}

// A server that crashes is a tool error, then starts again on a later
// use; one that hangs at start or in a call costs its timeout, not the
// turn; a cancelled turn cancels the call.
func TestBrokenServers(t *testing.T) {
	bin := server(t)
	set := NewSet(map[string]config.MCPServer{
		"ok":   {Command: bin, CallTimeoutSecs: 1},
		"hung": {Command: bin, Args: []string{"-hang-start"}, StartTimeoutSecs: 1},
	}, nil, nil)
	defer set.Close()
	t0 := time.Now()
	ts := set.Tools(context.Background())
	if took := time.Since(t0); took > 10*time.Second {
		t.Fatalf("a hung server held the start for %s", took)
	}
	if find(ts, "mcp__hung__add") != nil || find(ts, "mcp__ok__add") == nil {
		t.Fatalf("tools %v", ts)
	}
	var hung Status
	for _, s := range set.Status() {
		if s.Name == "hung" {
			hung = s
		}
	}
	if hung.State != StateFailed || !strings.Contains(hung.Error, "no answer within 1s") {
		t.Fatalf("the hung server: %+v", hung)
	}
	// A call that never answers: the call timeout.
	if r := call(t, context.Background(), find(ts, "mcp__ok__slow"), `{}`); !r.IsError || !strings.Contains(r.Output, "no answer within 1s") {
		t.Fatalf("slow call: %+v", r)
	}
	// A cancelled turn: the call ends at once.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	t0 = time.Now()
	if r := call(t, ctx, find(ts, "mcp__ok__slow"), `{}`); !r.IsError || !strings.Contains(r.Output, "cancelled") || time.Since(t0) > 900*time.Millisecond {
		t.Fatalf("cancelled call: %+v after %s", r, time.Since(t0))
	}
	// A crash: an error now, a new server on a later use.
	if r := call(t, context.Background(), find(ts, "mcp__ok__crash"), `{}`); !r.IsError {
		t.Fatalf("crash: %+v", r)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if add := find(set.Tools(context.Background()), "mcp__ok__add"); add != nil { // ready again
			if r := call(t, context.Background(), add, `{"a":1,"b":1}`); !r.IsError && r.Output == "2" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the crashed server was not started again: %+v", set.Status())
		}
		time.Sleep(100 * time.Millisecond)
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
