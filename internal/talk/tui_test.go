package talk

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// screen is the full-screen chat running in this process as a person
// uses it: keys go in through its input, and what the terminal is sent
// comes out (no terminal: the chat draws as it would on one).
type screen struct {
	t    *testing.T
	keys *io.PipeWriter
	out  *syncBuffer
	pos  int // what expect has read up to
	done chan error
}

// tui starts the full-screen chat on session id against h's daemon
// (with cont, on this directory's latest session).
func (h *harness) tui(approve, id string, cont ...bool) *screen {
	return h.run(false, func(ctx context.Context, ch *chat) error {
		return runChatTUI(ctx, ch, approve, id, len(cont) > 0 && cont[0])
	})
}

// lines starts the chat a line at a time (no terminal) on session id,
// its output and notes in one stream, as a person at a pipe sees them.
func (h *harness) lines(approve, id string) *screen {
	return h.run(true, func(ctx context.Context, ch *chat) error { return runChatLines(ctx, ch, approve, id, false) })
}

// run starts a chat (run) with keys from a pipe and the screen kept
// (with notes, stderr too), and ends it when the test does.
func (h *harness) run(notes bool, run func(context.Context, *chat) error) *screen {
	t := h.t
	env, out, _ := h.env("")
	out.changed = make(chan struct{}, 1)
	if notes {
		env.Stderr = out
	}
	r, w := io.Pipe()
	env.Stdin = r
	ctx, cancel := context.WithCancel(context.Background())
	ch := newChat(env, ChatOptions{ConfigDir: h.dirs.ConfigDir, Cwd: h.cwd, NoStart: true}, false)
	s := &screen{t: t, keys: w, out: out, done: make(chan error, 1)}
	go func() { s.done <- run(ctx, ch) }()
	t.Cleanup(func() {
		w.Close()
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("the chat did not end")
		}
	})
	return s
}

// typed sends keys as a terminal would.
func (s *screen) typed(keys string) {
	s.t.Helper()
	if _, err := io.WriteString(s.keys, keys); err != nil {
		s.t.Fatalf("keys %q: %v", keys, err)
	}
}

// expect waits until the screen shows want after what was expected
// before, and moves past it.
func (s *screen) expect(want string) {
	s.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		all := s.out.String()
		if i := strings.Index(all[s.pos:], want); i >= 0 {
			s.pos += i + len(want)
			return
		}
		select {
		case <-s.out.changed:
		case err := <-s.done:
			s.t.Fatalf("the chat ended (%v) before showing %q:\n%s", err, want, all[s.pos:])
		case <-deadline:
			s.t.Fatalf("the screen never showed %q; after the last expected:\n%s", want, all[s.pos:])
		}
	}
}

// ended waits for the chat to leave and returns its error.
func (s *screen) ended() error {
	s.t.Helper()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		s.t.Fatal("the chat did not leave")
		return nil
	}
}

// leave leaves the chat with Ctrl-D, which an empty input takes only
// between turns: right after a turn's last words the turn may still be
// ending, so it is typed again until the chat has left.
func (s *screen) leave() {
	s.t.Helper()
	for range 40 {
		s.typed(keyCtrlD)
		select {
		case err := <-s.done:
			s.done <- err // for the cleanup
			return
		case <-time.After(500 * time.Millisecond): // the turn still ends: type it again
		}
	}
	s.t.Fatal("the chat did not leave")
}

const (
	keyEnter  = "\r"
	keyEsc    = "\x1b"
	keyCtrlC  = "\x03"
	keyCtrlS  = "\x13"
	keyCtrlD  = "\x04"
	keyTab    = "\t"
	keyUp     = "\x1b[A"
	keyDown   = "\x1b[B"
	keyAltEnt = "\x1b\r"
)

// The full-screen chat as a person uses it: a prompt streams its reply;
// an approval shows the change as a diff and is answered by a key (y,
// n, e); a question and a poll are answered in the input; Tab completes
// a command and the up arrow recalls a prompt; a slow turn shows that it
// works, takes prompts queued behind it and a steer (Ctrl-S), and Esc
// cancels it; another client's turn on the session shows live; Ctrl-C
// twice on an empty prompt leaves.
func TestChatTUI(t *testing.T) {
	h := startDaemon(t, "")
	os.WriteFile(filepath.Join(h.cwd, "a.txt"), []byte("old line\n"), 0o644)
	s := h.tui("ask", "tui-one")
	s.expect("type /help for commands")
	s.expect("tui-one") // the footer names the session

	s.typed("hello there" + keyEnter)
	s.expect("hello there")
	s.expect("echo: hello there")

	// An edit asks, showing what it changes; e explains, y allows.
	s.typed(`//tool write_file {"path":"a.txt","content":"new line\n"}` + keyEnter)
	s.expect("╭ allow write_file?")
	s.expect("-old line")
	s.expect("+new line")
	s.typed("e")
	s.expect("tool write_file, call")
	s.typed("y")
	s.expect("allowed once: write_file")
	s.expect("tool write_file returned")
	if b, _ := os.ReadFile(filepath.Join(h.cwd, "a.txt")); string(b) != "new line\n" {
		t.Errorf("a.txt holds %q after the allowed write", b)
	}
	// A command shows in full; n refuses it.
	s.typed(`//tool shell {"command":"echo never ran"}` + keyEnter)
	s.expect("╭ allow shell?")
	s.expect("$ echo never ran")
	s.typed("n")
	s.expect("rejected: shell")
	s.expect("tool shell failed")

	// A question is answered in the input; a poll by number.
	s.typed(`//tool ask_user {"question":"your name?"}` + keyEnter)
	s.expect("? your name?")
	s.typed("bob" + keyEnter)
	s.expect(`answered: `)
	s.expect("bob")
	s.typed(`//tool poll {"question":"which colour?","options":["red","blue"]}` + keyEnter)
	s.expect("1) red")
	s.expect("2) blue")
	s.typed("2" + keyEnter)
	s.expect("blue")
	// Enter with nothing insists on a required answer; /decline declines,
	// Esc cancels.
	s.typed(`//tool ask_user {"question":"really?"}` + keyEnter)
	s.expect("? really?")
	s.typed(keyEnter)
	s.expect("this field is required")
	s.typed("/decline" + keyEnter)
	s.expect("(declined)")
	s.expect("the user declined to answer")
	s.typed(`//tool ask_user {"question":"truly?"}` + keyEnter)
	s.expect("? truly?")
	s.typed(keyEsc)
	s.expect("(cancelled)")
	s.expect("the user cancelled the question")

	// Tab completes a command; the up arrow recalls it.
	s.typed("/hel" + keyTab + keyEnter)
	s.expect("commands:")
	s.typed(keyUp + keyEnter)
	s.expect("commands:")
	// A line ending in \ goes on on the next; Alt-Enter adds a line.
	s.typed(`two\` + keyEnter + "lines" + keyEnter)
	s.expect("echo: two")
	s.expect("lines")

	// A slow turn: it says it works; a prompt typed meanwhile is queued
	// and a steer joins it; Esc cancels it, and the queued prompt runs.
	s.typed("//delay 30000\nslow" + keyEnter)
	s.expect("thinking")
	s.typed("queued behind" + keyEnter)
	s.expect("queued: queued behind")
	s.typed("steer this" + keyCtrlS)
	s.expect("(steered: the agent sees it at its next model call)")
	s.typed(keyEsc)
	s.expect("cancelled")
	s.expect("echo: queued behind")

	// Another client's turn on this session shows here, live.
	if _, _, err := h.prompt(PromptOptions{Text: "from afar", SessionID: "tui-one"}, ""); err != nil {
		t.Fatal(err)
	}
	s.expect("from afar")
	s.expect("· from zeroclaw-prompt")
	s.expect("echo: from afar")

	// Ctrl-C on an empty prompt arms, the second leaves.
	s.typed(keyCtrlC)
	s.expect("press Ctrl-C again to leave")
	s.typed(keyCtrlC)
	if err := s.ended(); err != nil {
		t.Errorf("the chat left with %v", err)
	}
}

// The chat a line at a time through a session's life: a turn that
// changes a file (asked on the next line), its diff, the turns listed,
// a rewind shown and confirmed, an undo declined, a question answered
// on the next line, an export, /resume by list number, by prefix and
// by a typo, /new, and a daemon restarted between two prompts (the
// chat reconnects and goes on in the same session).
func TestChatLinesSessionLife(t *testing.T) {
	h := startDaemon(t, "")
	s := h.lines("ask", "life-one")
	s.typed("hello\n")
	s.expect("echo: hello")

	s.typed(`//tool write_file {"path":"f.txt","content":"v1\n"}` + "\n")
	s.expect("Allow write_file?")
	s.typed("y\n")
	s.expect("tool write_file returned")
	s.typed("/diff 2\n")
	s.expect("+v1")
	s.typed("/rewind\n")
	s.expect("/rewind N goes back to before turn N")
	s.typed("/rewind 2\n")
	s.expect("created f.txt (turn 2)")
	s.expect("do it? y")
	s.typed("y\n")
	s.expect("back to before turn 2: 0 file(s) restored, 1 removed")
	if _, err := os.Stat(filepath.Join(h.cwd, "f.txt")); !os.IsNotExist(err) {
		t.Errorf("f.txt after the rewind: %v", err)
	}
	s.typed("/undo\n")
	s.expect("do it? y")
	s.typed("n\n")
	s.expect("(not done)")
	s.typed("/rewind two\n")
	s.expect("N is a turn number")

	s.typed(`//tool ask_user {"question":"favourite number?"}` + "\n")
	s.expect("favourite number?")
	s.typed("42\n")
	s.expect("tool ask_user returned")
	s.expect("42")

	out := filepath.Join(h.cwd, "life.json")
	s.typed("/export " + out + "\n")
	s.expect("wrote " + out + " (json, ")
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "favourite number?") {
		t.Errorf("the export: %v %.200s", err, b)
	}

	s.typed("/new\n")
	s.expect("ses_")
	s.typed("/resume\n")
	s.expect("life-one")
	s.expect("type its number to resume it")
	s.typed("9\n")
	s.expect("pick 1 to")
	s.typed("/resume lif\n")
	s.expect("life-one")
	s.typed("/resume nosuch\n")
	s.expect(`no session matches "nosuch"`)

	// The daemon restarts between two prompts.
	h.stop()
	h.start("")
	s.typed("after the restart\n")
	s.expect("(connection to the daemon lost; reconnecting)")
	s.expect("echo: after the restart")
	s.typed("/quit\n")
	if err := s.ended(); err != nil {
		t.Errorf("the chat left with %v", err)
	}
}

// More of the full-screen chat: thoughts, Markdown paragraphs and plans
// as they stream; Tab listing several commands; Ctrl-C clearing a typed
// line; commands beside a running turn (/queue) and one that cancels it
// (/cancel); an approval of another client's turn answered there; Ctrl-D
// leaving; and a second chat continuing the directory's latest session
// (-c) with the prompts of the first in its history.
func TestChatTUIMore(t *testing.T) {
	h := startDaemon(t, "")
	s := h.tui("ask", "more-one")
	s.expect("type /help for commands")
	s.typed("first words" + keyEnter)
	s.expect("echo: first words")
	s.typed("//think pondering" + keyAltEnt + "ok" + keyEnter)
	s.expect("pondering")
	s.expect("echo: ok")
	s.typed("para one" + keyAltEnt + keyAltEnt + "para two" + keyEnter)
	s.expect("para one")
	s.expect("para two")
	s.typed(`//tool plan {"entries":[{"content":"look around","status":"in_progress","priority":"high"}]}` + keyEnter)
	s.expect("look around")
	s.expect("tool plan returned")
	s.typed("/re" + keyTab)
	s.expect("/reasoning  /resume  /rewind")
	s.typed(keyCtrlC + "/status" + keyEnter)
	s.expect("daemon test pid")

	s.typed("//delay 30000" + keyAltEnt + "slow" + keyEnter)
	s.expect("thinking")
	s.typed("/queue" + keyEnter)
	s.expect("the queue is empty")
	s.typed("/cancel" + keyEnter)
	s.expect("cancelled")

	// Another client's turn asks; that client answers first.
	if _, _, err := h.prompt(PromptOptions{Text: `/tool shell {"command":"echo elsewhere"}`, SessionID: "more-one", Approve: "all"}, ""); err != nil {
		t.Fatal(err)
	}
	s.expect("answered by zeroclaw-prompt")
	s.expect("elsewhere")
	s.typed(keyCtrlD)
	if err := s.ended(); err != nil {
		t.Fatalf("the chat left with %v", err)
	}

	s = h.tui("ask", "", true)
	s.expect("more-one") // the latest session here, continued
	// Keys typed before the chat reads them (the resumed line is said
	// before it starts) would be lost to the terminal's start.
	s.expect("type /help for commands")
	// The up arrow recalls the first chat's last line (/cancel), which
	// answers that nothing runs.
	s.typed(keyUp + keyDown + keyUp + keyEnter)
	s.expect("nothing is running")
	s.typed(keyCtrlD)
	s.ended()
}

// A sub-agent in the line chat: its start and end are said, naming its
// session; /tasks lists the session's children.
func TestChatLinesSubagents(t *testing.T) {
	h := startDaemon(t, "")
	s := h.lines("ask", "with-tasks")
	s.typed(`//tool task {"description":"count to three","prompt":"one two three"}` + "\n")
	s.expect("sub-agent ses_")
	s.expect("(count to three) completed")
	s.expect("tool task returned: echo: one two three")
	s.typed("/tasks\n")
	s.expect("completed")
	s.expect("zeroclaw chat --session ID follows one")
	s.typed("/quit\n")
	if err := s.ended(); err != nil {
		t.Errorf("the chat left with %v", err)
	}
}

// Another client's switch of the mode shows in the chat at once: the
// footer says the new mode and a line says who switched it, in the
// full-screen chat and a line at a time; the chat's own switch is said
// once, by its command.
func TestChatShowsAnotherClientsModeSwitch(t *testing.T) {
	h := startDaemon(t, "")
	s := h.tui("ask", "mode-one")
	s.expect("ask mode") // the footer
	s.typed("/mode plan" + keyEnter)
	s.expect("mode: Plan")
	s.expect("plan mode")
	lines := h.lines("ask", "mode-one")
	lines.typed("hello\n")
	lines.expect("echo: hello")

	ctx := context.Background()
	phone, err := client.Dial(ctx, h.dirs.Endpoint, client.Options{ClientInfo: protocol.ClientInfo{Name: "phone"}})
	if err != nil {
		t.Fatal(err)
	}
	defer phone.Close()
	if _, err := phone.NewSession(ctx, protocol.SessionNewParams{SessionID: "mode-one", KeepSiblings: true}); err != nil {
		t.Fatal(err)
	}
	full := protocol.RiskFull
	if _, err := phone.Configure(ctx, protocol.SessionConfigureParams{SessionID: "mode-one", Risk: &full}); err != nil {
		t.Fatal(err)
	}
	said := "(mode → full access, by phone (" + phone.Init.ClientID + "))"
	s.expect(said)
	s.expect("full access mode")
	// The line chat reads the session's events while a prompt of its
	// runs: what came between its prompts is said with the next one.
	lines.typed("again\n")
	lines.expect(said)
	lines.expect("echo: again")
	if all := s.out.String(); strings.Count(all, "mode → plan") != 0 {
		t.Errorf("the chat's own switch was said as another's:\n%s", all)
	}
}
