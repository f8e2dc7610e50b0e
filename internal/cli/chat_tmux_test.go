package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// The terminal chat, in a real pty: tmux runs `zeroclaw chat`, the test
// types into it and reads the screen as a person would.

var tmuxN atomic.Int64

type tmuxChat struct {
	t    *testing.T
	name string
	race string // the race detector's report prefix (the test binary may be built with -race)
}

// startTmuxChat runs `zeroclaw chat args...` in a fresh tmux server,
// under umask 000 (the history file must still be private).
func startTmuxChat(t *testing.T, dir, cwd string, args ...string) *tmuxChat {
	return startTmuxChatEnv(t, dir, cwd, "", args...)
}

// startTmuxChatEnv is startTmuxChat with more environment ("K=V ...").
func startTmuxChatEnv(t *testing.T, dir, cwd, vars string, args ...string) *tmuxChat {
	t.Helper()
	return startTmuxChatSized(t, dir, cwd, 120, 40, vars, args...)
}

// startTmuxChatSized is startTmuxChatEnv in a terminal of cols by rows.
func startTmuxChatSized(t *testing.T, dir, cwd string, cols, rows int, vars string, args ...string) *tmuxChat {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	exe, _ := os.Executable()
	tc := &tmuxChat{t: t, name: fmt.Sprintf("zc-chat-%d-%d", os.Getpid(), tmuxN.Add(1))}
	tc.race = filepath.Join(testdir.New(t), "race")
	cmdline := fmt.Sprintf("sh -c 'umask 000; exec env ZEROCLAW_TEST_MAIN=1 ZEROCLAW_CONFIG_DIR=%s TERM=xterm-256color GORACE=log_path=%s %s %s chat --cwd %s %s'",
		dir, tc.race, vars, exe, cwd, strings.Join(args, " "))
	tc.tmux("new-session", "-d", "-s", tc.name, "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), cmdline)
	t.Cleanup(func() { exec.Command("tmux", "-L", tc.name, "kill-server").Run() })
	tc.wait("type /help for commands")
	return tc
}

func (tc *tmuxChat) tmux(args ...string) string {
	tc.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tc.name}, args...)...).CombinedOutput()
	if err != nil {
		tc.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names and text.
func (tc *tmuxChat) keys(keys ...string) {
	tc.t.Helper()
	tc.tmux(append([]string{"send-keys", "-t", tc.name}, keys...)...)
}

// paste pastes text as a terminal does, in bracketed-paste markers.
func (tc *tmuxChat) paste(text string) {
	tc.t.Helper()
	tc.tmux("set-buffer", "-b", "p", text)
	tc.tmux("paste-buffer", "-p", "-b", "p", "-t", tc.name)
}

// screen is the pane with its scrollback; colour kept as SGR when esc.
func (tc *tmuxChat) screen(esc bool) string {
	args := []string{"capture-pane", "-p", "-J", "-S", "-", "-t", tc.name}
	if esc {
		args = append(args, "-e")
	}
	lines := strings.Split(tc.tmux(args...), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// waitN waits until the screen shows want n times.
func (tc *tmuxChat) waitN(want string, n int) string {
	tc.t.Helper()
	var s string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		if s = tc.screen(false); strings.Count(s, want) >= n {
			return s
		}
	}
	tc.t.Fatalf("the screen never showed %q %d time(s):\n%s", want, n, s)
	return ""
}

func (tc *tmuxChat) wait(want string) string { tc.t.Helper(); return tc.waitN(want, 1) }

// quit leaves with /quit and waits for the chat to end.
func (tc *tmuxChat) quit() {
	tc.t.Helper()
	tc.keys("/quit", "Enter")
	tc.ended()
}

// ended waits for the chat to end (and checks its race reports).
func (tc *tmuxChat) ended() {
	tc.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(30 * time.Millisecond) {
		if exec.Command("tmux", "-L", tc.name, "has-session", "-t", tc.name).Run() != nil {
			// chat exited, and tmux with it; the race detector found nothing
			if reports, _ := filepath.Glob(tc.race + "*"); len(reports) > 0 {
				b, _ := os.ReadFile(reports[0])
				tc.t.Fatalf("the chat had a data race:\n%s", b)
			}
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("chat did not exit on /quit:\n%s", tc.screen(false))
		}
	}
}

// Streaming, cancelling and typing: Ctrl-C and Esc each cancel a turn
// mid-stream (only Ctrl-C's says that Ctrl-C again quits); a prompt typed while a turn streams queues and runs after
// it; a bracketed paste of several lines is one prompt; Alt-Enter adds a
// line; the reply renders as Markdown; Up brings back a prompt; the
// history file is private.
func TestChatTmuxStreamCancelTypePaste(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChat(t, dir, testdir.New(t))

	slow := func() {
		tc.keys("//chunks 2000", "M-Enter", "/delay 20", "Enter")
		tc.wait("ok ok ok ok")
		tc.wait("esc to cancel")
	}
	slow()
	tc.keys("C-c")
	tc.wait("(cancelled)")
	slow()
	tc.keys("typed meanwhile", "Enter")
	tc.wait("queued: typed meanwhile")
	tc.keys("Escape")
	cancelled := tc.waitN("(cancelled)", 2)
	// Esc says it cancels, not that Ctrl-C again quits (the Ctrl-C
	// before said so, and a second Ctrl-C would).
	if n := strings.Count(cancelled, "Ctrl-C again to quit"); n != 1 || !strings.Contains(cancelled, "(cancelling)\n") {
		t.Fatalf("after Esc (%d of \"Ctrl-C again to quit\", want 1, the Ctrl-C's):\n%s", n, cancelled)
	}
	tc.wait("echo: typed meanwhile")

	tc.paste("first pasted line\nsecond pasted line\nthird pasted line")
	tc.keys("Enter")
	s := tc.wait("echo: first pasted line\nsecond pasted line\nthird pasted line")
	if strings.Contains(s, "echo: second pasted line") || strings.Contains(s, "› second pasted line") {
		t.Fatalf("the paste became several prompts:\n%s", s)
	}
	tc.keys("line one", "M-Enter", "line two", "Enter")
	tc.wait("echo: line one\nline two")
	tc.keys("line three \\", "Enter", "line four", "Enter")
	tc.wait("echo: line three\nline four")

	// Markdown: bold and inline code as SGR on the screen, not asterisks.
	tc.keys("some **strong** words and `mono` here", "Enter")
	tc.wait("echo: some strong words and mono here")
	if esc := tc.screen(true); !regexp.MustCompile(`\x1b\[1m(\x1b\[[0-9;]*m)*strong`).MatchString(esc) || !regexp.MustCompile(`\x1b\[36m(\x1b\[[0-9;]*m)*mono`).MatchString(esc) {
		t.Fatalf("no Markdown styles on the screen:\n%q", esc)
	}

	// History: Up brings back the last prompt.
	tc.keys("Up", "Enter")
	tc.waitN("echo: some strong words and mono here", 2)

	// Tab completes a /command; several matches are listed.
	tc.keys("/sta", "Tab", "Enter")
	tc.wait("daemon " + Version + " pid")
	tc.keys("/s", "Tab")
	tc.wait("/sessions  /status")
	// Ctrl-C clears what is typed; on an empty prompt it asks for a
	// second one, which leaves.
	tc.keys("C-c")
	tc.keys("C-c")
	tc.wait("press Ctrl-C again to leave")
	tc.keys("C-c")
	tc.ended()
	fi, err := os.Stat(filepath.Join(dir, "data", "chat_history"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("chat history: %v %v, want mode 0600", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "data", "chat_history"))
	if !strings.Contains(string(b), `"first pasted line\nsecond pasted line\nthird pasted line"`) {
		t.Fatalf("the history lacks the pasted prompt:\n%s", b)
	}
}

// Approvals show the whole command of a shell call and a coloured diff of
// a file write; "c" allows this command for the rest of the session.
func TestChatTmuxApprovals(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("old line\nsame\n"), 0o600)
	tc := startTmuxChat(t, dir, cwd)

	tc.keys(`//tool write_file {"path":"f.txt","content":"new line\nsame\n"}`, "Enter")
	tc.wait("allow write_file?")
	tc.wait("-old line")
	tc.wait("+new line")
	if esc := tc.screen(true); !regexp.MustCompile(`\x1b\[32m(\x1b\[[0-9;]*m)*\+new line`).MatchString(esc) || !regexp.MustCompile(`\x1b\[31m(\x1b\[[0-9;]*m)*-old line`).MatchString(esc) {
		t.Fatalf("the diff is not coloured:\n%q", esc)
	}
	tc.keys("y")
	tc.wait("tool write_file returned: wrote 14 bytes")
	if b, _ := os.ReadFile(filepath.Join(cwd, "f.txt")); string(b) != "new line\nsame\n" {
		t.Fatalf("f.txt: %q", b)
	}

	cmd := `//tool shell {"command":"echo one && echo two"}`
	tc.keys(cmd, "Enter")
	tc.wait("$ echo one && echo two") // the whole command, & as &
	tc.keys("c")
	tc.wait("tool shell returned: one")
	// The same command again runs without asking; another one asks.
	tc.keys(cmd, "Enter")
	tc.waitN("tool shell returned: one", 2)
	tc.keys(`//tool shell {"command":"echo three"}`, "Enter")
	tc.wait("$ echo three")
	if s := tc.screen(false); strings.Count(s, "allow shell?") != 1 {
		t.Fatalf("asked again for the command allowed always:\n%s", s)
	}
	tc.keys("n")
	tc.wait("shell was not run: rejected by the user")
	tc.quit()
}

// /resume lists sessions to pick from, resumes by prefix, refuses a typo
// (no new session made), shows the last exchanges; after `zeroclaw daemon
// restart` the next prompt reaches the new daemon once; --continue
// resumes this directory's latest session.
func TestChatTmuxResumeAndRestart(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	t.Cleanup(func() { Main(context.Background(), []string{"daemon", "stop"}, env) })
	cwd := testdir.New(t)
	tc := startTmuxChat(t, dir, cwd)
	first := regexp.MustCompile(`new session (ses_[0-9a-f]+)`).FindStringSubmatch(tc.wait("new session ses_"))[1]
	tc.keys("remember the first session", "Enter")
	tc.wait("echo: remember the first session")
	tc.keys("/new", "Enter")
	tc.waitN("new session ses_", 2)

	tc.keys("/resume nosuchsession", "Enter")
	tc.wait(`no session matches "nosuchsession"`)
	tc.keys("/resume", "Enter")
	tc.wait("type its number to resume it")
	s := tc.screen(false)
	m := regexp.MustCompile(`(?m)^\s*(\d+)\) ` + first).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("/resume does not list %s:\n%s", first, s)
	}
	tc.keys(m[1], "Enter")
	tc.wait("resumed session (2 messages) " + first)
	tc.wait("── earlier in this session ──")
	tc.keys("/resume "+strings.TrimPrefix(first, "ses_")[:8], "Enter")
	tc.waitN("resumed session (2 messages) "+first, 2)
	out, errb := &strings.Builder{}, &strings.Builder{}
	env.Stdout, env.Stderr = out, errb
	Main(context.Background(), []string{"sessions", "list", "--no-start"}, env)
	if n := strings.Count(out.String(), "ses_"); n != 2 {
		t.Fatalf("%d sessions, want 2 (a typo made one?):\n%s", n, out)
	}

	// The daemon restarts under the chat.
	if code := Main(context.Background(), []string{"daemon", "restart"}, env); code != 0 {
		t.Fatalf("daemon restart: %d %s", code, errb)
	}
	tc.keys("/status", "Enter")
	tc.wait("(reconnected to the daemon)")
	tc.wait("daemon " + Version + " pid")
	tc.keys("after the restart", "Enter")
	tc.wait("echo: after the restart")
	tc.keys("and once more", "Enter")
	s = tc.wait("echo: and once more")
	if n := strings.Count(s, "echo: after the restart"); n != 1 {
		t.Fatalf("the prompt after the restart was answered %d times:\n%s", n, s)
	}
	tc.quit()

	// --continue: the latest session of this directory.
	tc = startTmuxChat(t, dir, cwd, "--continue")
	tc.wait("resumed session (6 messages) " + first)
	tc.wait("› and once more")
	tc.quit()
}

// NO_COLOR: the reply is rendered (no asterisks) but without colour or
// styles.
func TestChatTmuxNoColor(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChatEnv(t, dir, testdir.New(t), "NO_COLOR=1")
	tc.keys("some **strong** words and `mono` here", "Enter")
	tc.wait("echo: some strong words and mono here")
	if esc := tc.screen(true); strings.Contains(esc, "\x1b[1mstrong") || strings.Contains(esc, "\x1b[36m") || strings.Contains(esc, "\x1b[2m") {
		t.Fatalf("colour despite NO_COLOR:\n%q", esc)
	}
	tc.quit()
}

// Two chats on one session: one prompts, the other sees the prompt
// (labelled with the client that sent it) and the reply stream live,
// steers the running turn with Ctrl-S, and the steer joins the turn on
// both screens; the queue shows in both; an approval asked in the first
// chat's turn is asked in both, and the first answer (the second chat's)
// closes the other's ask.
func TestChatTmuxTwoChatsFollowAndSteer(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	a := startTmuxChat(t, dir, cwd)
	sid := regexp.MustCompile(`new session (ses_[0-9a-f]+)`).FindStringSubmatch(a.wait("new session ses_"))[1]
	b := startTmuxChat(t, dir, cwd, "--session", sid)
	b.wait("resumed session")

	// A prompts; B follows the turn live and steers it.
	a.keys("//chunks 300", "M-Enter", "/delay 20", "Enter")
	s := b.wait("'s turn is running")
	m := regexp.MustCompile(`· from zeroclaw-chat \((cl_[0-9a-f]+)\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("the second chat does not label the first's prompt:\n%s", s)
	}
	aID := m[1]
	b.wait("ok ok ok ok")
	// B's Enter during A's turn queues in the daemon, where both see it.
	b.keys("after the steer", "Enter")
	a.wait("the session's queue (1;")
	b.wait("1) after the steer · zeroclaw-chat")
	b.keys("use the other file", "C-s")
	b.wait("(steered: the agent sees it at its next model call)")
	a.wait("↪ use the other file · steer from zeroclaw-chat (cl_")
	a.wait("echo: use the other file")
	b.wait("echo: use the other file")
	// Then B's queued prompt runs, and A follows it.
	a.wait("› after the steer · from zeroclaw-chat")
	a.wait("echo: after the steer")
	b.wait("echo: after the steer")
	if s := a.screen(false); strings.Contains(s, "from zeroclaw-chat ("+aID+")") {
		t.Errorf("the first chat labels its own prompt as another client's:\n%s", s)
	}

	// An approval in A's turn is asked in both; B answers first.
	a.keys(`//tool shell {"command":"echo approved-by-b"}`, "Enter")
	a.wait("allow shell?")
	b.wait("allow shell?")
	b.keys("y")
	a.wait("answered by zeroclaw-chat")
	a.wait("approved-by-b")
	b.wait("approved-by-b")
	a.quit()
	b.quit()
}

// An MCP server's prompts and resources in the chat: announced once the
// server said (and a server that wants a login, with what to run), its prompt completed with Tab and expanded by the daemon,
// its resource mentioned (@ and Tab) and attached: the echo model sees
// the resource's text.
func TestChatTmuxMCPPromptsAndMentions(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "[mcp]\nturn_wait_ms = 30000\n[mcp.servers.calc]\ncommand = \"" + mcpServer(t) + "\"\n" +
		"[mcp.servers.web]\nurl = \"" + oauthServer(t) + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, env)
	tc := startTmuxChat(t, dir, testdir.New(t))
	tc.wait("MCP: 1 prompt(s) as /mcp__ commands, 1 resource(s) to mention")
	tc.wait("MCP server web needs a login: run zeroclaw mcp login web")
	tc.keys("/mcp__calc__r", "Tab")
	tc.wait("/mcp__calc__review")
	tc.keys("file=a.go", "Enter")
	tc.wait("echo: Review a.go in the plain style.")
	tc.keys("what does @", "Tab")
	tc.wait("what does @calc:test://greeting")
	tc.keys("say?", "Enter")
	// The prompt shows with its resource, and the echo model got it.
	tc.wait("echo: what does @calc:test://greeting say?")
	tc.waitN("hello from a resource", 2)
	// A mention of nothing offered stays text; nothing is attached.
	tc.keys("mail @calc:test://nothing please", "Enter")
	tc.wait("echo: mail @calc:test://nothing please")
	tc.quit()
}

// The session's background processes in the terminal chat: /ps lists
// them, /logs follows one's output (by an id's start) until it ends,
// /kill stops one.
func TestChatTmuxProcesses(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	tc := startTmuxChat(t, dir, cwd)

	tc.keys(`//tool shell {"command":"echo tick-1; read -r x; echo tick-$x; sleep 300","background":true}`, "Enter")
	tc.wait("allow shell?")
	tc.keys("y")
	tc.wait("in the background")
	id := regexp.MustCompile(`started (p_[0-9a-f]+)`).FindStringSubmatch(tc.screen(false))
	if id == nil {
		t.Fatalf("no process id on the screen:\n%s", tc.screen(false))
	}
	p := id[1]
	tc.keys("/ps", "Enter")
	tc.wait(p + "  pid ")
	if s := tc.screen(false); !regexp.MustCompile(p + `  pid \d+ +running .*echo tick-1`).MatchString(s) {
		t.Fatalf("/ps:\n%s", s)
	}
	tc.keys("/logs "+p[2:7], "Enter")
	tc.wait("following " + p)
	tc.wait(p + "│ tick-1")
	// What it prints next is followed: a client types into it.
	c, err := client.Dial(context.Background(), endpointOf(env.Getenv("ZEROCLAW_CONFIG_DIR")), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sid struct{ Sessions []struct{ SessionID string } }
	if err := c.Call(context.Background(), "session/list", map[string]any{}, &sid); err != nil || len(sid.Sessions) == 0 {
		t.Fatalf("session/list: %v %v", sid, err)
	}
	if err := c.Call(context.Background(), "session/new", map[string]any{"sessionId": sid.Sessions[0].SessionID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(context.Background(), "process/write", map[string]any{"sessionId": sid.Sessions[0].SessionID, "id": p, "input": "2\n"}, nil); err != nil {
		t.Fatal(err)
	}
	tc.wait(p + "│ tick-2")
	tc.keys("/kill "+p, "Enter")
	tc.wait("stopped " + p)
	tc.wait(p + " killed")
	tc.keys("/ps", "Enter")
	tc.wait("killed")
	tc.keys("/kill p_nosuch", "Enter")
	tc.wait(`no process "p_nosuch" in this session`)
	tc.quit()
}

// A sub-agent in the terminal chat: its approval asked here (labelled
// with it), what it does now beside the spinner, its end, /tasks.
func TestChatTmuxSubagents(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	tc := startTmuxChat(t, dir, cwd)
	tc.keys(`//tool task {"description":"wait a bit","prompt":"/tool shell {\"command\":\"sleep 2\"}"}`, "Enter")
	tc.wait("allow shell? (sub-agent: wait a bit)")
	tc.keys("y")
	tc.wait("↳ wait a bit · step 1: shell: sleep 2") // the child's live line
	tc.wait("(wait a bit) completed")
	// A background child: its task call answers at once, and its live
	// line stays while it runs, after the turn, until it ends.
	tc.keys(`//tool task {"description":"side job","prompt":"/tool shell {\"command\":\"sleep 1\"}","background":true}`, "Enter")
	tc.wait("allow shell? (sub-agent: side job)")
	tc.wait("↳ side job · step 1: shell: sleep 1")
	tc.keys("y")
	s := tc.wait("(side job) completed")
	if strings.Contains(s[strings.LastIndex(s, "(side job) completed"):], "↳ side job") {
		t.Errorf("the ended child's live line stayed:\n%s", s)
	}
	tc.keys("/tasks", "Enter")
	tc.wait("zeroclaw chat --session ID follows one")
	tc.quit()
}

// In an 80-column terminal, lines wider than it printed above the chat's
// view (a long prompt, a sub-agent's start) while a slow first token
// keeps the spinner and a child's live line on: the rows they wrap onto
// are cleared first, so no piece of the footer or the spinner stays
// inside the text. The screen is read with its wrapped rows joined: a
// fragment would end a printed line.
func TestChatTmuxWrappedLinesRedrawCleanly(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChatSized(t, dir, testdir.New(t), 80, 30, "")
	tc.keys(`//tool task {"description":"side job","prompt":"/tool shell {\"command\":\"sleep 2\"}","background":true}`, "Enter")
	tc.wait("allow shell? (sub-agent: side job)")
	tc.keys("y")
	long := strings.Repeat("word ", 40)
	tc.keys("//delay 500", "M-Enter", "/chunks 3", "M-Enter", "/think "+long, "Enter")
	tc.wait("ok ok ok")
	tc.wait("(side job) completed")
	// The turn's end takes the spinner away.
	s := tc.screen(false)
	for deadline := time.Now().Add(20 * time.Second); strings.Contains(s, "esc to cancel") && time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		s = tc.screen(false)
	}
	if n := strings.Count(s, "k tokens"); n != 1 || strings.Contains(s, "esc to cancel") {
		t.Fatalf("footer (%d, want the live one) or spinner fragments on the screen:\n%s", n, s)
	}
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "› /tool task") && !strings.HasSuffix(line, `"background":true}`) {
			t.Fatalf("the prompt's wrapped line ends in a fragment: %q\n%s", line, s)
		}
	}
	tc.quit()
}

// A daemon kill -9 while the chat's turn streams: the chat reconnects
// (the next daemon starts on demand and goes on with the turn), says the
// turn resumed, and shows its end; the prompt is not run twice.
func TestChatTmuxTurnOutlivesADaemonKill(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	cmd, _ := startDaemon(t, env)
	cwd := testdir.New(t)
	tc := startTmuxChat(t, dir, cwd, "--session", "tmux-cut")
	tc.keys("//delay 20", "M-Enter", "/chunks 150", "Enter")
	tc.wait("ok ok ok")
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	tc.wait("(connection to the daemon lost; reconnecting)")
	tc.wait("(the daemon restarted during this turn; it goes on, attempt 2)")
	tc.wait("echo: [The daemon stopped during this turn")
	// While the chat keeps the daemon it started.
	code, out, errs := runCLI(t, env, "", "sessions", "export", "tmux-cut")
	if code != 0 || strings.Count(out, "/chunks 150") != 1 || !strings.Contains(out, "The daemon stopped during this turn") {
		t.Fatalf("the export: %d %q %q", code, out, errs)
	}
	tc.quit()
}

// /goal sets the session's goal: its turns run and show, the goal's
// end is said; /goal shows it. /schedule adds a schedule in the session
// and lists it.
func TestChatTmuxGoalAndSchedule(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChat(t, dir, testdir.New(t), "--session", "tmux-goal")
	tc.keys("/goal count to two", "M-Enter")
	tc.paste(`/when "[Goal, turn 2]" /tool goal_done {"summary":"counted to two"}`)
	tc.keys("Enter")
	tc.wait("goal active, 0 turns")
	tc.wait("(goal met after 1 turn: counted to two)")
	tc.keys("/goal", "Enter")
	tc.wait("goal met, 2 turns (of 50): counted to two — count to two")
	tc.keys("/schedule every 1h check the deploy", "Enter")
	tc.wait("added sch_")
	tc.keys("/schedule", "Enter")
	tc.waitN("every 1h: check the deploy (next", 2)
	tc.quit()
}

// Shift-Tab cycles the mode shown in chat's footer (ask, accept edits,
// plan, ask); /mode switches to one by name.
func TestChatTmuxModes(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChat(t, dir, testdir.New(t), "--session", "tmux-modes")
	tc.wait("ask mode")
	for _, want := range []string{"accept edits mode", "plan mode", "ask mode"} {
		tc.keys("BTab")
		tc.wait(want)
	}
	tc.keys("/mode full", "Enter")
	tc.wait("mode: Full access (never asks)")
	tc.wait("full access mode")
	tc.quit()
}

// The plan mode's end in chat: the plan shown as Markdown, its own
// three answers; accepting edits switches the mode in the footer.
func TestChatTmuxPlan(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChat(t, dir, testdir.New(t), "--session", "tmux-plan")
	tc.keys("/mode plan", "Enter")
	tc.wait("plan mode")
	tc.paste(`//tool exit_plan {"plan":"# Steps\n1. write the test"}`)
	tc.keys("Enter")
	tc.wait("[y] proceed, asking  [a] proceed, accepting edits")
	tc.wait("1. write the test")
	tc.keys("a")
	tc.wait("proceeding, accepting edits: exit_plan")
	tc.wait("accept edits mode")
	tc.quit()
}

// Another client's switch of the mode shows in the chat at once: the
// footer says the new mode, and a line says who switched it.
func TestChatTmuxAnotherClientsMode(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	tc := startTmuxChat(t, dir, testdir.New(t), "--session", "tmux-other-mode")
	tc.keys("/mode plan", "Enter")
	tc.wait("plan mode")
	ctx := context.Background()
	phone, err := client.Dial(ctx, endpointOf(env.Getenv("ZEROCLAW_CONFIG_DIR")), client.Options{ClientInfo: protocol.ClientInfo{Name: "phone"}})
	if err != nil {
		t.Fatal(err)
	}
	defer phone.Close()
	if _, err := phone.NewSession(ctx, protocol.SessionNewParams{SessionID: "tmux-other-mode", KeepSiblings: true}); err != nil {
		t.Fatal(err)
	}
	full := protocol.RiskFull
	if _, err := phone.Configure(ctx, protocol.SessionConfigureParams{SessionID: "tmux-other-mode", Risk: &full}); err != nil {
		t.Fatal(err)
	}
	tc.wait("(mode → full access, by phone (" + phone.Init.ClientID + "))")
	tc.wait("full access mode")
	tc.quit()
}
