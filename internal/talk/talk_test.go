package talk

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
)

// zeroclaw prompt as a person and a script see it: the reply on stdout
// and the rest on stderr (text), the answer as JSON, every event as
// NDJSON; tools, approvals (given, refused), failed hooks and the exit
// code each turn's end means.
func TestPromptRendering(t *testing.T) {
	h := startDaemon(t, `
[[hooks]]
event = "PreToolUse"
matcher = "list_dir"
command = "echo 'the hook broke' >&2; exit 3"
`)
	for _, c := range []struct {
		name     string
		o        PromptOptions
		stdin    string
		out, err []string // what stdout and stderr hold
		exit     int
	}{
		{name: "a reply", o: PromptOptions{Text: "hello"}, out: []string{"echo: hello\n"}},
		{name: "a thought, then the reply", o: PromptOptions{Text: "/think pondering\nok"}, out: []string{"echo: ok"}, err: []string{"pondering"}},
		{name: "a tool, allowed by --approve all", o: PromptOptions{Text: `/tool shell {"command":"echo ran"}`, Approve: "all"},
			err: []string{"⚙ shell", "$ echo ran", "→ ran"}},
		{name: "a tool refused by --approve none", o: PromptOptions{Text: `/tool shell {"command":"echo ran"}`, Approve: "none"},
			err: []string{"⚙ shell", "✗"}, out: []string{"rejected by the user: the client was started with --approve none"}},
		{name: "asked, answered y on stdin", o: PromptOptions{Text: `/tool write_file {"path":"y.txt","content":"y"}`}, stdin: "y\n",
			err: []string{"Allow write_file?", "→ wrote 1 bytes"}},
		{name: "asked, answered n", o: PromptOptions{Text: `/tool write_file {"path":"n.txt","content":"n"}`}, stdin: "n\n",
			err: []string{"Allow write_file?", "✗"}},
		{name: "a hook that failed is said", o: PromptOptions{Text: `/tool list_dir {}`},
			err: []string{"hook PreToolUse (echo 'the hook broke' >&2; exit 3) error: exit status 3: the hook broke"}},
		{name: "a plan", o: PromptOptions{Text: `/tool plan {"entries":[{"content":"look","status":"in_progress","priority":"high"}]}`},
			err: []string{"[~] look"}},
		{name: "a failed turn exits 1", o: PromptOptions{Text: "/fail boom"}, exit: 1},
		{name: "an empty stdin prompt exits 2", o: PromptOptions{Text: "-"}, stdin: "  \n", exit: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, err := h.prompt(c.o, c.stdin)
			code := 0
			var ee *console.ExitError
			if errors.As(err, &ee) {
				code = ee.Code
			} else if err != nil {
				t.Fatalf("prompt: %v", err)
			}
			if code != c.exit {
				t.Errorf("exit %d, want %d (%v)\nstdout %q\nstderr %q", code, c.exit, err, out, errs)
			}
			for _, w := range c.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.err {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}

	// JSON: the answer; NDJSON: every event, then the answer.
	out, _, err := h.prompt(PromptOptions{Text: "hi", Format: "json"}, "")
	var res struct{ StopReason, Content string }
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.StopReason != "end_turn" || res.Content != "echo: hi" {
		t.Errorf("json: %v %q", err, out)
	}
	out, _, err = h.prompt(PromptOptions{Text: "hi", Format: "ndjson"}, "")
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct{ Type string }
		json.Unmarshal([]byte(l), &m)
		types = append(types, m.Type)
	}
	if err != nil || strings.Join(types, " ") != "input_update user_message agent_message_chunk agent_message_chunk context_usage input_update turn_complete prompt_result" {
		t.Errorf("ndjson: %v %v", err, types)
	}
}

// Show prints a stored session as it was seen: prompts, replies, tools
// and the approvals asked.
func TestShow(t *testing.T) {
	h := startDaemon(t, "")
	if _, _, err := h.prompt(PromptOptions{Text: "first", SessionID: "shown"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.prompt(PromptOptions{Text: `/tool shell {"command":"echo x"}`, SessionID: "shown", Approve: "all"}, ""); err != nil {
		t.Fatal(err)
	}
	env, _, _ := h.env("")
	c, err := Connect(context.Background(), env, h.dirs.ConfigDir, true, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	if err := Show(context.Background(), c, "shown", &b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"> first", "echo: first", "⚙ shell", "(approval asked: Run: echo x)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("show lacks %q:\n%s", w, b.String())
		}
	}
}

// The chat a line at a time runs every command of its table: each named
// in /help, each answering; an unknown one says so; prompts stream.
func TestChatLinesCommands(t *testing.T) {
	h := startDaemon(t, "")
	lines := []string{"hello there", "/status", "/sessions", "/model", "/reasoning", "/queue", "/diff", "/compact",
		"/steer nothing runs", "/rewind", "/fork", "/bogus", "//literal slash", "/help", "/quit", "never read"}
	env, out, errb := h.env(strings.Join(lines, "\n") + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Chat(ctx, env, ChatOptions{ConfigDir: h.dirs.ConfigDir, Cwd: h.cwd, NoStart: true, Approve: "all"}); err != nil {
		t.Fatalf("chat: %v\n%s", err, errb.String())
	}
	all := out.String() + errb.String()
	for _, w := range []string{
		"echo: hello there",
		"daemon test pid",                           // /status
		"model echo on echo",                        // /model
		"reasoning: ",                               // /reasoning
		"the queue is empty",                        // /queue
		"no changes to the files",                   // /diff
		"compacted: ",                               // /compact
		"(no turn is running: send it as a prompt)", // /steer
		"forked: this is ses_",                      // /fork
		"unknown command /bogus",                    // not in the table
		"echo: /literal slash",                      // // escapes a slash
	} {
		if !strings.Contains(all, w) {
			t.Errorf("the chat lacks %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "never read") {
		t.Error("a line after /quit was read")
	}
	help := chatHelp()
	for _, c := range chatCommands {
		for _, n := range c.names {
			if !strings.Contains(help, n) {
				t.Errorf("/help does not name %s", n)
			}
			if lookupCommand(n) != &chatCommands[indexOf(c)] {
				t.Errorf("%s does not find its own entry", n)
			}
		}
	}
	if !strings.Contains(out.String(), "commands:\n  /new, /clear") {
		t.Errorf("/help was not shown:\n%s", out.String())
	}
}

func indexOf(c chatCommand) int {
	for i := range chatCommands {
		if chatCommands[i].names[0] == c.names[0] {
			return i
		}
	}
	return -1
}
