package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
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

func fixture(t *testing.T) *Env {
	dir := testdir.New(t)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\ngamma beta\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "b.go"), []byte("package b\n// beta here\n"), 0o644)
	return &Env{Cwd: dir, Confine: true}
}

// Every built-in tool is found by its name, says whether it asks and
// what kind of tool it is, and has a guide for the instructions that
// names it.
func TestEveryToolOfTheSpecIsBuiltIn(t *testing.T) {
	names := BuiltinNames()
	if len(names) != 22 || len(byName()) != len(names) {
		t.Errorf("built in: %v (%d by name)", names, len(byName()))
	}
	kinds := map[string]string{"shell": protocol.KindExecute, "read_file": protocol.KindRead, "write_file": protocol.KindEdit, "edit_file": protocol.KindEdit,
		"multi_edit": protocol.KindEdit, "list_dir": protocol.KindRead, "glob": protocol.KindSearch, "web_fetch": protocol.KindFetch, "search": protocol.KindSearch, "ask_user": protocol.KindOther, "poll": protocol.KindOther, "plan": protocol.KindThink,
		"process_output": protocol.KindRead, "process_write": protocol.KindExecute, "process_wait": protocol.KindRead, "process_kill": protocol.KindExecute, "process_list": protocol.KindRead, "process_resize": protocol.KindExecute, "task": protocol.KindThink, "task_status": protocol.KindRead, "task_send": protocol.KindOther, "task_cancel": protocol.KindOther}
	for _, n := range names {
		tl, ok := Lookup(n)
		if !ok {
			t.Errorf("no tool %s", n)
			continue
		}
		if g := tl.Spec().Guide; !strings.Contains(g, n) {
			t.Errorf("%s: guide %q does not name the tool", n, g)
		}
		asks := n == "shell" || n == "write_file" || n == "edit_file" || n == "multi_edit" || n == "web_fetch" || n == "process_write"
		if tl.Asks() != asks || tl.Kind() != kinds[n] {
			t.Errorf("%s: Asks %v, kind %q; want %v, %q", n, tl.Asks(), tl.Kind(), asks, kinds[n])
		}
	}
	for _, c := range []struct{ name, input, want string }{
		{"shell", `{"command":"ls -la"}`, "shell: ls -la"},
		{"read_file", `{"path":"a.txt"}`, "read_file: a.txt"},
		{"plan", `{"entries":[]}`, "plan"},
		{"shell", `{"command":"` + strings.Repeat("x", 100) + `"}`, "shell: " + strings.Repeat("x", 80) + "…"},
	} {
		if got := Title(c.name, json.RawMessage(c.input)); got != c.want {
			t.Errorf("Title(%s, %s) = %q, want %q", c.name, c.input, got, c.want)
		}
	}
}

func TestFileTools(t *testing.T) {
	env := fixture(t)
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

func TestAskUserAndPoll(t *testing.T) {
	env := fixture(t)
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
	env := fixture(t)
	var got []PlanEntry
	env.Plan = func(e []PlanEntry) { got = e }
	if r := run(t, env, "plan", `{"entries":[{"content":"a","status":"pending","priority":"high"}]}`); r.IsError || len(got) != 1 || got[0].Content != "a" {
		t.Errorf("plan: %+v %v", r, got)
	}
	if r := run(t, env, "plan", `{"entries":[{"content":"a","status":"done","priority":"high"}]}`); !r.IsError {
		t.Errorf("bad status accepted: %+v", r)
	}
}

// read_file with offset and limit: the lines asked for, numbered as
// cat -n prints them, and a last line saying where to read on.
func TestReadFileLines(t *testing.T) {
	env := fixture(t)
	var b strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	b.WriteString(strings.Repeat("x", 5000)) // a last line without a newline, too long to show whole
	os.WriteFile(filepath.Join(env.Cwd, "n.txt"), []byte(b.String()), 0o644)
	for _, c := range []struct{ input, want string }{
		{`{"path":"n.txt","offset":9,"limit":3}`, "     9\tline 9\n    10\tline 10\n    11\tline 11\n[more lines follow: read on with offset=12]"},
		{`{"path":"n.txt","limit":1}`, "     1\tline 1\n[more lines follow: read on with offset=2]"},
		{`{"path":"n.txt","offset":120}`, "   120\tline 120\n   121\t" + strings.Repeat("x", 2000) + " [line cut at 2000 bytes]\n"},
		{`{"path":"a.txt","offset":2}`, "     2\tbeta\n     3\tgamma beta\n"},
	} {
		if r := run(t, env, "read_file", c.input); r.IsError || r.Output != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.input, r.Output, c.want)
		}
	}
	for _, c := range []struct{ input, want string }{
		{`{"path":"a.txt","offset":4}`, "offset 4 is past the end: the file has 3 lines"},
		{`{"path":"a.txt","offset":0}`, "offset is the first line to read, from 1 (got 0)"},
		{`{"path":"a.txt","limit":-2}`, "limit is a number of lines, at least 1 (got -2)"},
	} {
		if r := run(t, env, "read_file", c.input); !r.IsError || !strings.Contains(r.Output, c.want) {
			t.Errorf("%s: %+v, want an error saying %q", c.input, r, c.want)
		}
	}
	// Many long lines: the answer stops at 256 KiB and says where to go on.
	long := strings.Repeat(strings.Repeat("y", 1000)+"\n", 400)
	os.WriteFile(filepath.Join(env.Cwd, "long.txt"), []byte(long), 0o644)
	r := run(t, env, "read_file", `{"path":"long.txt","offset":1}`)
	shown := strings.Count(r.Output, "\n")
	if r.IsError || len(r.Output) > 256<<10 || shown < 250 || !strings.HasSuffix(r.Output, fmt.Sprintf("read on with offset=%d]", shown+1)) {
		t.Errorf("long read: %d bytes, ends %q", len(r.Output), r.Output[max(0, len(r.Output)-80):])
	}
}

// glob finds files by pattern (** for any directories), newest first,
// relative to the session directory, skipping what .gitignore files
// (the session directory's and nested ones) ignore, .git and
// node_modules.
func TestGlob(t *testing.T) {
	env := fixture(t) // a.txt, sub/b.go
	write := func(name, text string, age time.Duration) {
		p := filepath.Join(env.Cwd, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
		when := time.Now().Add(-age)
		os.Chtimes(p, when, when)
	}
	write("sub/b.go", "package b\n", 3*time.Hour)
	write("sub/deep/c.go", "package c\n", time.Hour)
	write("sub/deep/d.go", "package d\n", 2*time.Hour)
	write("sub/gen.go", "package b\n", 0)
	write("sub/.gitignore", "# generated\ngen.go\n", 0)
	write(".gitignore", "build/\n*.log\n!keep.log\n", 0)
	write("build/out.go", "package out\n", 0)
	write("x.log", "", 0)
	write("keep.log", "", 0)
	write("node_modules/m/m.go", "package m\n", 0)
	write(".git/hooks/h.go", "package h\n", 0)
	for _, c := range []struct{ input, want string }{
		{`{"pattern":"**/*.go"}`, "sub/deep/c.go\nsub/deep/d.go\nsub/b.go"},
		{`{"pattern":"*.go","path":"sub"}`, "sub/b.go"},
		{`{"pattern":"**/*.go","path":"sub/deep"}`, "sub/deep/c.go\nsub/deep/d.go"},
		{`{"pattern":"*.log"}`, "keep.log"},
		{`{"pattern":"**/*.rs"}`, "no files match **/*.rs"},
	} {
		if r := run(t, env, "glob", c.input); r.IsError || r.Output != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.input, r.Output, c.want)
		}
	}
	// Unconfined (risk full) it finds the same.
	env.Confine = false
	if r := run(t, env, "glob", `{"pattern":"*.go","path":"sub"}`); r.IsError || r.Output != "sub/b.go" {
		t.Errorf("unconfined: %+v", r)
	}
	env.Confine = true
	for _, c := range []struct{ input, want string }{
		{`{"pattern":"[a"}`, "not a valid glob pattern"},
		{`{"pattern":"*","path":"a.txt"}`, "a.txt is not a directory"},
		{`{"pattern":"*","path":"../.."}`, "outside the session directory"},
	} {
		if r := run(t, env, "glob", c.input); !r.IsError || !strings.Contains(r.Output, c.want) {
			t.Errorf("%s: %+v, want an error saying %q", c.input, r, c.want)
		}
	}
}

// search takes glob (a name pattern, or a path pattern with a /),
// ignore_case and context (printed as grep prints it), and skips what
// .gitignore ignores.
func TestSearchOptions(t *testing.T) {
	env := fixture(t) // a.txt "alpha\nbeta\ngamma beta\n", sub/b.go "package b\n// beta here\n"
	os.WriteFile(filepath.Join(env.Cwd, "c.txt"), []byte("one\ntwo\nBeta\nthree\nfour\nfive\nsix\nbeta\nseven\n"), 0o644)
	os.WriteFile(filepath.Join(env.Cwd, ".gitignore"), []byte("ignored/\n"), 0o644)
	os.Mkdir(filepath.Join(env.Cwd, "ignored"), 0o755)
	os.WriteFile(filepath.Join(env.Cwd, "ignored", "x.txt"), []byte("beta\n"), 0o644)
	for _, c := range []struct{ input, want string }{
		{`{"pattern":"beta","glob":"*.go"}`, "sub/b.go:2: // beta here"},
		{`{"pattern":"beta","glob":"sub/**"}`, "sub/b.go:2: // beta here"},
		{`{"pattern":"^beta","glob":"c.txt"}`, "c.txt:8: beta"},
		{`{"pattern":"^beta","glob":"c.txt","ignore_case":true}`, "c.txt:3: Beta\nc.txt:8: beta"},
		{`{"pattern":"^beta","path":"c.txt","ignore_case":true,"context":1}`,
			"c.txt-2- two\nc.txt:3: Beta\nc.txt-4- three\n--\nc.txt-7- six\nc.txt:8: beta\nc.txt-9- seven"},
		{`{"pattern":"^beta","path":"c.txt","ignore_case":true,"context":2}`,
			"c.txt-1- one\nc.txt-2- two\nc.txt:3: Beta\nc.txt-4- three\nc.txt-5- four\nc.txt-6- five\nc.txt-7- six\nc.txt:8: beta\nc.txt-9- seven"},
		{`{"pattern":"beta","glob":"*.txt"}`, "a.txt:2: beta\na.txt:3: gamma beta\nc.txt:8: beta"},
		{`{"pattern":"nothing"}`, "no matches"},
	} {
		if r := run(t, env, "search", c.input); r.IsError || r.Output != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.input, r.Output, c.want)
		}
	}
	for _, c := range []struct{ input, want string }{
		{`{"pattern":"x","context":11}`, "context is a number of lines from 0 to 10"},
		{`{"pattern":"x","glob":"[a"}`, "is not a valid pattern"},
	} {
		if r := run(t, env, "search", c.input); !r.IsError || !strings.Contains(r.Output, c.want) {
			t.Errorf("%s: %+v, want an error saying %q", c.input, r, c.want)
		}
	}
}
