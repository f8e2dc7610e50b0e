package talk

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/mdterm"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// chat is a chat's hold on its session, shared by the terminal interface
// and the line mode used when stdin is not a terminal.
type chat struct {
	env   console.Env
	cv    *conversation
	agent string
	cwd   string
	color bool
	say   func(string) // output for the person (stdout in line mode)
	note  func(string) // notes and errors (stderr in line mode)
	picks []string     // sessions /resume listed, for a number to pick
	// confirm is what a y does, right after /undo or /rewind N asked.
	confirm func(ctx context.Context)

	// mu guards what the terminal interface reads while commands and
	// turns run on other goroutines.
	mu     sync.Mutex
	ns     *protocol.SessionNewResult // the session attached
	tokens [2]int64                   // context used, of the window
	cost   string                     // what the session has cost ("": no price known)
	// following stops the /logs that follows a process (nil: none).
	following context.CancelFunc
}

// session returns a copy of the attached session and the context use.
func (ch *chat) session() (protocol.SessionNewResult, [2]int64) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.ns == nil {
		return protocol.SessionNewResult{}, ch.tokens
	}
	return *ch.ns, ch.tokens
}

// start connects and opens the first session.
func (ch *chat) start(ctx context.Context, sessionID string, cont bool) error {
	c, err := ch.cv.dial(ctx, "")
	if err != nil {
		return err
	}
	ch.cv.c = c
	if cont {
		id, err := ch.latestHere(ctx)
		if err != nil {
			return err
		}
		if id == "" {
			ch.note("no earlier session in " + ch.cwd + "; starting a new one")
		}
		sessionID = id
	}
	return ch.open(ctx, sessionID)
}

// latestHere is the most recently updated session of this directory.
func (ch *chat) latestHere(ctx context.Context) (string, error) {
	id := ""
	err := ch.cv.c.EachSession(ctx, func(s protocol.SessionInfo) bool {
		if s.Cwd == ch.cwd {
			id = s.SessionID
		}
		return id == ""
	})
	return id, err
}

// open attaches to session id (a new one when id is ""), says so and,
// for an earlier session, shows its last exchanges.
func (ch *chat) open(ctx context.Context, id string) error {
	ns, err := ch.cv.open(ctx, protocol.SessionNewParams{AgentAlias: ch.agent, Cwd: ch.cwd, SessionID: id, Mode: "chat"})
	if err != nil {
		return err
	}
	ch.mu.Lock()
	ch.ns = ns
	ch.tokens, ch.cost = [2]int64{0, ns.ContextWindow}, ""
	ch.mu.Unlock()
	verb := "new session"
	if ns.Resumed {
		verb = fmt.Sprintf("resumed session (%d messages)", ns.MessageCount)
		ch.showRecent(ctx, ns)
	}
	ch.note(fmt.Sprintf("%s %s · agent %s · %s · %s", verb, ns.SessionID, ns.AgentAlias, cmp.Or(ns.Model, ns.Provider), ns.Cwd))
	return nil
}

// showRecent prints the last three exchanges of the session (read from
// at most its last 4,000 events).
func (ch *chat) showRecent(ctx context.Context, ns *protocol.SessionNewResult) {
	type exchange struct{ prompt, reply string }
	var ex []exchange
	var reply strings.Builder
	flush := func() {
		if len(ex) > 0 {
			ex[len(ex)-1].reply = reply.String()
		}
		reply.Reset()
	}
	ch.cv.c.Replay(ctx, ns.SessionID, max(0, ns.LastSeq-4000), ns.LastSeq, func(_ json.RawMessage, u protocol.SessionUpdate) error {
		switch e := u.Event.(type) {
		case protocol.UserMessageEvent:
			flush()
			ex = append(ex, exchange{prompt: e.Text})
			if len(ex) > 3 {
				ex = ex[1:]
			}
		case protocol.AgentMessageChunkEvent:
			reply.WriteString(e.Text)
		}
		return nil
	})
	flush()
	if len(ex) == 0 {
		return
	}
	ch.say(ch.dim("── earlier in this session ──"))
	for _, e := range ex {
		ch.say(ch.promptLine(e.prompt))
		if e.reply != "" {
			ch.say(mdterm.Render(strings.TrimSpace(e.reply), ch.color))
		}
	}
	ch.say(ch.dim("──"))
}

func (ch *chat) sgr(code, s string) string {
	if !ch.color {
		return s
	}
	return code + s + "\x1b[0m"
}

func (ch *chat) dim(s string) string { return ch.sgr("\x1b[2m", s) }

// isCommand says whether a line is a chat command: it starts with one
// /, and is not an MCP server's prompt (/mcp__SERVER__PROMPT, which the
// daemon expands).
func isCommand(line string) bool {
	return strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "//") && !strings.HasPrefix(line, "/mcp__")
}

// steerLine shows a steer where it joined the turn (from: who sent it,
// when not this chat).
func (ch *chat) steerLine(text, from string) string {
	line := ch.sgr("\x1b[1;35m", "↪ ") + ch.sgr("\x1b[1m", mdterm.Safe(strings.ReplaceAll(text, "\n", " ⏎ ")))
	if from != "" {
		line += " " + ch.dim("· steer from "+from)
	} else {
		line += " " + ch.dim("· steer")
	}
	return line
}

// promptLine shows the user's prompt as sent.
func (ch *chat) promptLine(text string) string {
	lines := strings.Split(mdterm.Safe(strings.ReplaceAll(text, "\n", "\x00")), "^@")
	for i := range lines {
		mark := "  "
		if i == 0 {
			mark = "› "
		}
		lines[i] = ch.sgr("\x1b[1;36m", mark) + ch.sgr("\x1b[1m", lines[i])
	}
	return strings.Join(lines, "\n")
}

// ensure dials the daemon again when the connection is gone (a daemon
// restarted between turns) and attaches the session again.
func (ch *chat) ensure(ctx context.Context) error {
	select {
	case <-ch.cv.c.Done():
	default:
		return nil
	}
	ns, _ := ch.session()
	if _, err := ch.cv.reconnect(ctx, ns.SessionID); err != nil {
		return err
	}
	ch.note(ch.dim("(reconnected to the daemon)"))
	return nil
}

// command runs a /command line (chatCommands); quit says the person
// leaves.
func (ch *chat) command(ctx context.Context, line string) (quit bool) {
	word, arg, _ := strings.Cut(line, " ")
	cmd := lookupCommand(word)
	if cmd == nil {
		ch.note(fmt.Sprintf("unknown command %s; /help lists them (start a prompt with // to send a literal /)", word))
		return false
	}
	if !cmd.local {
		if err := ch.ensure(ctx); err != nil {
			ch.note("error: " + console.HumanError(err))
			return false
		}
	}
	if err := cmd.run(ch, ctx, word, strings.TrimSpace(arg)); err != nil {
		if errors.Is(err, errQuit) {
			return true
		}
		ch.note("error: " + console.HumanError(err))
	}
	return false
}

// resume continues a session: by list number after a bare /resume, by
// id, or by the one id (or title) a prefix matches. A typo never makes
// a new session.
func (ch *chat) resume(ctx context.Context, arg string) {
	if err := ch.ensure(ctx); err != nil {
		ch.note("error: " + console.HumanError(err))
		return
	}
	picks := ch.picks
	ch.picks = nil
	if arg == "" {
		page, err := ch.cv.c.List(ctx, protocol.SessionListParams{Limit: 15})
		if err != nil {
			ch.note("error: " + console.HumanError(err))
			return
		}
		if len(page.Sessions) == 0 {
			ch.say("no sessions yet")
			return
		}
		for i, s := range page.Sessions {
			ch.picks = append(ch.picks, s.SessionID)
			title := s.Title
			if title == "" {
				title = "(no prompt yet)"
			}
			ch.say(fmt.Sprintf("%2d) %s  %s  %s  %s", i+1, s.SessionID, time.UnixMilli(s.UpdatedMs).Format("01-02 15:04"), cut(title, 60), ch.dim(s.Cwd)))
		}
		ch.say("type its number to resume it (anything else: stay here)")
		return
	}
	if n, err := strconv.Atoi(arg); err == nil && picks != nil {
		if n < 1 || n > len(picks) {
			ch.note(fmt.Sprintf("pick 1 to %d", len(picks)))
			ch.picks = picks
			return
		}
		arg = picks[n-1]
	}
	var matches []protocol.SessionInfo
	err := ch.cv.c.EachSession(ctx, func(s protocol.SessionInfo) bool {
		if s.SessionID == arg {
			matches = []protocol.SessionInfo{s}
			return false
		}
		if strings.HasPrefix(s.SessionID, arg) || strings.HasPrefix(strings.TrimPrefix(s.SessionID, "ses_"), arg) {
			matches = append(matches, s)
		}
		return true
	})
	if err != nil {
		ch.note("error: " + console.HumanError(err))
		return
	}
	switch len(matches) {
	case 0:
		ch.note(fmt.Sprintf("no session matches %q (/resume alone lists them)", arg))
	case 1:
		if err := ch.open(ctx, matches[0].SessionID); err != nil {
			ch.note("error: " + console.HumanError(err))
		}
	default:
		ch.note(fmt.Sprintf("%q matches %d sessions; give more of the id:", arg, len(matches)))
		for _, s := range matches[:min(len(matches), 10)] {
			ch.say("  " + s.SessionID + "  " + cut(s.Title, 60))
		}
	}
}

// answer is what a line does right after a question the chat asked: a
// number after /resume listed sessions picks one; y after /undo or
// /rewind N showed what it would do does it, n does not (anything else
// leaves it undone too, and the line goes on as typed). nil: the line
// answers nothing.
func (ch *chat) answer(line string) func(context.Context) {
	if ch.isPick(line) {
		return func(ctx context.Context) { ch.resume(ctx, line) }
	}
	if c := ch.confirm; c != nil {
		ch.confirm = nil
		switch strings.ToLower(line) {
		case "y", "yes":
			return c
		case "n", "no":
			return func(context.Context) { ch.note("(not done)") }
		}
		ch.note("(not done)")
	}
	return nil
}

// rewind serves /undo and /rewind: it shows what going back would
// restore, and asks.
func (ch *chat) rewind(ctx context.Context, word, arg string) {
	c, sid := ch.cv.c, ch.cv.r.sessionID
	var cps protocol.SessionCheckpointsResult
	if err := c.Call(ctx, protocol.MethodSessionCheckpoints, protocol.SessionRef{SessionID: sid}, &cps); err != nil {
		ch.note("error: " + console.HumanError(err))
		return
	}
	force := false
	if a, ok := strings.CutSuffix(arg, " force"); ok || arg == "force" {
		arg, force = strings.TrimSpace(strings.TrimSuffix(a, "force")), true
	}
	turn := 0
	switch {
	case word == "/undo":
		for _, cp := range cps.Checkpoints {
			if !cp.Rewound {
				turn = cp.Turn
			}
		}
		if turn == 0 {
			ch.say("nothing to undo")
			return
		}
	case arg == "":
		if len(cps.Checkpoints) == 0 {
			ch.say("no turns yet")
			return
		}
		for _, cp := range cps.Checkpoints {
			mark := ""
			if cp.Rewound {
				mark = " (rewound)"
			}
			ch.say(fmt.Sprintf("%3d  %s  %d file(s)%s", cp.Turn, cut(cp.Title, 60), len(cp.Files), mark))
		}
		ch.say("/rewind N goes back to before turn N (/diff N shows what it changed)")
		return
	default:
		n, err := strconv.Atoi(arg)
		if err != nil {
			ch.note("/rewind N: N is a turn number (/rewind lists them)")
			return
		}
		turn = n
	}
	var files []string
	for _, cp := range cps.Checkpoints {
		if cp.Turn >= turn && !cp.Rewound {
			for _, f := range cp.Files {
				files = append(files, fmt.Sprintf("  %s %s (turn %d)", f.Change, f.Path, cp.Turn))
			}
		}
	}
	what := fmt.Sprintf("go back to before turn %d: the conversation from there is left out of the model's view", turn)
	if len(files) == 0 {
		what += "; no file to restore"
	} else {
		what += ", and these files go back to how they were:\n" + strings.Join(files, "\n")
	}
	ch.say(what)
	ch.say("do it? y / anything else: no")
	ch.confirm = func(ctx context.Context) {
		var res protocol.SessionRewindResult
		if err := c.Call(ctx, protocol.MethodSessionRewind, protocol.SessionRewindParams{SessionID: sid, Turn: turn, Force: force}, &res); err != nil {
			ch.note("error: " + console.HumanError(err))
			return
		}
		if !res.Rewound {
			var b strings.Builder
			for _, c := range res.Conflicts {
				fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Reason)
			}
			if len(res.Processes) > 0 {
				for _, p := range res.Processes {
					fmt.Fprintf(&b, "\n  %s (pid %d): %s", p.ID, p.Pid, p.Command)
				}
				ch.note(fmt.Sprintf("nothing was undone: background processes those turns started still run:%s\n(/rewind %d force stops them first)", b.String(), turn))
				return
			}
			ch.note(fmt.Sprintf("nothing was undone: changed since the agent's turn:%s\n(/rewind %d force overwrites them)", b.String(), turn))
			return
		}
		ch.say(fmt.Sprintf("back to before turn %d: %d file(s) restored, %d removed (zeroclaw sessions rewind %s --undo undoes it)", turn, len(res.Restored), len(res.Removed), sid))
	}
}

// export serves /export: the session as a document, in a file.
func (ch *chat) export(ctx context.Context, sid, file string) {
	if file == "" {
		file = "zeroclaw-" + sid + ".md"
	}
	format := "markdown"
	switch strings.ToLower(filepath.Ext(file)) {
	case ".json":
		format = "json"
	case ".html", ".htm":
		format = "html"
	}
	var res protocol.SessionExportResult
	if err := ch.cv.c.Call(ctx, protocol.MethodSessionExport, protocol.SessionExportParams{SessionID: sid, Format: format}, &res); err != nil {
		ch.note("error: " + console.HumanError(err))
		return
	}
	if err := os.WriteFile(file, []byte(res.Content), 0o600); err != nil {
		ch.note("error: " + err.Error())
		return
	}
	ch.say(fmt.Sprintf("wrote %s (%s, %d bytes)", file, format, len(res.Content)))
}

// isPick: a bare number right after /resume listed sessions picks one.
func (ch *chat) isPick(line string) bool {
	if ch.picks == nil {
		return false
	}
	if _, err := strconv.Atoi(line); err == nil {
		return true
	}
	ch.picks = nil
	return false
}

// historyFile is where a terminal chat keeps its prompts (private: they
// are the user's words).
func historyFile(env console.Env, configDir string) (string, error) {
	dirs, err := resolve(env, configDir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dirs.DataDir, "chat_history")
	return path, privateFile(path)
}

// privateFile makes sure path exists as a file only its owner can read
// (0600, in a 0700 directory), whatever the umask: the chat history holds
// the user's prompts.
func privateFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chmod(path, 0o600)
}

// runChatLines is the chat when stdin is not a terminal: one prompt or
// command per line, the reply streamed as text.
func runChatLines(ctx context.Context, ch *chat, approve, sessionID string, cont bool) error {
	env := ch.env
	in := &plainLines{br: bufio.NewReader(env.Stdin), w: env.Stderr, echo: true}
	ch.say = func(s string) { fmt.Fprintln(env.Stdout, s) }
	ch.note = func(s string) { fmt.Fprintln(env.Stderr, s) }
	ch.cv.r = &renderer{out: env.Stdout, errw: env.Stderr, format: "text", approve: approve, answers: in,
		color: console.IsTerminal(env.Stderr) && console.UseColor(env)}
	if err := ch.start(ctx, sessionID, cont); err != nil {
		return err
	}
	defer func() { ch.cv.c.Close() }()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT)
	defer signal.Stop(sigs)
	for {
		line, err := in.ReadLine("")
		if err != nil {
			return nil // EOF: leave
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if run := ch.answer(line); run != nil {
			run(ctx)
			continue
		}
		if isCommand(line) {
			if ch.command(ctx, line) {
				return nil
			}
			continue
		}
		if strings.HasPrefix(line, "//") {
			line = line[1:] // "//x" sends "/x"
		}
		res, err := ch.cv.turn(ctx, line, sigs)
		var ee *console.ExitError
		if errors.As(err, &ee) && ee.Code == exitCancelled {
			return err // a second Ctrl-C: quit
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "error: %s\n", console.HumanError(err))
			continue
		}
		if note := stopNote(res); note != "" {
			fmt.Fprintln(env.Stderr, note)
		}
	}
}

// stopNote says how a turn ended when it did not simply finish.
func stopNote(res protocol.SessionPromptResult) string {
	switch res.StopReason {
	case "end_turn":
		return ""
	case "cancelled":
		return "(cancelled)"
	}
	if e := exitFor(res, false, io.Discard); e != nil {
		return "(" + e.Error() + ")"
	}
	if res.StopReason == "max_tokens" {
		return "(" + cutNotice(res) + ")"
	}
	return ""
}

// ChatOptions are zeroclaw chat's.
type ChatOptions struct {
	ConfigDir, Agent, SessionID string
	Continue                    bool   // resume this directory's latest session
	Cwd                         string // absolute
	Approve                     string // ask | all | none
	NoStart                     bool
}

// Chat is zeroclaw chat: the full-screen chat on a terminal, else one
// prompt or command per line.
func Chat(ctx context.Context, env console.Env, o ChatOptions) error {
	tty := console.IsTerminal(env.Stdin) && console.IsTerminal(env.Stdout)
	ch := newChat(env, o, tty && console.UseColor(env))
	if tty {
		return runChatTUI(ctx, ch, o.Approve, o.SessionID, o.Continue)
	}
	return runChatLines(ctx, ch, o.Approve, o.SessionID, o.Continue)
}

// newChat is a chat not yet connected.
func newChat(env console.Env, o ChatOptions, color bool) *chat {
	ch := &chat{env: env, agent: o.Agent, cwd: o.Cwd, color: color}
	ch.cv = &conversation{env: env, configDir: o.ConfigDir, noStart: o.NoStart, name: "zeroclaw-chat",
		caps: &protocol.ClientCapabilities{Elicitation: &protocol.Elicitation{Form: &struct{}{}, URL: &struct{}{}}}, events: make(chan event, 1024)}
	return ch
}
