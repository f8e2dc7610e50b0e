package talk

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/form"
	"github.com/zeroclaw/zeroclaw/internal/mdterm"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The terminal chat is a Bubble Tea program in inline mode: what is done
// (prompts, replies, tool calls) is printed above it into the terminal's
// scrollback; below stay the reply being streamed, the status, the input
// and the footer. Turns and commands run off the program's goroutine and
// talk to it with messages, so input is read while a turn streams.

type (
	evMsg      struct{ u update }
	approveMsg struct {
		u     *approval
		reply chan [2]string
	}
	elicitMsg struct {
		p     *protocol.ElicitationParams
		reply chan protocol.ElicitationResult
	}
	turnDoneMsg struct {
		res protocol.SessionPromptResult
		err error
	}
	cmdDoneMsg struct{ quit bool }
	mcpMsg     struct{ commands, resources, logins []string }
	startedMsg struct{ err error }
)

// tui is the chat's Bubble Tea model.
type tui struct {
	ctx     context.Context
	ch      *chat
	p       *tea.Program
	out     *printQueue // what goes above the view, in order
	approve string

	ta     textarea.Model
	spin   spinner.Model
	width  int
	height int

	ready     bool
	busy      bool // a turn or command runs
	waiting   bool // a prompt was sent and no agent event came yet
	cancel    chan os.Signal
	cancelled bool
	queue     []string
	live      strings.Builder // the reply being streamed (Markdown), its blocks not yet printed
	scanned   int             // bytes of live whose lines settle has read
	inFence   bool            // those lines leave a code fence open
	thought   strings.Builder
	asking    *asking
	quitErr   error
	quitArmed bool   // Ctrl-C on an empty prompt: a second one leaves
	hint      string // shown under the input until the next key (Tab's choices)

	// begun: the daemon was seen running the prompt this chat sent (an
	// event of a turn came since); until then a Ctrl-S steer is held
	// in heldSteers, not sent to a session where nothing runs yet.
	begun      bool
	heldSteers []string

	history     []string
	hpos        int
	historyPath string

	// While no turn or command of this chat runs, a follower shows the
	// session's events as they come: another client's turns, live.
	// stopFollow ends it; followDone is closed when it has.
	stopFollow chan struct{}
	followDone chan struct{}
	// other names the client whose turn is running ("" when none, or
	// when it is this chat's); later holds approvals asked while
	// another ask is open; dq is the daemon's queue (queue_update).
	other string
	later []approveMsg
	dq    []protocol.QueueItem
	dqOf  string // the session dq is of
	me    string // this chat's clientId (kept across reconnects)
	// progress is how far the running tool is ("" when it said nothing).
	progress string
	// children are the session's running sub-agents, one live line
	// each (what it does now), in the order they started.
	children []liveChild
	// mcpCommands are the session's MCP servers' prompts, for Tab;
	// mcpResources their resources as @SERVER:URI mentions.
	mcpCommands, mcpResources []string
	// loginSaid are the servers whose want of a login was said.
	loginSaid map[string]bool
}

// liveChild is a running sub-agent as chat shows it: its task's call,
// its description and what it does now (its task call's progress).
type liveChild struct {
	callID, sessionID, what, now string
}

// childStarted, childEnded and childProgress keep m.children: a child is
// live from its running subagent_update to the one that ends it; its
// progress comes as tool_progress on the task call that started it.
func (m *tui) childStarted(a protocol.SubagentInfo) {
	m.childEnded(a.SessionID)
	m.children = append(m.children, liveChild{callID: a.ToolCallID, sessionID: a.SessionID, what: a.Description})
}

func (m *tui) childEnded(sessionID string) {
	m.children = slices.DeleteFunc(m.children, func(c liveChild) bool { return c.sessionID == sessionID })
}

func (m *tui) childProgress(e protocol.ToolProgressEvent) bool {
	for i := range m.children {
		if e.ToolCallID != "" && m.children[i].callID == e.ToolCallID {
			m.children[i].now = fmt.Sprintf("step %d: %s", int(e.Progress), strings.ReplaceAll(e.Message, "\n", " "))
			return true
		}
	}
	return false
}

// childLines are the live lines of the running sub-agents (four, then
// how many more).
func (m *tui) childLines() string {
	var b strings.Builder
	for i, c := range m.children {
		if i == 4 {
			b.WriteString(m.ch.dim(fmt.Sprintf("  ↳ %d more (/tasks lists them)", len(m.children)-4)) + "\n")
			break
		}
		line := "  ↳ " + firstLines(c.what, 1, 40) + " · " + cmp.Or(c.now, "starting")
		b.WriteString(m.ch.dim(mdterm.Safe(cut(line, max(m.width-2, 30)))) + "\n")
	}
	return b.String()
}

// asking is an approval or a question waiting for the person.
type asking struct {
	approval *approval
	reply    chan [2]string
	detail   string // the command or diff shown with an approval
	elicit   *elicitMsg
	fill     *form.Filling // a form's answer so far
	url      bool          // a url-mode question: y is done, else declined
}

func runChatTUI(ctx context.Context, ch *chat, approve, sessionID string, cont bool) error {
	ta := textarea.New()
	ta.SetPromptFunc(2, func(line int) string {
		if line == 0 {
			return "› "
		}
		return "  "
	})
	ta.Placeholder = "a prompt, or /help"
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetHeight(1)
	ta.FocusedStyle.CursorLine = lipgloss.NewStyle()
	ta.FocusedStyle.Prompt = lipgloss.NewStyle()
	ta.BlurredStyle = ta.FocusedStyle
	// Enter sends; Alt-Enter and Ctrl-J add a line; the terminal's own
	// paste (bracketed) is used, never a clipboard program.
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	ta.KeyMap.Paste = key.NewBinding(key.WithDisabled())
	ta.KeyMap.LinePrevious = key.NewBinding(key.WithDisabled())
	ta.KeyMap.LineNext = key.NewBinding(key.WithDisabled())
	ta.Focus()
	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot))
	m := &tui{ctx: ctx, ch: ch, approve: approve, ta: ta, spin: sp, width: 80, height: 24, out: newPrintQueue()}
	if path, err := historyFile(ch.env, ch.cv.configDir); err == nil {
		m.historyPath = path
		m.history = loadHistory(path)
	}
	m.hpos = len(m.history)
	settleBackground(ch.env.Getenv)
	p := tea.NewProgram(m, tea.WithInput(ch.env.Stdin), tea.WithOutput(ch.env.Stdout), tea.WithContext(ctx))
	m.p = p
	q := m.out
	printing := make(chan struct{})
	defer close(printing)
	go q.run(p, printing)
	ch.say = q.print
	ch.note = q.print
	// Notes the connection code writes (a reconnect) go above the view.
	ch.cv.env.Stderr = q
	ch.cv.r = &renderer{out: q, errw: q, format: "text", approve: approve, ui: m}
	go func() { p.Send(startedMsg{ch.start(ctx, sessionID, cont)}) }()
	_, err := p.Run()
	if ch.cv.c != nil {
		ch.cv.c.Close()
	}
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		err = nil
	}
	if m.quitErr != nil {
		return m.quitErr
	}
	return err
}

// printQueue puts lines above the program's view in the order they were
// given, from any goroutine: one goroutine hands them to the program
// (tea.Println commands run on goroutines of their own, so two of them
// may land in either order).
type printQueue struct {
	mu    sync.Mutex
	lines []string
	wake  chan struct{}
}

func newPrintQueue() *printQueue { return &printQueue{wake: make(chan struct{}, 1)} }

func (q *printQueue) print(s string) {
	q.mu.Lock()
	q.lines = append(q.lines, s)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run hands the lines to p until done is closed.
func (q *printQueue) run(p *tea.Program, done <-chan struct{}) {
	for {
		select {
		case <-q.wake:
		case <-done:
			return
		}
		q.mu.Lock()
		lines := q.lines
		q.lines = nil
		q.mu.Unlock()
		if len(lines) > 0 {
			// Sent as a message, not p.Println: that blocks for ever once
			// the program has ended; Send gives up then.
			p.Send(tea.Println(strings.Join(lines, "\n"))())
		}
	}
}

// Write makes the queue an io.Writer for notes (a reconnect's).
func (q *printQueue) Write(b []byte) (int, error) {
	if s := strings.Trim(string(b), "\n"); s != "" {
		q.print(s)
	}
	return len(b), nil
}

func (m *tui) Init() tea.Cmd { return tea.Batch(textarea.Blink, m.spin.Tick) }

func (m *tui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.ta.SetWidth(max(msg.Width-1, 10))
		return m, nil
	case startedMsg:
		return m, m.started(msg)
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		return m, cmd
	case evMsg:
		return m, m.event(msg.u)
	case approveMsg:
		return m, m.startApproval(msg)
	case elicitMsg:
		return m, m.startElicit(msg)
	case turnDoneMsg:
		return m, m.turnDone(msg)
	case mcpMsg:
		m.mcpOffered(msg)
		return m, nil
	case cmdDoneMsg:
		return m, m.cmdDone(msg)
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// started takes the chat's start: its session attached (the follower
// shows its events, its MCP servers' offers are asked for, again when
// they change), or the error the program quits with.
func (m *tui) started(msg startedMsg) tea.Cmd {
	if msg.err != nil {
		m.quitErr = msg.err
		return tea.Quit
	}
	m.ready = true
	m.out.print(m.ch.dim("type /help for commands · Enter sends · Alt-Enter adds a line · Ctrl-S steers a running turn · Esc cancels a turn"))
	ns, _ := m.ch.session()
	m.dq, m.dqOf, m.me = ns.Queue, ns.SessionID, m.ch.cv.c.Init.ClientID
	m.follow()
	m.ch.cv.mu.Lock()
	m.ch.cv.onMCP = func(sid string) {
		if cur, _ := m.ch.session(); cur.SessionID == sid {
			go m.fetchMCP(sid) // not on the connection's reader
		}
	}
	m.ch.cv.mu.Unlock()
	go m.fetchMCP(ns.SessionID)
	return nil
}

// turnDone takes this chat's turn's end: the steers it never saw are
// said, and how it ended when not as it should, and what was queued
// starts.
func (m *tui) turnDone(msg turnDoneMsg) tea.Cmd {
	// The turn's turn_complete printed its reply; what streams now
	// is the next turn's (another client's, queued behind it).
	if msg.err != nil {
		m.flush()
	}
	m.busy, m.waiting = false, false
	for _, v := range m.heldSteers {
		m.out.print(m.ch.dim("(not steered: the turn ended before it began) " + v))
	}
	m.heldSteers = nil
	var ee *console.ExitError
	switch {
	case errors.As(msg.err, &ee) && ee.Code == exitCancelled:
	case msg.err != nil:
		m.out.print("error: " + console.HumanError(msg.err))
	default:
		if note := stopNote(msg.res); note != "" {
			m.out.print(m.ch.dim(note))
		}
	}
	return m.next()
}

// mcpOffered takes what the session's MCP servers offer: a login one
// wants is said once, and the prompts and resources Tab completes are
// said when they change.
func (m *tui) mcpOffered(msg mcpMsg) {
	for _, name := range msg.logins {
		if !m.loginSaid[name] {
			if m.loginSaid == nil {
				m.loginSaid = map[string]bool{}
			}
			m.loginSaid[name] = true
			m.out.print(m.ch.dim(fmt.Sprintf("MCP server %s needs a login: run zeroclaw mcp login %s (in another terminal); its tools answer an error until then", name, name)))
		}
	}
	same := slices.Equal(m.mcpCommands, msg.commands) && slices.Equal(m.mcpResources, msg.resources)
	m.mcpCommands, m.mcpResources = msg.commands, msg.resources
	if !same && len(msg.commands)+len(msg.resources) > 0 {
		m.out.print(m.ch.dim(fmt.Sprintf("MCP: %d prompt(s) as /mcp__ commands, %d resource(s) to mention as @SERVER:URI (attached when sent); Tab completes them",
			len(msg.commands), len(msg.resources))))
	}
}

// cmdDone takes a command's end: the chat quits, or starts what was
// queued (the session's queue is another's when the command attached
// another session).
func (m *tui) cmdDone(msg cmdDoneMsg) tea.Cmd {
	m.busy = false
	if msg.quit {
		return tea.Quit
	}
	if ns, _ := m.ch.session(); ns.SessionID != m.dqOf {
		m.dq, m.dqOf = ns.Queue, ns.SessionID // a /resume or /new attached another session
		m.children = nil
	}
	return m.next()
}

// key handles a key press.
func (m *tui) key(k tea.KeyMsg) tea.Cmd {
	if m.asking != nil && m.asking.approval != nil {
		return m.approvalKey(k)
	}
	armed := m.quitArmed
	m.quitArmed = false
	m.hint = ""
	switch k.String() {
	case "tab":
		m.complete()
		return nil
	case "shift+tab":
		ns, _ := m.ch.session()
		go m.ch.command(m.ctx, "/mode "+nextMode(ns.Risk))
		return nil
	case "ctrl+s":
		return m.steer()
	case "ctrl+c":
		return m.interrupt(armed)
	case "esc":
		if m.asking != nil {
			return m.answerElicit(form.CancelWord)
		}
		if m.busy {
			return m.cancelTurn(escapeKey)
		}
		return nil
	case "ctrl+d":
		if m.ta.Value() == "" && !m.busy {
			return tea.Quit
		}
	case "enter":
		return m.enter()
	case "up":
		m.historyBack()
		return nil
	case "down":
		m.historyForward()
		return nil
	}
	if k.Paste {
		m.ta.InsertString(strings.ReplaceAll(strings.ReplaceAll(string(k.Runes), "\r\n", "\n"), "\r", "\n"))
		m.fitInput()
		return nil
	}
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(k)
	m.fitInput()
	return cmd
}

// interrupt is Ctrl-C: it cancels a question, clears what was typed,
// cancels the running turn, or (pressed twice, armed by the first)
// leaves.
func (m *tui) interrupt(armed bool) tea.Cmd {
	switch {
	case m.asking != nil && !m.busy:
		return m.answerElicit(form.CancelWord)
	case m.ta.Value() != "" && m.asking == nil:
		// What was typed goes first (while a turn runs too); the
		// next Ctrl-C cancels the turn.
		m.ta.Reset()
		m.ta.SetHeight(1)
		return nil
	case m.busy && !m.cancelled:
		return m.cancelTurn(os.Interrupt)
	case m.busy:
		return tea.Quit // a second Ctrl-C while it stops
	case !armed:
		m.quitArmed = true
		return nil
	}
	return tea.Quit
}

// enter sends what is typed (a prompt, a command, a question's answer);
// a last line that ends in a backslash continues on a new line instead.
func (m *tui) enter() tea.Cmd {
	v := m.ta.Value()
	if strings.HasSuffix(v, "\\") && m.ta.Line() == m.ta.LineCount()-1 {
		m.ta.SetValue(strings.TrimSuffix(v, "\\") + "\n")
		m.fitInput()
		return nil
	}
	m.ta.Reset()
	m.ta.SetHeight(1)
	if m.asking != nil {
		return m.answerElicit(v)
	}
	return m.submit(v)
}

// historyBack is the up key: on the input's first line, the prompt
// before in the history; elsewhere, the line above.
func (m *tui) historyBack() {
	if m.ta.Line() == 0 && m.hpos > 0 {
		m.hpos--
		m.ta.SetValue(m.history[m.hpos])
		m.fitInput()
		return
	}
	m.ta.CursorUp()
}

// historyForward is the down key: on the input's last line, the prompt
// after in the history (past the newest, an empty input); elsewhere, the
// line below.
func (m *tui) historyForward() {
	if m.ta.Line() == m.ta.LineCount()-1 && m.hpos < len(m.history) {
		m.hpos++
		v := ""
		if m.hpos < len(m.history) {
			v = m.history[m.hpos]
		}
		m.ta.SetValue(v)
		m.fitInput()
		return
	}
	m.ta.CursorDown()
}

// complete completes a /command, or an @ mention of an MCP server's
// resource (the last word typed): the one match, or the longest common
// prefix of several (which the footer lists).
func (m *tui) complete() {
	v := m.ta.Value()
	head, word := "", v
	var from []string
	switch i := strings.LastIndexAny(v, " \n"); {
	case strings.HasPrefix(v, "/") && i < 0:
		from = append(slashWords[:len(slashWords):len(slashWords)], m.mcpCommands...)
	case strings.HasPrefix(v[i+1:], "@"):
		head, word, from = v[:i+1], v[i+1:], m.mcpResources
	default:
		return
	}
	var hits []string
	for _, c := range from {
		if strings.HasPrefix(c, word) {
			hits = append(hits, c)
		}
	}
	switch len(hits) {
	case 0:
		if strings.HasPrefix(word, "@") && len(m.mcpResources) == 0 {
			m.hint = "no MCP server offers resources to mention"
		}
		return
	case 1:
		m.ta.SetValue(head + hits[0] + " ")
	default:
		p := hits[0]
		for _, h := range hits[1:] {
			for !strings.HasPrefix(h, p) {
				p = p[:len(p)-1]
			}
		}
		m.ta.SetValue(head + p)
		m.hint = strings.Join(hits, "  ")
	}
}

// fitInput grows the input with its lines, up to a third of the screen.
func (m *tui) fitInput() {
	m.ta.SetHeight(min(max(m.ta.LineCount(), 1), max(m.height/3, 3)))
}

func (m *tui) cancelTurn(sig os.Signal) tea.Cmd {
	if m.cancel != nil && !m.cancelled {
		m.cancelled = true
		m.cancel <- sig // the turn says so
	}
	return nil
}

// escapeKey is Esc (or /cancel) as a turn's cancel, told apart from
// Ctrl-C (os.Interrupt): a second Ctrl-C leaves the chat, a second Esc
// does not, so only a Ctrl-C's cancel says "Ctrl-C again to quit".
var escapeKey os.Signal = escapeSignal{}

type escapeSignal struct{}

func (escapeSignal) String() string { return "Esc" }
func (escapeSignal) Signal()        {}

// submit sends a prompt or runs a command, or queues it behind the turn.
func (m *tui) submit(v string) tea.Cmd {
	text := strings.TrimSpace(v)
	if text == "" || !m.ready {
		return nil
	}
	m.remember(v)
	if m.busy {
		// While a turn runs, a command does what its table entry says.
		word, _, _ := strings.Cut(text, " ")
		rule := busyQueue
		if c := lookupCommand(word); c != nil && strings.HasPrefix(text, "/") {
			rule = c.busy
		}
		switch rule {
		case busyBeside:
			go func() { m.ch.command(m.ctx, text) }()
		case busyCancel:
			return m.cancelTurn(escapeKey)
		case busyQuit:
			return tea.Quit
		case busyHelp:
			m.out.print(chatHelp())
		default:
			m.queue = append(m.queue, text)
		}
		return nil
	}
	return m.dispatch(text)
}

// next starts what was queued; with nothing queued, the chat follows
// the session live.
func (m *tui) next() tea.Cmd {
	if m.busy {
		return nil
	}
	if len(m.queue) == 0 {
		m.follow()
		return nil
	}
	text := m.queue[0]
	m.queue = m.queue[1:]
	return m.dispatch(text)
}

// follow starts the follower: while this chat runs nothing, the
// session's events (another client's turns, its approvals) are shown as
// they come.
func (m *tui) follow() {
	if m.stopFollow != nil || !m.ready {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	m.stopFollow, m.followDone = stop, done
	cv := m.ch.cv
	go func() {
		defer close(done)
		for {
			select {
			case ev := <-cv.events:
				cv.r.handle(m.ctx, ev)
			case <-stop:
				return
			case <-m.ctx.Done():
				return
			}
		}
	}()
}

// unfollow stops the follower and returns what closes when it has
// stopped: the turn or command that follows waits for it (off the
// program's goroutine: the follower may be handing the program an
// event), so the events have one reader at a time.
func (m *tui) unfollow() <-chan struct{} {
	if m.stopFollow == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	close(m.stopFollow)
	done := m.followDone
	m.stopFollow, m.followDone = nil, nil
	return done
}

func (m *tui) dispatch(text string) tea.Cmd {
	m.busy, m.begun = true, true // a command: a steer goes as it is
	stopped := m.unfollow()
	if run := m.ch.answer(text); run != nil {
		go func() { <-stopped; run(m.ctx); m.p.Send(cmdDoneMsg{}) }()
		return nil
	}
	if isCommand(text) {
		go func() { <-stopped; m.p.Send(cmdDoneMsg{m.ch.command(m.ctx, text)}) }()
		return nil
	}
	if strings.HasPrefix(text, "//") {
		text = text[1:] // "//x" sends "/x" (and /mcp__... goes as it is)
	}
	m.waiting, m.cancelled, m.begun = true, false, false
	m.cancel = make(chan os.Signal, 2)
	cancel := m.cancel
	go func() {
		<-stopped
		res, err := m.ch.cv.turn(m.ctx, text, cancel)
		m.p.Send(turnDoneMsg{res, err})
	}()
	return m.spin.Tick
}

// fetchMCP asks which prompts and resources the session's MCP servers
// offer (Tab completes them; a resource mentioned is attached).
func (m *tui) fetchMCP(sid string) {
	ctx, cancel := context.WithTimeout(m.ctx, 30*time.Second)
	defer cancel()
	var offers protocol.SessionMCPResult
	if err := m.ch.cv.c.Call(ctx, protocol.MethodSessionMCP, protocol.SessionRef{SessionID: sid}, &offers); err != nil {
		return
	}
	var cs, rs []string
	for _, p := range offers.Prompts {
		cs = append(cs, p.Command)
	}
	refs := map[string]protocol.ResourceRef{}
	for _, r := range offers.Resources {
		mention := "@" + r.Server + ":" + r.URI
		rs = append(rs, mention)
		refs[mention] = protocol.ResourceRef{Server: r.Server, URI: r.URI}
	}
	m.ch.cv.mentionable(refs)
	// The servers that want a login: the user is told what to run.
	var logins []string
	if st, err := m.ch.cv.c.Status(ctx); err == nil {
		for _, s := range st.MCPServers {
			if s.Auth == "login_required" && (!s.PerSession || s.SessionID == sid) {
				logins = append(logins, s.Name)
			}
		}
	}
	m.p.Send(mcpMsg{cs, rs, logins})
}

// steer sends what is typed to the running turn (this chat's or another
// client's): Ctrl-S.
func (m *tui) steer() tea.Cmd {
	v := strings.TrimSpace(m.ta.Value())
	switch {
	case v == "":
		m.hint = "Ctrl-S sends what you type to the running turn (it joins at the model's next call)"
		return nil
	case !m.busy && m.other == "":
		m.hint = "no turn is running: Enter sends it as a prompt"
		return nil
	}
	m.remember(m.ta.Value())
	m.ta.Reset()
	m.ta.SetHeight(1)
	if m.busy && m.other == "" && !m.begun {
		// This chat's prompt is on its way: the steer goes once the
		// daemon runs it (sent now, it could find no turn running).
		m.heldSteers = append(m.heldSteers, v)
		return nil
	}
	go m.ch.command(m.ctx, "/steer "+v)
	return nil
}

// sendHeldSteers sends the steers held until this chat's turn began.
func (m *tui) sendHeldSteers() {
	held := m.heldSteers
	m.heldSteers = nil
	if len(held) > 0 {
		go func() {
			for _, v := range held {
				m.ch.command(m.ctx, "/steer "+v)
			}
		}()
	}
}

// remember keeps a prompt in the history (and its file).
func (m *tui) remember(v string) {
	if len(m.history) == 0 || m.history[len(m.history)-1] != v {
		m.history = append(m.history, v)
		if m.historyPath != "" {
			if f, err := os.OpenFile(m.historyPath, os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				b, _ := json.Marshal(v)
				f.Write(append(b, '\n'))
				f.Close()
			}
		}
	}
	m.hpos = len(m.history)
}

// loadHistory reads the last 1,000 prompts: one JSON string a line (a
// plain line, as older versions wrote, is taken as it is).
func loadHistory(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var h []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) != nil {
			s = sc.Text()
		}
		if s != "" {
			h = append(h, s)
		}
	}
	if len(h) > 1000 {
		h = h[len(h)-1000:]
	}
	return h
}

// Event implements chatUI (on the turn's goroutine).
func (m *tui) Event(u update) { m.p.Send(evMsg{u}) }

// Approve implements chatUI: it waits for the person's keys.
func (m *tui) Approve(u *approval) (string, string) {
	switch m.approve {
	case "all":
		return "allow_once", ""
	case "none":
		return "reject_once", "the client was started with --approve none"
	}
	reply := make(chan [2]string, 1) // one answer: the person's, or none when withdrawn
	m.p.Send(approveMsg{u, reply})
	select {
	case r := <-reply:
		return r[0], r[1]
	case <-m.ctx.Done():
		return "reject_once", "the chat ended"
	}
}

// Elicit implements chatUI.
func (m *tui) Elicit(p *protocol.ElicitationParams) protocol.ElicitationResult {
	reply := make(chan protocol.ElicitationResult, 1)
	m.p.Send(elicitMsg{p, reply})
	select {
	case r := <-reply:
		return r
	case <-m.ctx.Done():
		return protocol.ElicitationResult{Action: "cancel"}
	}
}

// event shows one session event. The events are shown in groups (the
// conversation, tool calls and the sub-agents they start, the session's
// state, lines of their own), each by a helper of its own.
func (m *tui) event(u update) tea.Cmd {
	if u.TurnID != "" && m.busy && !m.begun {
		m.begun = true
		m.sendHeldSteers()
	}
	switch u.Event.(type) {
	case protocol.UserMessageEvent, protocol.AgentMessageChunkEvent, protocol.AgentThoughtChunkEvent, protocol.TurnCompleteEvent:
		m.conversationEvent(u)
	case protocol.ToolCallEvent, protocol.ToolResultEvent, protocol.ToolProgressEvent, protocol.SubagentUpdateEvent:
		m.toolEvent(u)
	case protocol.QueueUpdateEvent, protocol.ContextUsageEvent, protocol.PlanEvent, protocol.ConfigUpdateEvent:
		m.stateEvent(u)
	case protocol.ApprovalResolvedEvent, protocol.ApprovalReviewedEvent, protocol.HistoryTrimmedEvent, protocol.HookEvent,
		protocol.ProcessUpdateEvent, protocol.TurnResumedEvent, protocol.ScheduleUpdateEvent, protocol.GoalUpdateEvent,
		protocol.UndecodableEvent:
		m.noteEvent(u)
	case protocol.ApprovalRequestEvent:
		// Asked through Approve (the renderer's toUI), never here.
	case protocol.RewindEvent, protocol.InputUpdateEvent, protocol.TurnInterruptedEvent, protocol.UnknownEvent:
		// tuiLeavesOut (a newer daemon's event too).
	}
	return nil
}

// conversationEvent shows the conversation itself: a prompt (this
// chat's, or another client's, whose turn it then is), a steer, the
// reply and its thoughts as they stream, and a turn's end.
func (m *tui) conversationEvent(u update) {
	ch := m.ch
	switch e := u.Event.(type) {
	case protocol.UserMessageEvent:
		m.flush()
		mine := e.ClientID == m.me
		who := fromWhom(e.ClientID, e.ClientName)
		switch {
		case e.Steered && mine:
			m.out.print(ch.steerLine(e.Text, ""))
		case e.Steered:
			m.out.print(ch.steerLine(e.Text, who))
		case e.ClientID != "" && !mine:
			m.out.print(ch.promptLine(e.Text) + " " + ch.dim("· from "+who))
			m.other = who
		default:
			m.out.print(ch.promptLine(e.Text))
		}
	case protocol.AgentMessageChunkEvent:
		m.waiting = false
		m.flushThought()
		m.live.WriteString(e.Text)
		m.settle()
	case protocol.AgentThoughtChunkEvent:
		m.waiting = false
		m.thought.WriteString(e.Text)
	case protocol.TurnCompleteEvent:
		m.flush()
		if m.other != "" {
			if note := stopNote(protocol.SessionPromptResult{StopReason: e.StopReason, Notice: e.Notice, Error: e.Error}); note != "" {
				m.out.print(ch.dim(note))
			}
		}
		m.other = ""
	}
}

// toolEvent shows a tool call, its result and its progress (a task's in
// its sub-agent's live line, another's in the status), and a sub-agent
// started or ended.
func (m *tui) toolEvent(u update) {
	ch := m.ch
	switch e := u.Event.(type) {
	case protocol.ToolCallEvent:
		m.waiting = false
		m.flush()
		m.out.print(ch.tuiStyle().toolCallLine(e, max(m.width-len(e.Name)-4, 40)))
	case protocol.ToolResultEvent:
		m.progress = ""
		m.out.print(ch.tuiStyle().toolResultLine(e, max(m.width-6, 40)))
	case protocol.ToolProgressEvent:
		if !m.childProgress(e) {
			m.progress = progressLine(e)
		}
	case protocol.SubagentUpdateEvent:
		m.out.print(ch.dim(subagentNote(e)))
		if e.Subagent.State == protocol.SubagentRunning {
			m.childStarted(e.Subagent)
		} else {
			m.childEnded(e.Subagent.SessionID)
		}
	}
}

// stateEvent keeps the session's state the view shows: its queue, its
// context's use and cost (the footer), its plan, and its settings (the
// footer's model and mode, at once; another's change said).
func (m *tui) stateEvent(u update) {
	ch := m.ch
	switch e := u.Event.(type) {
	case protocol.QueueUpdateEvent:
		m.dq = e.Items
	case protocol.ContextUsageEvent:
		ch.mu.Lock()
		ch.tokens = [2]int64{e.InputTokens, e.MaxContextTokens}
		if c := e.SessionCostUSD; c != nil {
			ch.cost = fmt.Sprintf("$%.4f", *c)
		}
		ch.mu.Unlock()
	case protocol.PlanEvent:
		m.flush()
		if e.Text != "" {
			// A plan-mode plan, whole, as Markdown (its approval follows).
			m.out.print(ch.dim("── plan ("+e.Path+") ──") + "\n" + mdterm.Render(e.Text, m.ch.color))
			break
		}
		m.out.print(ch.tuiStyle().planLines(e.Entries))
	case protocol.ConfigUpdateEvent:
		ch.configured(e)
		if note := configNote(e, m.me); note != "" {
			m.flush()
			m.out.print(ch.dim(note))
		}
	}
}

// noteEvent says, dimmed, what is a line of its own: an approval
// answered elsewhere or reviewed, a summary, a hook that did not pass, a
// background process, a turn resumed, a schedule's run, the goal, and an
// event that could not be read.
func (m *tui) noteEvent(u update) {
	ch := m.ch
	switch e := u.Event.(type) {
	case protocol.ApprovalResolvedEvent:
		// Answered here: the ask is closed already. Elsewhere (another
		// client first, the timeout, a cancel): withdrawn, and said.
		if e.By == "client" && e.ClientID == m.me {
			break
		}
		if a := m.withdraw(e.RequestID); a != nil {
			switch {
			case e.By == "timeout":
				m.out.print(ch.dim(timedOut))
			case e.By == "client":
				m.out.print(ch.dim(fmt.Sprintf("  answered by %s: %s", fromWhom(e.ClientID, e.ClientName), cmp.Or(answerSaid(e.Decision, a.ToolName, a.Kind), e.Decision))))
			}
		}
	case protocol.ApprovalReviewedEvent:
		m.flush()
		m.out.print(ch.dim(reviewNote(e)))
	case protocol.HistoryTrimmedEvent:
		m.out.print(ch.dim("(earlier turns were summarised out of the model's view to fit its context)"))
	case protocol.HookEvent:
		if e.Outcome != "ok" {
			m.out.print(ch.dim(hookNote(e)))
		}
	case protocol.ProcessUpdateEvent:
		m.out.print(ch.dim(processNote(e)))
	case protocol.TurnResumedEvent:
		m.out.print(ch.dim(resumedNote(e)))
	case protocol.ScheduleUpdateEvent:
		m.out.print(ch.dim(scheduleNote(e)))
	case protocol.GoalUpdateEvent:
		m.out.print(ch.dim(goalNote(e)))
	case protocol.UndecodableEvent:
		m.flush()
		m.out.print(ch.dim(fmt.Sprintf("(event %d could not be read: %s)", u.Seq, mdterm.Safe(e.Err))))
	}
}

// tuiLeavesOut are the event types the full-screen chat does not show: a
// rewind is said by the command that made it, an input's fate by its
// prompt's line and the queue, a cut turn by its turn_resumed. Every
// other type of protocol.Events has its case in event (approval_request
// is asked through Approve); a test checks both.
var tuiLeavesOut = []string{protocol.EventRewind, protocol.EventInputUpdate, protocol.EventTurnInterrupted}

// progressLine says how far a tool is: "2/3 step 2", "40% ...".
func progressLine(e protocol.ToolProgressEvent) string {
	var s string
	switch {
	case e.Total != nil && *e.Total > 0:
		s = strconv.FormatFloat(e.Progress, 'f', -1, 64) + "/" + strconv.FormatFloat(*e.Total, 'f', -1, 64)
	default:
		s = strconv.FormatFloat(e.Progress, 'f', -1, 64)
	}
	if e.Message != "" {
		s += " " + mdterm.Safe(strings.ReplaceAll(e.Message, "\n", " "))
	}
	return s
}

// fromWhom names a client for the person: its name and id.
func fromWhom(id, name string) string {
	if name == "" {
		return cmp.Or(id, "another client")
	}
	return name + " (" + id + ")"
}

// flush prints what streamed so far above the view.
func (m *tui) flush() {
	m.flushThought()
	if s := strings.TrimSpace(m.live.String()); s != "" {
		m.out.print(mdterm.Render(s, m.ch.color))
	}
	m.live.Reset()
	m.scanned, m.inFence = 0, false
}

// settle prints the reply's finished blocks (up to its last blank line
// outside a code fence) above the view as they complete, so what the view
// renders at each event stays one block long however long the reply is.
// Lines are scanned once: scanned is where the unscanned ones start.
func (m *tui) settle() {
	s := m.live.String()
	end := 0
	for {
		j := strings.IndexByte(s[m.scanned:], '\n')
		if j < 0 {
			break // the last line is still streaming
		}
		t := strings.TrimSpace(s[m.scanned : m.scanned+j])
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			m.inFence = !m.inFence
		case t == "" && !m.inFence:
			end = m.scanned + j + 1
		}
		m.scanned += j + 1
	}
	if done := strings.TrimSpace(s[:end]); done != "" {
		m.out.print(mdterm.Render(done, m.ch.color) + "\n") // and the blank line that ended it
	}
	if end > 0 {
		m.live.Reset()
		m.live.WriteString(s[end:])
		m.scanned -= end
	}
}

// flushThought prints the thought dimmed, on its own lines.
func (m *tui) flushThought() {
	s := strings.TrimSpace(m.thought.String())
	m.thought.Reset()
	if s == "" {
		return
	}
	lines := strings.Split(mdterm.Safe(strings.ReplaceAll(s, "\n", "\x00")), "^@")
	for i, l := range lines {
		lines[i] = m.ch.sgr("\x1b[2;3m", "  "+l)
	}
	m.out.print(strings.Join(lines, "\n"))
}

func (m *tui) startApproval(msg approveMsg) tea.Cmd {
	if m.asking != nil {
		m.later = append(m.later, msg) // asked when the open one is answered
		return nil
	}
	m.asking = &asking{approval: msg.u, reply: msg.reply, detail: m.approvalDetail(msg.u)}
	m.flush()
	return nil
}

// asked closes the open ask and opens the next one waiting.
func (m *tui) asked() tea.Cmd {
	m.asking = nil
	if len(m.later) == 0 {
		return nil
	}
	next := m.later[0]
	m.later = m.later[1:]
	return m.startApproval(next)
}

// withdraw drops the ask of an approval answered elsewhere (another
// client, the timeout, a cancel): its waiting answer is none. It
// returns the approval withdrawn (nil: none was asked here).
func (m *tui) withdraw(requestID string) *approval {
	for i, l := range m.later {
		if l.u.RequestID == requestID {
			l.reply <- [2]string{}
			m.later = append(m.later[:i:i], m.later[i+1:]...)
			return l.u
		}
	}
	if a := m.asking; a != nil && a.approval != nil && a.approval.RequestID == requestID {
		a.reply <- [2]string{}
		m.asked()
		return a.approval
	}
	return nil
}

// approvalDetail is what an approval shows, by the tool's kind: the
// whole command of one that executes, the change of an edit (a whole
// file's content, or old replaced by new) as a coloured diff.
func (m *tui) approvalDetail(u *approval) string {
	var in struct {
		Command string  `json:"command"`
		Path    string  `json:"path"`
		Content *string `json:"content"`
		Old     string  `json:"old"`
		New     *string `json:"new"`
	}
	json.Unmarshal(u.RawInput, &in)
	switch {
	case u.Kind == protocol.KindExecute && in.Command != "":
		return m.ch.sgr("\x1b[1m", "$ "+mdterm.Safe(in.Command))
	case u.Kind == protocol.KindEdit && (in.Content != nil || in.New != nil):
		path := in.Path
		if !filepath.IsAbs(path) {
			ns, _ := m.ch.session()
			path = filepath.Join(ns.Cwd, path)
		}
		oldB, _ := os.ReadFile(path)
		old := string(oldB)
		var next string
		if in.Content != nil {
			next = *in.Content
		} else if strings.Count(old, in.Old) == 1 {
			next = strings.Replace(old, in.Old, *in.New, 1)
		} else {
			old, next = in.Old, *in.New // the file as read does not hold it once: show the edit itself
		}
		return m.diff(in.Path, old, next)
	}
	return mdterm.Safe(compact(u.RawInput, 2000))
}

// diff is a unified diff, coloured, at most 40 lines.
func (m *tui) diff(path, old, next string) string {
	d := udiff.Unified("a/"+path, "b/"+path, old, next)
	if d == "" {
		return m.ch.dim("(no change to " + path + ")")
	}
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	more := 0
	if len(lines) > 40 {
		more = len(lines) - 40
		lines = lines[:40]
	}
	for i, l := range lines {
		l = mdterm.Safe(l)
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			l = m.ch.sgr("\x1b[1m", l)
		case strings.HasPrefix(l, "+"):
			l = m.ch.sgr("\x1b[32m", l)
		case strings.HasPrefix(l, "-"):
			l = m.ch.sgr("\x1b[31m", l)
		case strings.HasPrefix(l, "@@"):
			l = m.ch.sgr("\x1b[36m", l)
		}
		lines[i] = l
	}
	if more > 0 {
		lines = append(lines, m.ch.dim(fmt.Sprintf("… %d more lines", more)))
	}
	return strings.Join(lines, "\n")
}

func (m *tui) approvalKey(k tea.KeyMsg) tea.Cmd {
	a := m.asking
	u := a.approval
	decide := func(decision, what string) tea.Cmd {
		a.reply <- [2]string{decision, ""}
		m.out.print(m.ch.dim(fmt.Sprintf("  %s %s", what, u.ToolName)))
		return m.asked()
	}
	// answer gives a tool approval's decision, when the request takes it,
	// and says what it means.
	answer := func(decision string) tea.Cmd {
		if !offers(u, decision) {
			return nil
		}
		a.reply <- [2]string{decision, ""}
		m.out.print(m.ch.dim("  " + answerSaid(decision, u.ToolName, u.Kind)))
		return m.asked()
	}
	if u.Kind == protocol.KindPlan {
		// The plan mode's end: its own three answers (the daemon
		// switches the mode as it takes one, and its config_update
		// changes the footer).
		switch strings.ToLower(k.String()) {
		case "y":
			return decide(protocol.DecisionProceedAsk, "proceeding, asking before changes:")
		case "a":
			return decide(protocol.DecisionProceedEdits, "proceeding, accepting edits:")
		case "n", "esc":
			return decide(protocol.DecisionKeepPlanning, "planning goes on (type what to change):")
		}
		return nil
	}
	// Upper case is its own key here: P is every call for the project.
	key := k.String()
	if key != "P" {
		key = strings.ToLower(key)
	}
	switch key {
	case "y":
		return answer(protocol.DecisionAllowOnce)
	case "c":
		return answer(protocol.DecisionAllowAlwaysInput)
	case "a":
		return answer(protocol.DecisionAllowAlways)
	case "p":
		return answer(protocol.DecisionAllowProjectInput)
	case "P":
		return answer(protocol.DecisionAllowProject)
	case "n":
		return answer(protocol.DecisionRejectOnce)
	case "e":
		m.out.print(m.ch.dim(fmt.Sprintf("  tool %s, call %s, input %s", u.ToolName, u.ToolCallID, mdterm.Safe(compact(u.RawInput, 2000)))))
	case "esc", "ctrl+c":
		cmd := answer(protocol.DecisionRejectOnce)
		if m.busy {
			sig := escapeKey
			if k.String() == "ctrl+c" {
				sig = os.Interrupt
			}
			return tea.Batch(cmd, m.cancelTurn(sig))
		}
		return cmd // another client's turn: only the ask is answered
	}
	return nil
}

func (m *tui) startElicit(msg elicitMsg) tea.Cmd {
	if msg.p.Mode == "url" {
		// An MCP server sends the person to a page.
		m.asking = &asking{elicit: &msg, url: true}
		m.flush()
		m.out.print(m.ch.sgr("\x1b[1;35m", "? ") + mdterm.SafeLines(msg.p.Message) + "\n  open: " + m.ch.sgr("\x1b[4m", mdterm.Safe(msg.p.URL)) +
			"\n" + m.ch.dim("  y and Enter once done there; Enter alone declines, Esc cancels"))
		return nil
	}
	m.flush()
	m.out.print(m.ch.sgr("\x1b[1;35m", "? ") + mdterm.SafeLines(msg.p.Message))
	f, err := form.Parse(msg.p.RequestedSchema)
	if err != nil {
		m.out.print(m.ch.dim("  (this question cannot be answered here: " + mdterm.Safe(err.Error()) + "; declined)"))
		msg.reply <- protocol.ElicitationResult{Action: form.Decline}
		return nil
	}
	m.asking = &asking{elicit: &msg, fill: f.Fill()}
	if m.asking.fill.Field() == nil {
		return m.answerElicit("")
	}
	m.showField()
	return nil
}

// showField shows the form's field asked now: its name, description and
// choices (its type and default are on the line above the input).
func (m *tui) showField() {
	fd := m.asking.fill.Field()
	var b strings.Builder
	if fd.Label() != m.asking.elicit.p.Message || fd.Description != "" {
		b.WriteString("  " + mdterm.Safe(fd.Heading()))
	}
	for i, o := range fd.Options {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "    %d) %s", i+1, mdterm.Safe(o.Title))
	}
	if b.Len() > 0 {
		m.out.print(b.String())
	}
}

// answerElicit takes a line typed for the question: a url question's y,
// else the form's field asked now (form.CancelWord cancels).
func (m *tui) answerElicit(line string) tea.Cmd {
	a := m.asking
	line = strings.TrimSpace(line)
	if a.url {
		m.asking = nil
		switch l := strings.ToLower(line); {
		case l == "y" || l == "yes":
			a.elicit.reply <- protocol.ElicitationResult{Action: form.Accept}
			m.out.print(m.ch.dim("  (done)"))
		case l == form.CancelWord:
			a.elicit.reply <- protocol.ElicitationResult{Action: form.Cancel}
			m.out.print(m.ch.dim("  (cancelled)"))
		default:
			a.elicit.reply <- protocol.ElicitationResult{Action: form.Decline}
			m.out.print(m.ch.dim("  (declined)"))
		}
		return nil
	}
	fd := a.fill.Field()
	action, err := a.fill.Take(line)
	switch {
	case err != nil:
		m.out.print(m.ch.dim("  " + mdterm.Safe(err.Error())))
		return nil
	case action == "":
		if fd != nil && line != "" {
			m.out.print(m.ch.dim("  " + mdterm.Safe(fd.Label()) + ": " + mdterm.Safe(line)))
		}
		m.showField()
		return nil
	}
	m.asking = nil
	switch action {
	case form.Accept:
		b, _ := json.Marshal(a.fill.Content())
		a.elicit.reply <- protocol.ElicitationResult{Action: action, Content: b}
		m.out.print(m.ch.dim("  answered: " + mdterm.Safe(string(b))))
	case form.Decline:
		a.elicit.reply <- protocol.ElicitationResult{Action: action}
		m.out.print(m.ch.dim("  (declined)"))
	default:
		a.elicit.reply <- protocol.ElicitationResult{Action: action}
		m.out.print(m.ch.dim("  (cancelled)"))
	}
	return nil
}

// View is, top to bottom: the thought and the reply streaming, an
// approval asked, the running sub-agents, the status, the queues, the
// question asked, the input, a hint and the footer.
func (m *tui) View() string {
	var b strings.Builder
	b.WriteString(m.streamingView())
	b.WriteString(m.approvalView())
	b.WriteString(m.childLines())
	b.WriteString(m.statusView())
	b.WriteString(m.queueView())
	switch a := m.asking; {
	case a != nil && a.url:
		b.WriteString(m.ch.dim("y and Enter once done there; Enter alone declines, Esc cancels") + "\n")
	case a != nil && a.fill != nil && a.fill.Field() != nil:
		b.WriteString(m.ch.dim(mdterm.Safe(a.fill.Field().Label()+" ("+a.fill.Field().Hint()+")")+"; /decline, Esc cancels") + "\n")
	}
	b.WriteString(m.ta.View() + "\n")
	switch {
	case m.quitArmed:
		b.WriteString(m.ch.dim("press Ctrl-C again to leave (Ctrl-D too); the session stays: zeroclaw chat -c") + "\n")
	case m.hint != "":
		b.WriteString(m.ch.dim(m.hint) + "\n")
	}
	b.WriteString(m.footer())
	return b.String()
}

// streamingView is what streams and is not printed yet: the end of the
// thought so far, and the reply's last lines that fit above the input.
func (m *tui) streamingView() string {
	var b strings.Builder
	avail := max(m.height-m.ta.Height()-4, 3)
	if m.thought.Len() > 0 {
		// The end of the thought so far, on one line (its whole prints
		// when it ends).
		t := m.thought.String()
		if n := max(m.width-4, 20); len(t) > n {
			i := len(t) - n
			for i < len(t) && !utf8.RuneStart(t[i]) {
				i++
			}
			t = "…" + t[i:]
		}
		b.WriteString(m.ch.sgr("\x1b[2;3m", "  "+mdterm.Safe(strings.ReplaceAll(t, "\n", " "))) + "\n")
	}
	if m.live.Len() > 0 {
		lines := strings.Split(mdterm.Render(m.live.String(), m.ch.color), "\n")
		if len(lines) > avail {
			lines = lines[len(lines)-avail:]
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

// approvalView is the approval asked ("" when none): the call, its
// detail and the keys that answer it.
func (m *tui) approvalView() string {
	a := m.asking
	if a == nil || a.approval == nil {
		return ""
	}
	var b strings.Builder
	u := a.approval
	who := ""
	if u.Subagent != nil {
		who = " (sub-agent: " + mdterm.Safe(cut(u.Subagent.Description, 40)) + ")"
	}
	b.WriteString(m.ch.sgr("\x1b[1;33m", "╭ allow "+u.ToolName+"?"+who) + " " + mdterm.Safe(cut(u.Summary, max(m.width-20, 20))) + "\n")
	for _, l := range strings.Split(a.detail, "\n") {
		b.WriteString(m.ch.sgr("\x1b[33m", "│ ") + l + "\n")
	}
	if u.Kind == protocol.KindPlan {
		b.WriteString(m.ch.sgr("\x1b[1;33m", "╰ ") + "[y] proceed, asking  [a] proceed, accepting edits  [n] keep planning (then say what to change)\n")
	} else {
		// Each "always" says its scope; those the request does not take
		// are not shown.
		keys := []string{"[y] once  [n] no  [e] explain  [esc] no, and cancel the turn"}
		scope := func(where, exactKey, exact, everyKey, every string) {
			var ks []string
			if offers(u, exact) {
				ks = append(ks, "["+exactKey+"] this "+inputWord(u.Kind))
			}
			if offers(u, every) {
				ks = append(ks, "["+everyKey+"] every "+u.ToolName)
			}
			if len(ks) > 0 {
				keys = append(keys, "always, "+where+": "+strings.Join(ks, "  "))
			}
		}
		scope("for this session only", "c", protocol.DecisionAllowAlwaysInput, "a", protocol.DecisionAllowAlways)
		scope("in this project (stored: later sessions too)", "p", protocol.DecisionAllowProjectInput, "P", protocol.DecisionAllowProject)
		for i, l := range keys {
			edge := "│ "
			if i == len(keys)-1 {
				edge = "╰ "
			}
			b.WriteString(m.ch.sgr("\x1b[1;33m", edge) + l + "\n")
		}
	}
	return b.String()
}

// statusView is the spinner's line ("" when nothing runs): connecting,
// thinking, a tool's progress, working, or another client's turn.
func (m *tui) statusView() string {
	switch {
	case !m.ready:
		return m.spin.View() + " connecting to the daemon…\n"
	case m.busy && m.waiting:
		return m.spin.View() + " thinking… " + m.ch.dim("(esc to cancel)") + "\n"
	case m.busy && m.asking == nil && m.progress != "":
		return m.spin.View() + " " + m.ch.dim(cut(m.progress, max(m.width-30, 20))+" (esc to cancel · Ctrl-S steers)") + "\n"
	case m.busy && m.asking == nil:
		return m.spin.View() + m.ch.dim(" working (esc to cancel · Ctrl-S steers)") + "\n"
	case m.other != "" && m.asking == nil:
		return m.spin.View() + m.ch.dim(" "+cut(m.other, 40)+"'s turn is running (Ctrl-S steers it; Enter queues a prompt behind it)") + "\n"
	}
	return ""
}

// queueView lists what waits: the daemon's queue of the session (its
// first three), then this chat's own prompts queued behind its turn.
func (m *tui) queueView() string {
	var b strings.Builder
	if n := len(m.dq); n > 0 {
		b.WriteString(m.ch.dim(fmt.Sprintf("the session's queue (%d; /queue lists, /queue rm N removes):", n)) + "\n")
		for i, it := range m.dq[:min(n, 3)] {
			who := ""
			if it.ClientName != "" {
				who = " · " + it.ClientName
			}
			b.WriteString(m.ch.dim(fmt.Sprintf("  %d) %s%s", i+1, cut(mdterm.Safe(it.Text), max(m.width-30, 20)), who)) + "\n")
		}
		if n > 3 {
			b.WriteString(m.ch.dim(fmt.Sprintf("  … %d more", n-3)) + "\n")
		}
	}
	for _, q := range m.queue {
		b.WriteString(m.ch.dim("queued: "+cut(strings.ReplaceAll(q, "\n", " ⏎ "), max(m.width-10, 20))) + "\n")
	}
	return b.String()
}

// footer: agent, model, session and the context used.
func (m *tui) footer() string {
	ns, tokens := m.ch.session()
	if ns.SessionID == "" {
		return ""
	}
	parts := []string{"agent " + ns.AgentAlias, cmp.Or(ns.Model, ns.Provider), strings.ToLower(modeName(ns.Risk)) + " mode", ns.SessionID}
	if used, size := tokens[0], tokens[1]; size > 0 {
		parts = append(parts, fmt.Sprintf("%s/%s tokens (%d%%)", kilo(used), kilo(size), used*100/size))
	}
	m.ch.mu.Lock()
	if m.ch.cost != "" {
		parts = append(parts, m.ch.cost)
	}
	m.ch.mu.Unlock()
	return m.ch.dim(cut(strings.Join(parts, " · "), max(m.width-1, 20)))
}

func kilo(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10)
	}
	return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
}
