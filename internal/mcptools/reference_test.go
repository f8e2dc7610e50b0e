package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The client against the MCP reference servers from npm (on the
// TypeScript SDK: testdata/reference pins them), what the checks
// ran on: server-everything's tools, an image, progress, a form question,
// a sampling request, its resources and prompts, and the tool that needs
// tasks hidden.
func TestReferenceServerEverything(t *testing.T) {
	entry := mcptest.Reference(t, "server-everything")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set := newSet(map[string]config.MCPServer{"ev": {Command: "node", Args: []string{entry, "stdio"}}})
	defer set.Close()
	ts := set.Tools(ctx)
	if st := set.Status()[0]; st.State != StateReady || len(st.Hidden) != 1 || st.Hidden[0].Name != "simulate-research-query" {
		t.Fatalf("status %+v", st)
	}
	if find(ts, "mcp__ev__simulate-research-query") != nil {
		t.Fatal("the tool that needs tasks is offered")
	}
	if r := call(t, ctx, find(ts, "mcp__ev__echo"), `{"message":"over the wire"}`); r.IsError || !strings.Contains(r.Output, "over the wire") {
		t.Fatalf("echo: %+v", r)
	}

	r := call(t, ctx, find(ts, "mcp__ev__get-tiny-image"), `{}`)
	if r.IsError || len(r.Images) != 1 || r.Images[0].MimeType != "image/png" || !bytes.HasPrefix(r.Images[0].Data, []byte("\x89PNG")) ||
		!strings.Contains(r.Output, "[image image/png, ") || !strings.Contains(r.Output, "The image above is the MCP logo.") {
		t.Fatalf("the image: %q, %d images", r.Output, len(r.Images))
	}

	var progress []float64
	env := &tool.Env{Progress: func(p, total float64, _ string) { progress = append(progress, p) }}
	if r := find(ts, "mcp__ev__trigger-long-running-operation").Run(ctx, env, json.RawMessage(`{"duration":0.3,"steps":3}`)); r.IsError {
		t.Fatalf("long running: %+v", r)
	}
	// Its steps are 0.1 s apart and the last comes with the answer: the
	// SDK hands a notification over in a goroutine of its own, so the
	// last may come after the call's end, and is dropped then.
	if len(progress) == 0 || len(progress) > 3 || progress[0] != 1 || !slices.IsSorted(progress) {
		t.Fatalf("progress seen: %v", progress)
	}

	var asked tool.Elicitation
	env = &tool.Env{Elicit: func(_ context.Context, e tool.Elicitation) (tool.Answer, error) {
		asked = e
		return tool.Answer{Action: "accept", Content: json.RawMessage(`{"name":"Ada Lovelace","check":true}`)}, nil
	}}
	r = find(ts, "mcp__ev__trigger-elicitation-request").Run(ctx, env, json.RawMessage(`{}`))
	if r.IsError || !strings.Contains(r.Output, "User provided the requested information") || !strings.Contains(r.Output, "Ada Lovelace") {
		t.Fatalf("the question's answer: %+v", r)
	}
	if !strings.Contains(asked.Message, "(MCP server ev)") || !strings.Contains(string(asked.Schema), `"name"`) {
		t.Fatalf("asked %+v", asked)
	}

	var sampled tool.SampleRequest
	env = &tool.Env{Sample: func(_ context.Context, req tool.SampleRequest) (tool.SampleResult, error) {
		sampled = req
		return tool.SampleResult{Text: "a short answer", Model: "echo", StopReason: "endTurn"}, nil
	}}
	r = find(ts, "mcp__ev__trigger-sampling-request").Run(ctx, env, json.RawMessage(`{"prompt":"say hi","maxTokens":42}`))
	if r.IsError || !strings.Contains(r.Output, "a short answer") {
		t.Fatalf("sampling: %+v", r)
	}
	if sampled.MaxTokens != 42 || len(sampled.Messages) != 1 || !strings.Contains(sampled.Messages[0].Text, "say hi") || sampled.System == "" {
		t.Fatalf("the sampling request: %+v", sampled)
	}

	prompts, resources := set.Offers(ctx)
	var commands, uris []string
	for _, p := range prompts {
		commands = append(commands, p.Command)
	}
	for _, r := range resources {
		uris = append(uris, r.URI)
	}
	if !strings.Contains(strings.Join(commands, " "), "/mcp__ev__simple-prompt") ||
		!strings.Contains(strings.Join(uris, " "), "demo://resource/static/document/architecture.md") {
		t.Fatalf("prompts %v, resources %v", commands, uris)
	}
	if text, ok, err := set.Prompt(ctx, "mcp__ev__simple-prompt", ""); !ok || err != nil || !strings.Contains(text, "simple prompt without arguments") {
		t.Fatalf("the prompt: %q %v %v", text, ok, err)
	}
	if text, ok, err := set.Prompt(ctx, "mcp__ev__args-prompt", "city=Lyon"); !ok || err != nil || !strings.Contains(text, "Lyon") {
		t.Fatalf("the prompt with an argument: %q %v %v", text, ok, err)
	}
	if text, _, _, ok, err := set.ReadResource(ctx, "ev", "demo://resource/static/document/architecture.md"); !ok || err != nil || text == "" {
		t.Fatalf("the resource: %q %v %v", text, ok, err)
	}
}

// server-filesystem follows the session's directory through roots
// (started without directories, it asks roots/list): it may write there
// and nowhere else; started with a directory that does not exist, it
// exits, and the failure says how and what it printed.
func TestReferenceServerFilesystem(t *testing.T) {
	entry := mcptest.Reference(t, "server-filesystem")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	set := newSet(map[string]config.MCPServer{"fs": {Command: "node", Args: []string{entry}}}).WithRoot(dir)
	defer set.Close()
	ts := set.Tools(ctx)
	// The server asks for the roots once initialized and takes them in
	// its own time, answering calls meanwhile: its state is polled (an
	// external process; no event says when it took them).
	for {
		r := call(t, ctx, find(ts, "mcp__fs__list_allowed_directories"), `{}`)
		if strings.Contains(r.Output, dir) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("allowed directories: %+v\n%s", r, set.servers[0].stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	in, _ := json.Marshal(map[string]string{"path": filepath.Join(dir, "note.txt"), "content": "written through roots"})
	if r := call(t, ctx, find(ts, "mcp__fs__write_file"), string(in)); r.IsError {
		t.Fatalf("write inside the root: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "note.txt")); string(b) != "written through roots" {
		t.Fatalf("the file: %q", b)
	}
	outside := filepath.Join(t.TempDir(), "escape.txt")
	in, _ = json.Marshal(map[string]string{"path": outside, "content": "x"})
	if r := call(t, ctx, find(ts, "mcp__fs__write_file"), string(in)); !r.IsError {
		t.Fatalf("write outside the root: %+v", r)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the server wrote outside the session's directory")
	}

	broken := newSet(map[string]config.MCPServer{"fs": {Command: "node", Args: []string{entry, filepath.Join(dir, "no-such-dir")}}})
	defer broken.Close()
	broken.Tools(ctx)
	if st := broken.Status()[0]; st.State != StateFailed || !strings.Contains(st.Error, "exited with status 1") ||
		!strings.Contains(st.Error, "None of the specified directories are accessible") {
		t.Fatalf("the failure: %+v", st)
	}
}

// server-memory's tools, end to end: what one call stores, another reads.
func TestReferenceServerMemory(t *testing.T) {
	entry := mcptest.Reference(t, "server-memory")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	set := newSet(map[string]config.MCPServer{"mem": {Command: "node", Args: []string{entry},
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}}})
	defer set.Close()
	ts := set.Tools(ctx)
	if r := call(t, ctx, find(ts, "mcp__mem__create_entities"), `{"entities":[{"name":"zeroclaw","entityType":"project","observations":["written in Go"]}]}`); r.IsError {
		t.Fatalf("create: %+v", r)
	}
	if r := call(t, ctx, find(ts, "mcp__mem__read_graph"), `{}`); r.IsError || !strings.Contains(r.Output, "written in Go") {
		t.Fatalf("read: %+v", r)
	}
}
