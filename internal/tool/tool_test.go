package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func run(t *testing.T, env *Env, name, input string) Result {
	t.Helper()
	tl, ok := Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	if !json.Valid(tl.Spec().Schema) {
		t.Fatalf("%s: schema is not JSON", name)
	}
	return tl.Run(context.Background(), env, json.RawMessage(input))
}

func sandbox(t *testing.T) *Env {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\ngamma beta\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b.go"), []byte("package b\n// beta here\n"), 0o644)
	return &Env{Cwd: dir, Confine: true}
}

func TestEveryToolOfTheSpecIsBuiltIn(t *testing.T) {
	want := "ask_user edit_file list_dir plan poll read_file search shell write_file"
	if got := strings.Join(Names(), " "); got != want {
		t.Fatalf("tools %q, want %q", got, want)
	}
	for _, n := range Names() {
		tl, _ := Lookup(n)
		asks := n == "shell" || n == "write_file" || n == "edit_file"
		if tl.Asks() != asks {
			t.Errorf("%s: Asks %v, want %v", n, tl.Asks(), asks)
		}
	}
}

func TestFileTools(t *testing.T) {
	env := sandbox(t)
	if r := run(t, env, "read_file", `{"path":"a.txt"}`); r.IsError || r.Output != "alpha\nbeta\ngamma beta\n" {
		t.Errorf("read: %+v", r)
	}
	if r := run(t, env, "list_dir", `{}`); r.Output != "a.txt\nsub/" {
		t.Errorf("list: %+v", r)
	}
	if r := run(t, env, "search", `{"pattern":"beta"}`); r.Output != "a.txt:2: beta\na.txt:3: gamma beta\nsub/b.go:2: // beta here" {
		t.Errorf("search: %q", r.Output)
	}
	if r := run(t, env, "search", `{"pattern":"("}`); !r.IsError {
		t.Errorf("bad regexp accepted: %+v", r)
	}
	if r := run(t, env, "write_file", `{"path":"new/dir/c.txt","content":"hi"}`); r.IsError {
		t.Fatalf("write: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(env.Cwd, "new/dir/c.txt")); string(b) != "hi" {
		t.Errorf("written %q", b)
	}
	if r := run(t, env, "edit_file", `{"path":"a.txt","old":"beta","new":"B"}`); !r.IsError || !strings.Contains(r.Output, "2 times") {
		t.Errorf("ambiguous edit: %+v", r)
	}
	if r := run(t, env, "edit_file", `{"path":"a.txt","old":"gamma beta","new":"G"}`); r.IsError {
		t.Errorf("edit: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(env.Cwd, "a.txt")); string(b) != "alpha\nbeta\nG\n" {
		t.Errorf("after edit %q", b)
	}
	if r := run(t, env, "edit_file", `{"path":"a.txt","old":"zzz","new":"x"}`); !r.IsError || !strings.Contains(r.Output, "not found") {
		t.Errorf("missing old: %+v", r)
	}
	if r := run(t, env, "read_file", `{"path":"sub"}`); !r.IsError {
		t.Errorf("read of a directory: %+v", r)
	}
	if r := run(t, env, "read_file", `{"path":5}`); !r.IsError || !strings.Contains(r.Output, "invalid arguments") {
		t.Errorf("bad args: %+v", r)
	}
}

func TestConfinement(t *testing.T) {
	env := sandbox(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	os.Symlink(outside, filepath.Join(env.Cwd, "link"))
	for _, tc := range []struct{ tool, input string }{
		{"read_file", `{"path":"../x"}`},
		{"read_file", `{"path":"` + filepath.Join(outside, "secret") + `"}`},
		{"read_file", `{"path":"link/secret"}`},
		{"write_file", `{"path":"link/new","content":"x"}`},
		{"write_file", `{"path":"../../evil","content":"x"}`},
		{"list_dir", `{"path":"/"}`},
		{"search", `{"pattern":"s","path":"link"}`},
		{"edit_file", `{"path":"link/secret","old":"s","new":"t"}`},
	} {
		r := run(t, env, tc.tool, tc.input)
		if !r.IsError || !strings.Contains(r.Output, "outside the session directory") {
			t.Errorf("%s %s: %+v, want refusal", tc.tool, tc.input, r)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a write escaped through the symlink")
	}
	// Risk "full" lifts confinement.
	env.Confine = false
	if r := run(t, env, "read_file", `{"path":"link/secret"}`); r.IsError || r.Output != "s" {
		t.Errorf("unconfined read: %+v", r)
	}
}

func TestShell(t *testing.T) {
	env := sandbox(t)
	if r := run(t, env, "shell", `{"command":"pwd; echo err >&2"}`); r.IsError || r.Output != env.Cwd+"\nerr\n" {
		t.Errorf("pwd: %+v", r)
	}
	if r := run(t, env, "shell", `{"command":"echo out; exit 3"}`); !r.IsError || r.Output != "out\n\n[exit code 3]" {
		t.Errorf("exit 3: %q", r.Output)
	}
	r := run(t, env, "shell", `{"command":"head -c 100000 /dev/zero | tr '\\0' a; echo END"}`)
	if len(r.Output) > shellOutputCap+200 || !strings.HasSuffix(r.Output, "aEND\n") || !strings.HasPrefix(r.Output, "[34468 bytes of output dropped") {
		t.Errorf("capped output: len %d, head %q", len(r.Output), r.Output[:min(80, len(r.Output))])
	}
	if r := run(t, env, "shell", `{"command":"sleep 5","timeout_secs":1}`); !r.IsError || !strings.Contains(r.Output, "timed out after 1 s") {
		t.Errorf("timeout: %+v", r)
	}
}

// Cancelling a command kills its whole process group, children included,
// even one that ignores SIGTERM (after the grace).
func TestShellCancelKillsProcessGroup(t *testing.T) {
	env := sandbox(t)
	pidFile := filepath.Join(env.Cwd, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	tl, _ := Lookup("shell")
	go func() {
		done <- tl.Run(ctx, env, json.RawMessage(`{"command":"(trap '' TERM; sleep 60) & echo $! > child.pid; wait"}`))
	}()
	var pid int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
	}
	if pid == 0 {
		t.Fatal("child never started")
	}
	start := time.Now()
	cancel()
	var r Result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not return after cancel")
	}
	if !r.IsError || !strings.Contains(r.Output, "[cancelled]") {
		t.Errorf("result %+v", r)
	}
	for time.Since(start) < KillGrace+3*time.Second {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("child %d still alive %s after cancel", pid, time.Since(start))
}

func TestAskUserAndPoll(t *testing.T) {
	env := sandbox(t)
	if r := run(t, env, "ask_user", `{"question":"name?"}`); !r.IsError || !strings.Contains(r.Output, "cannot answer") {
		t.Errorf("no client: %+v", r)
	}
	var asked Elicitation
	answer := func(a Answer, err error) {
		env.Elicit = func(ctx context.Context, e Elicitation) (Answer, error) { asked = e; return a, err }
	}
	answer(Answer{Action: "accept", Content: json.RawMessage(`{"answer":"blue"}`)}, nil)
	if r := run(t, env, "ask_user", `{"question":"colour?","choices":["red","blue"]}`); r.IsError || r.Output != "the user answered: blue" {
		t.Errorf("accept: %+v", r)
	}
	if asked.Message != "colour?" || !strings.Contains(string(asked.Schema), `"enum":["red","blue"]`) {
		t.Errorf("asked %+v %s", asked, asked.Schema)
	}
	answer(Answer{Action: "decline"}, nil)
	if r := run(t, env, "ask_user", `{"question":"q"}`); r.IsError || r.Output != "the user declined to answer" {
		t.Errorf("decline: %+v", r)
	}
	answer(Answer{}, errors.New("jsonrpc error -32000: nope"))
	if r := run(t, env, "ask_user", `{"question":"q"}`); !r.IsError || !strings.Contains(r.Output, "nope") {
		t.Errorf("error: %+v", r)
	}
	env.Elicit = func(ctx context.Context, e Elicitation) (Answer, error) { <-ctx.Done(); return Answer{}, ctx.Err() }
	if r := run(t, env, "ask_user", `{"question":"q","timeout_secs":1}`); !r.IsError || !strings.Contains(r.Output, "did not answer within 1s") {
		t.Errorf("timeout: %+v", r)
	}
	answer(Answer{Action: "accept", Content: json.RawMessage(`{"choice":["a","c"]}`)}, nil)
	if r := run(t, env, "poll", `{"question":"which?","options":["a","b","c"],"multi":true}`); r.Output != `the user chose: ["a","c"]` {
		t.Errorf("poll: %+v", r)
	}
	if !strings.Contains(string(asked.Schema), `"type":"array"`) {
		t.Errorf("multi poll schema %s", asked.Schema)
	}
	if r := run(t, env, "poll", `{"question":"q","options":["only"]}`); !r.IsError {
		t.Errorf("one-option poll accepted: %+v", r)
	}
}

func TestPlan(t *testing.T) {
	env := sandbox(t)
	var got []PlanEntry
	env.Plan = func(e []PlanEntry) { got = e }
	if r := run(t, env, "plan", `{"entries":[{"content":"a","status":"pending","priority":"high"}]}`); r.IsError || len(got) != 1 || got[0].Content != "a" {
		t.Errorf("plan: %+v %v", r, got)
	}
	if r := run(t, env, "plan", `{"entries":[{"content":"a","status":"done","priority":"high"}]}`); !r.IsError {
		t.Errorf("bad status accepted: %+v", r)
	}
}
