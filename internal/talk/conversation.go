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
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/form"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/mdterm"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Exit codes of zeroclaw prompt.
const (
	exitTurnError       = 1
	exitMaxTurnRequests = 3
	exitRefusal         = 4
	exitBudget          = 5
	exitMaxTokens       = 6
	exitCancelled       = 130
)

// event is one thing the renderer handles, in the order it arrived: a
// session/update, or a question from the daemon with where to answer.
type event struct {
	update json.RawMessage
	ask    *protocol.ElicitationParams
	answer chan protocol.ElicitationResult
}

// update is a decoded session/update; approval an approval_request.
type (
	update   = protocol.SessionUpdate
	approval = protocol.ApprovalRequestEvent
)

// handler feeds the daemon's notifications and requests to events.
func handler(events chan<- event, onMCP func(sessionID string)) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		switch r.Method {
		case protocol.MethodSessionMCPChanged:
			var p protocol.SessionRef
			if json.Unmarshal(r.Params, &p) == nil && onMCP != nil {
				onMCP(p.SessionID)
			}
			return nil, nil
		case protocol.MethodSessionUpdate:
			events <- event{update: append(json.RawMessage(nil), r.Params...)}
			return nil, nil
		case protocol.MethodElicitationCreate:
			var p protocol.ElicitationParams
			if err := json.Unmarshal(r.Params, &p); err != nil {
				return nil, err
			}
			ch := make(chan protocol.ElicitationResult, 1)
			events <- event{ask: &p, answer: ch}
			return jsonrpc.Later(func(ctx context.Context) (any, error) {
				select {
				case res := <-ch:
					return res, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}), nil
		}
		return nil, jsonrpc.ErrMethodNotFound
	})
}

// renderer prints a session's stream for a person (text) or a script
// (ndjson), and answers approvals and questions.
type renderer struct {
	out, errw io.Writer
	format    string // text | json | ndjson
	approve   string // ask | all | none
	answers   lines
	c         *client.Client
	sessionID string
	lastSeq   int64
	midLine   bool // text output has an unfinished line
	// mine is the turn this client's prompt started (its user_message
	// names this client); done holds the turns seen to complete since
	// the prompt was sent, by id.
	mine string
	// mineInput is the clientMessageId the prompt was sent under: its
	// input_update names the turn too (before its user_message).
	mineInput string
	done      map[string]*protocol.TurnCompleteEvent
	// onlyMine: show only the prompt's own turn (zeroclaw prompt), not
	// another client's turn that runs before it.
	onlyMine bool
	before   func() // if set, runs before each event is handled (chat stops its spinner)
	// ui, when set, shows the events and asks the questions instead
	// (the chat's terminal interface).
	ui chatUI
	// color dims thoughts (notes go to a terminal, NO_COLOR unset);
	// thinking: a thought is being written, on lines of its own.
	color, thinking bool
}

// chatUI is a full-screen chat's side of the renderer.
type chatUI interface {
	// Event shows one event (never an approval_request).
	Event(u update)
	// Approve asks the person and returns the decision and reason.
	Approve(a *approval) (decision, reason string)
	// Elicit asks an ask_user or poll question.
	Elicit(p *protocol.ElicitationParams) protocol.ElicitationResult
}

// handle shows one event (or asks one question); complete says the
// turn followed has ended.
func (r *renderer) handle(ctx context.Context, ev event) (complete bool) {
	if r.before != nil {
		r.before()
	}
	if ev.ask != nil {
		if r.ui != nil {
			ev.answer <- r.ui.Elicit(ev.ask)
		} else {
			ev.answer <- r.elicit(ev.ask)
		}
		return false
	}
	u, ok := r.accept(ev.update)
	if !ok {
		return false
	}
	if r.ui != nil {
		return r.toUI(ctx, u)
	}
	if r.format == "ndjson" {
		fmt.Fprintf(r.out, "%s\n", ev.update)
	}
	return r.plain(ctx, u)
}

// accept reads an event and says whether it is to be shown: of this
// session, not shown before (a replay after a reconnect), and, when only
// this prompt's turn is followed, of that turn. It keeps which turn is
// this client's and which turns have ended.
func (r *renderer) accept(raw json.RawMessage) (protocol.SessionUpdate, bool) {
	u, err := protocol.ParseUpdate(raw)
	if err != nil || u.SessionID != r.sessionID || u.Seq <= r.lastSeq {
		return u, false
	}
	r.lastSeq = u.Seq
	switch e := u.Event.(type) {
	case protocol.InputUpdateEvent:
		if r.mineInput != "" && e.ClientMessageID == r.mineInput && u.TurnID != "" {
			r.mine = u.TurnID
		}
	case protocol.UserMessageEvent:
		if !e.Steered && r.c != nil && e.ClientID != "" && e.ClientID == r.c.Init.ClientID && r.mine == "" {
			r.mine = u.TurnID
		}
	case protocol.TurnCompleteEvent:
		if r.done == nil {
			r.done = map[string]*protocol.TurnCompleteEvent{}
		}
		r.done[u.TurnID] = &e
	}
	// Another client's turn, before this prompt's, is not shown.
	return u, !r.onlyMine || u.TurnID == "" || u.TurnID == r.mine
}

// toUI hands an event to the full-screen chat.
func (r *renderer) toUI(ctx context.Context, u protocol.SessionUpdate) bool {
	switch e := u.Event.(type) {
	case protocol.ApprovalRequestEvent:
		// Asked without holding up the events: another client may
		// answer first (approval_resolved then withdraws the ask).
		go func() {
			if decision, reason := r.ui.Approve(&e); decision != "" {
				r.answer(ctx, e.RequestID, decision, reason)
			}
		}()
	case protocol.TurnCompleteEvent:
		r.ui.Event(u)
		return true
	default:
		r.ui.Event(u)
	}
	return false
}

// plain shows an event as text: the reply on stdout, the rest on stderr.
func (r *renderer) plain(ctx context.Context, u protocol.SessionUpdate) bool {
	if _, ok := u.Event.(protocol.AgentThoughtChunkEvent); r.thinking && !ok {
		r.thinking = false
		r.note("\n")
	}
	switch e := u.Event.(type) {
	case protocol.AgentMessageChunkEvent:
		if r.format == "text" {
			io.WriteString(r.out, e.Text)
			r.midLine = !strings.HasSuffix(e.Text, "\n")
		}
	case protocol.AgentThoughtChunkEvent:
		if !r.thinking {
			r.endLine()
			r.thinking = true
		}
		if r.color {
			r.note("\x1b[2;3m%s\x1b[0m", e.Text)
		} else {
			r.note("%s", e.Text)
		}
	case protocol.ToolCallEvent:
		r.endLine()
		r.note("%s\n", plainStyle.toolCallLine(e, 120))
	case protocol.ToolResultEvent:
		r.note("%s\n", plainStyle.toolResultLine(e, 160))
	case protocol.PlanEvent:
		r.endLine()
		if e.Text != "" {
			r.note("── plan (%s) ──\n%s\n", e.Path, e.Text)
		} else if len(e.Entries) > 0 {
			r.note("%s\n", plainStyle.planLines(e.Entries))
		}
	case protocol.ApprovalRequestEvent:
		r.endLine()
		r.decide(ctx, e)
	case protocol.ApprovalResolvedEvent:
		if e.By == "timeout" {
			r.note("%s\n", timedOut)
		}
	case protocol.HookEvent, protocol.ProcessUpdateEvent, protocol.SubagentUpdateEvent, protocol.TurnResumedEvent,
		protocol.ScheduleUpdateEvent, protocol.GoalUpdateEvent, protocol.ApprovalReviewedEvent:
		if note := eventNote(e); note != "" {
			r.endLine()
			r.note("%s\n", note)
		}
	case protocol.ConfigUpdateEvent:
		me := ""
		if r.c != nil {
			me = r.c.Init.ClientID
		}
		if note := configNote(e, me); note != "" {
			r.endLine()
			r.note("%s\n", note)
		}
	case protocol.TurnCompleteEvent:
		r.endLine()
		return true
	case protocol.UndecodableEvent:
		r.endLine()
		r.note("(event %d could not be read: %s)\n", u.Seq, mdterm.Safe(e.Err))
	case protocol.ContextUsageEvent, protocol.UserMessageEvent, protocol.HistoryTrimmedEvent, protocol.RewindEvent,
		protocol.QueueUpdateEvent, protocol.ToolProgressEvent, protocol.InputUpdateEvent, protocol.TurnInterruptedEvent,
		protocol.UnknownEvent:
		// plainLeavesOut (a newer daemon's event too).
	}
	return false
}

// plainLeavesOut are the event types the line renderer does not show: the
// prompt is the person's own (sessions show writes it itself), and the
// context, the queue, a tool's progress, an input's fate, a rewind or a
// summary are state a line at a time has no place for. Every other type
// of protocol.Events has its case in plain (a test checks both).
var plainLeavesOut = []string{protocol.EventContextUsage, protocol.EventUserMessage, protocol.EventHistoryTrimmed, protocol.EventRewind,
	protocol.EventQueueUpdate, protocol.EventToolProgress, protocol.EventInputUpdate, protocol.EventTurnInterrupted}

// note writes to stderr in text mode (stdout stays the reply alone).
func (r *renderer) note(format string, args ...any) {
	if r.format == "text" {
		fmt.Fprintf(r.errw, format, args...)
	}
}

func (r *renderer) endLine() {
	if r.midLine && r.format == "text" {
		io.WriteString(r.out, "\n")
		r.midLine = false
	}
}

func (r *renderer) decide(ctx context.Context, u approval) {
	if u.Kind == protocol.KindPlan {
		r.decidePlan(ctx, u)
		return
	}
	decision := "reject_once"
	reason := ""
	switch r.approve {
	case "all":
		decision = "allow_once"
	case "none":
		reason = "the client was started with --approve none"
	default:
		if u.Rule != "" && strings.Contains(u.Rule, "permission rule") {
			fmt.Fprintf(r.errw, "(%s)\n", u.Rule)
		}
		for {
			who := ""
			if u.Subagent != nil {
				who = " (sub-agent: " + mdterm.Safe(u.Subagent.Description) + ")"
			}
			// Each "always" says its scope; the project's only where the
			// daemon offers it.
			always := " / [a]lways, this session"
			if offers(&u, protocol.DecisionAllowProject) {
				always += " / [p]roject: always, in this project"
			}
			line, err := r.answers.ReadLine(fmt.Sprintf("Allow %s%s? %s [y]es once%s / [n]o / [e]xplain: ", u.ToolName, who, u.Summary, always))
			ans := strings.ToLower(strings.TrimSpace(line))
			if err != nil && ans == "" {
				fmt.Fprintln(r.errw, "\n(no answer: stdin closed) rejected")
				reason = "no answer"
				break
			}
			switch ans {
			case "y", "yes":
				decision = "allow_once"
			case "a", "always":
				decision = protocol.DecisionAllowAlways
			case "p", "project":
				if !offers(&u, protocol.DecisionAllowProject) {
					continue
				}
				decision = protocol.DecisionAllowProject
			case "n", "no":
			case "e", "explain":
				fmt.Fprintf(r.errw, "  tool %s, call %s, input %s\n", u.ToolName, u.ToolCallID, compact(u.RawInput, 2000))
				continue
			default:
				continue
			}
			break
		}
		if decision != protocol.DecisionAllowOnce && decision != protocol.DecisionRejectOnce {
			fmt.Fprintf(r.errw, "(%s)\n", answerSaid(decision, u.ToolName, u.Kind))
		}
	}
	r.answer(ctx, u.RequestID, decision, reason)
}

// answer sends the decision off this goroutine: the reply needs the
// connection's read loop, which may be waiting for us to take the next
// event.
func (r *renderer) answer(ctx context.Context, requestID, decision, reason string) {
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r.c.Approve(cctx, protocol.SessionApproveParams{
			SessionID: r.sessionID, RequestID: requestID, Decision: decision, Reason: reason})
	}()
}

// elicit answers a question (ask_user, poll, an MCP server's form) from
// the answers stream, a field at a time.
func (r *renderer) elicit(p *protocol.ElicitationParams) protocol.ElicitationResult {
	r.endLine()
	if p.Mode == "url" {
		// An MCP server sends the person to a page: say where, and
		// whether they went.
		fmt.Fprintf(r.errw, "? %s\n  open: %s\n", mdterm.SafeLines(p.Message), mdterm.Safe(p.URL))
		line, _ := r.answers.ReadLine("done there? [y]es / [n]o: ")
		if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
			return protocol.ElicitationResult{Action: "accept"}
		}
		return protocol.ElicitationResult{Action: "decline"}
	}
	// What a server wrote is shown as text, never as the terminal's
	// control sequences.
	fmt.Fprintf(r.errw, "? %s\n", mdterm.SafeLines(p.Message))
	f, err := form.Parse(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(r.errw, "  (this question cannot be answered here: %v; declined)\n", err)
		return protocol.ElicitationResult{Action: form.Decline}
	}
	action, content := f.Ask(p.Message, func(s string) { fmt.Fprintln(r.errw, mdterm.Safe(s)) },
		func(prompt string) (string, error) { return r.answers.ReadLine(mdterm.Safe(prompt)) })
	if action != form.Accept {
		return protocol.ElicitationResult{Action: action}
	}
	b, _ := json.Marshal(content)
	return protocol.ElicitationResult{Action: action, Content: b}
}

// compact is raw JSON on one line as a person reads it (no \u0026 for
// &), cut at max bytes on a character boundary.
func compact(raw json.RawMessage, max int) string {
	s := string(protocol.CompactJSON(raw))
	for _, esc := range [][2]string{{`\u0026`, "&"}, {`\u003c`, "<"}, {`\u003e`, ">"}} {
		s = unescape(s, esc[0], esc[1])
	}
	return cut(strings.Join(strings.Fields(s), " "), max)
}

// unescape replaces the escape esc by r where its backslash is not itself
// escaped.
func unescape(s, esc, r string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, esc)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		n := 0
		for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
			n++
		}
		b.WriteString(s[:i])
		if n%2 == 0 {
			b.WriteString(r)
		} else {
			b.WriteString(esc)
		}
		s = s[i+len(esc):]
	}
}

// cut shortens s to at most max bytes, on a character boundary.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// toolLine says what a tool call does in one line, by its kind (the
// daemon's): the command of one that executes, the pattern of a search,
// the path of a read or an edit, else its input.
func toolLine(kind string, raw json.RawMessage, max int) string {
	var in struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		Pattern string `json:"pattern"`
	}
	json.Unmarshal(raw, &in)
	switch {
	case kind == protocol.KindExecute && in.Command != "":
		return "$ " + cut(strings.Join(strings.Fields(in.Command), " "), max)
	case kind == protocol.KindSearch && in.Pattern != "":
		return cut(fmt.Sprintf("%q in %s", in.Pattern, cmp.Or(in.Path, ".")), max)
	case in.Path != "" && (kind == protocol.KindRead || kind == protocol.KindEdit):
		return cut(in.Path, max)
	}
	return compact(raw, max)
}

func firstLines(s string, n, width int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	more := ""
	if len(lines) > n {
		more = fmt.Sprintf(" (+%d lines)", len(lines)-n)
		lines = lines[:n]
	}
	for i, l := range lines {
		lines[i] = cut(l, width)
	}
	return strings.Join(lines, "\n    ") + more
}

// connect dials the daemon, starting one unless noStart.
func connect(ctx context.Context, env console.Env, configDir string, noStart bool, o client.Options) (*client.Client, error) {
	dirs, err := resolve(env, configDir)
	if err != nil {
		return nil, err
	}
	var c *client.Client
	if noStart {
		c, err = client.Dial(ctx, dirs.Endpoint, o)
	} else {
		c, err = client.DialOrStart(ctx, dirs.Endpoint, o, client.StartOptions{
			ConfigDir: dirs.ConfigDir, DataDir: dirs.DataDir, Env: env.Environ})
	}
	if errors.Is(err, client.ErrNoDaemon) {
		return nil, fmt.Errorf("%w; start one with 'zeroclaw daemon' (or drop --no-start)", err)
	}
	return c, err
}

// lines reads answers (and, in chat, prompts) line by line.
type lines interface {
	// ReadLine shows prompt and reads one line, without its newline.
	ReadLine(prompt string) (string, error)
}

// plainLines reads lines from a stream that is not a terminal; prompts go
// to w.
type plainLines struct {
	br *bufio.Reader
	w  io.Writer
	// echo writes the answer after its question, as a terminal would
	// have shown it, when stdin is not a terminal.
	echo bool
}

func (p *plainLines) ReadLine(prompt string) (string, error) {
	if prompt != "" {
		io.WriteString(p.w, prompt)
	}
	line, err := p.br.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if p.echo && prompt != "" {
		fmt.Fprintln(p.w, line)
	}
	return line, nil
}

// conversation is a client's hold on one session: the connection, the
// renderer and the reconnect logic, shared by prompt and chat.
type conversation struct {
	env       console.Env
	configDir string
	noStart   bool
	name      string // client name
	caps      *protocol.ClientCapabilities
	events    chan event
	c         *client.Client
	r         *renderer

	mu sync.Mutex
	// mentions are the MCP resources a prompt may mention, by mention
	// (@SERVER:URI): each one mentioned is attached.
	mentions map[string]protocol.ResourceRef
	// onMCP is told when the session's MCP offers may have changed
	// (session/mcpChanged).
	onMCP func(sessionID string)
}

// mcpChanged is told that what a session's MCP servers offer may have
// changed.
func (cv *conversation) mcpChanged(sid string) {
	cv.mu.Lock()
	f := cv.onMCP
	cv.mu.Unlock()
	if f != nil {
		f(sid)
	}
}

// mentionable sets the resources a prompt may mention.
func (cv *conversation) mentionable(refs map[string]protocol.ResourceRef) {
	cv.mu.Lock()
	cv.mentions = refs
	cv.mu.Unlock()
}

// mentioned are the resources text mentions, as attachments (each once,
// in the order mentioned); a word that names no resource stays text.
func (cv *conversation) mentioned(text string) []protocol.Attachment {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	var out []protocol.Attachment
	seen := map[string]bool{}
	for _, w := range strings.Fields(text) {
		w = strings.TrimRight(w, ".,;:!?)")
		if ref, ok := cv.mentions[w]; ok && !seen[w] {
			seen[w] = true
			out = append(out, protocol.Attachment{Resource: &ref})
		}
	}
	return out
}

func (cv *conversation) dial(ctx context.Context, clientID string) (*client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return connect(dctx, cv.env, cv.configDir, cv.noStart, client.Options{ClientID: clientID,
		ClientInfo: protocol.ClientInfo{Name: cv.name, Version: Version}, Capabilities: cv.caps, Handler: handler(cv.events, cv.mcpChanged)})
}

// reconnect dials the daemon again (keeping the client id), replaces the
// connection and, when sid is set, attaches that session again.
func (cv *conversation) reconnect(ctx context.Context, sid string) (*protocol.SessionNewResult, error) {
	nc, err := cv.dial(ctx, cv.c.Init.ClientID)
	if err != nil {
		return nil, fmt.Errorf("reconnect: %w", err)
	}
	cv.c.Close()
	cv.c, cv.r.c = nc, nc
	if sid == "" {
		return &protocol.SessionNewResult{}, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	again, err := nc.NewSession(rctx, protocol.SessionNewParams{SessionID: sid, KeepSiblings: true})
	if err != nil {
		return nil, fmt.Errorf("reattach: %w", err)
	}
	return again, nil
}

// open attaches to (or creates) a session.
func (cv *conversation) open(ctx context.Context, p protocol.SessionNewParams) (*protocol.SessionNewResult, error) {
	ns, err := cv.c.NewSession(ctx, p)
	if err != nil {
		return nil, err
	}
	cv.r.sessionID, cv.r.lastSeq, cv.r.c = ns.SessionID, ns.LastSeq, cv.c
	return ns, nil
}

// turn runs one prompt to its end, rendering its stream. Ctrl-C (sigs)
// cancels the turn; a second one returns exit code 130 at once. A dropped
// connection is redialled, reattached and replayed from the last seq.
func (cv *conversation) turn(ctx context.Context, text string, sigs <-chan os.Signal) (protocol.SessionPromptResult, error) {
	r := cv.r
	// The prompt has an id: sent again after a reconnect, the daemon
	// runs it only if it never took it, else answers with its result
	// (or, while it runs, says so: then its result is awaited).
	t := &promptRun{cv: cv, sid: r.sessionID, text: text, cmid: protocol.NewID("cm_", 8), results: make(chan promptAnswer, 4)}
	r.mine, r.mineInput, r.done = "", t.cmid, map[string]*protocol.TurnCompleteEvent{}
	t.send(cv.c)
	interrupted := false
	for !t.finished() {
		select {
		case ev := <-cv.events:
			t.handle(ctx, ev)
		case a := <-t.results:
			if a.c != cv.c {
				continue // a connection already replaced
			}
			switch {
			case errors.Is(a.err, jsonrpc.ErrClosed):
				// Reconnected, the turn may have completed meanwhile (seen
				// in the replay): then its turn_complete is the answer
				// (below), as when the connection's end is seen first.
				if err := t.lost(ctx); err != nil {
					return t.res, err
				}
			case a.err != nil:
				return t.res, a.err
			default:
				t.res, t.gotResult = a.res, true
			}
		case sig := <-sigs:
			if interrupted {
				return t.res, console.Exitf(exitCancelled, "")
			}
			interrupted = true
			if sig == escapeKey {
				// A second Esc does not quit: nothing to tell.
				fmt.Fprintln(cv.env.Stderr, "\n(cancelling)")
			} else {
				fmt.Fprintln(cv.env.Stderr, "\n(cancelling; Ctrl-C again to quit)")
			}
			go cv.c.Cancel(ctx, t.sid)
		case <-cv.c.Done():
			if t.gotResult {
				r.done[t.res.TurnID] = &protocol.TurnCompleteEvent{} // the answer came: what is missing is gone with the connection
				continue
			}
			if err := t.lost(ctx); err != nil {
				return t.res, err
			}
		}
		if t.complete && !t.gotResult && t.reconnected {
			// After a reconnect the turn_complete is the answer.
			last := r.done[r.mine]
			t.res = protocol.SessionPromptResult{SessionID: t.sid, TurnID: r.mine, StopReason: last.StopReason, Content: last.Content, Error: last.Error, Notice: last.Notice}
			t.gotResult = true
		}
	}
	return t.res, nil
}

// promptRun is one prompt that turn runs: what it sends, and what is
// known of its answer and its turn so far.
type promptRun struct {
	cv        *conversation
	sid, text string
	cmid      string // the prompt's id, the same each time it is sent
	results   chan promptAnswer

	res         protocol.SessionPromptResult
	gotResult   bool // the prompt's answer came (res)
	complete    bool // the prompt's own turn was seen to complete
	reconnected bool
}

// promptAnswer is a prompt call's answer, with the connection it came
// on: an old connection's end is not the current one's.
type promptAnswer struct {
	c   *client.Client
	res protocol.SessionPromptResult
	err error
}

// send sends the prompt on c, from a goroutine of its own: its answer
// comes on results (a prompt the daemon took before is awaited).
func (t *promptRun) send(c *client.Client) {
	go func() {
		var res protocol.SessionPromptResult
		p, err := c.Prompt(context.Background(), protocol.SessionPromptParams{SessionID: t.sid, Prompt: &t.text, Attachments: t.cv.mentioned(t.text), ClientMessageID: t.cmid})
		if err == nil && p.Duplicate && p.StopReason == "" {
			p, err = c.Await(context.Background(), t.sid, t.cmid)
		}
		if p != nil {
			res = *p
		}
		t.results <- promptAnswer{c, res, err}
	}()
}

// finished says whether the prompt's answer came and its turn's
// turn_complete was shown (the turn that another client's prompt started
// before this one ends first, and is not this one's end). An answer with
// no turn (the prompt was removed from the queue) has no events.
func (t *promptRun) finished() bool {
	r := t.cv.r
	return t.gotResult && (t.res.TurnID == "" || r.done[t.res.TurnID] != nil)
}

// handle renders an event and notes whether it completed the prompt's
// own turn.
func (t *promptRun) handle(ctx context.Context, ev event) {
	r := t.cv.r
	r.handle(ctx, ev)
	t.complete = r.mine != "" && r.done[r.mine] != nil
}

// lost takes a dropped connection: the daemon is dialled again (a few
// tries), the session reattached, the events missed replayed, and the
// prompt sent again unless its turn completed meanwhile.
func (t *promptRun) lost(ctx context.Context) error {
	cv, r := t.cv, t.cv.r
	fmt.Fprintln(cv.env.Stderr, "\n(connection to the daemon lost; reconnecting)")
	// A daemon that died is started again on demand; while it
	// starts (or another client starts it), a few tries.
	again, err := cv.reconnect(ctx, t.sid)
	for try := 1; err != nil && try < 20; try++ {
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		again, err = cv.reconnect(ctx, t.sid)
	}
	if err != nil {
		return err
	}
	nc := cv.c
	t.reconnected = true
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := nc.Replay(rctx, t.sid, r.lastSeq, 0, func(e json.RawMessage, _ protocol.SessionUpdate) error {
		t.handle(ctx, event{update: e})
		return nil
	}); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if !t.complete && again.Interrupted {
		return fmt.Errorf("the daemon stopped during the turn; it was interrupted (session %s)", t.sid)
	}
	if !t.complete {
		t.send(nc) // under its id: never run twice
	}
	return nil
}

// exitFor maps a turn's stop reason to the command's exit.
func exitFor(res protocol.SessionPromptResult, text bool, errw io.Writer) error {
	switch res.StopReason {
	case "end_turn":
		return nil
	case "max_tokens":
		// The reply is cut short: said, and not a success.
		if text {
			fmt.Fprintln(errw, "("+cutNotice(res)+")")
			return console.Exitf(exitMaxTokens, "")
		}
		return console.Exitf(exitMaxTokens, "%s", cutNotice(res))
	case "cancelled":
		return console.Exitf(exitCancelled, "")
	case "max_turn_requests":
		return console.Exitf(exitMaxTurnRequests, "the turn used all its model calls (max_turn_requests) before finishing")
	case "refusal":
		return console.Exitf(exitRefusal, "the model refused")
	case "blocked":
		return console.Exitf(exitTurnError, "%s", cmpOr(res.Notice, "a hook refused the prompt"))
	case "budget":
		if res.Notice != "" {
			return console.Exitf(exitBudget, "%s", res.Notice)
		}
		return console.Exitf(exitBudget, "a spending limit ([budget] in config.toml) is reached")
	}
	msg := "the turn failed"
	if res.Error != nil {
		msg += ": " + res.Error.Message
	}
	return console.Exitf(exitTurnError, "%s", msg)
}

// PromptOptions are zeroclaw prompt's.
type PromptOptions struct {
	ConfigDir, Agent, SessionID string
	Cwd                         string // absolute
	Approve                     string // ask | all | none
	Format                      string // text | json | ndjson
	NoStart                     bool
	Model                       string // "": the session's
	// Text is the prompt; "-" reads it from stdin (which then answers
	// no question).
	Text string
}

// Prompt is zeroclaw prompt: one turn, the reply on stdout, notes,
// approvals and questions on stderr; the error carries the exit code.
func Prompt(ctx context.Context, env console.Env, o PromptOptions) error {
	var answers lines = &plainLines{br: bufio.NewReader(env.Stdin), w: env.Stderr, echo: !console.IsTerminal(env.Stdin)}
	caps := &protocol.ClientCapabilities{Elicitation: &protocol.Elicitation{Form: &struct{}{}, URL: &struct{}{}}}
	text := o.Text
	if text == "-" {
		b, err := io.ReadAll(env.Stdin)
		if err != nil {
			return err
		}
		text = strings.TrimSuffix(string(b), "\n")
		if strings.TrimSpace(text) == "" {
			return console.Exitf(2, "no prompt: give it as words, or on stdin")
		}
		// stdin is spent: nothing can be answered.
		answers = &plainLines{br: bufio.NewReader(strings.NewReader("")), w: env.Stderr}
		caps = &protocol.ClientCapabilities{}
	}
	cv := &conversation{env: env, configDir: o.ConfigDir, noStart: o.NoStart, name: "zeroclaw-prompt", caps: caps,
		events: make(chan event, 1024)}
	cv.r = &renderer{out: env.Stdout, errw: env.Stderr, format: o.Format, approve: o.Approve, answers: answers, onlyMine: true,
		color: console.IsTerminal(env.Stderr) && console.UseColor(env)}
	c, err := cv.dial(ctx, "")
	if err != nil {
		return err
	}
	cv.c = c
	defer func() { cv.c.Close() }()
	if _, err := cv.open(ctx, protocol.SessionNewParams{
		AgentAlias: o.Agent, Cwd: o.Cwd, SessionID: o.SessionID, Mode: "code", KeepSiblings: true}); err != nil {
		return err
	}
	if o.Model != "" {
		if _, err := cv.c.Configure(ctx, protocol.SessionConfigureParams{SessionID: cv.r.sessionID, Model: &o.Model}); err != nil {
			return fmt.Errorf("--model: %w", err)
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT)
	defer signal.Stop(sigs)
	res, err := cv.turn(ctx, text, sigs)
	if err != nil {
		return err
	}
	switch o.Format {
	case "json":
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	case "ndjson":
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			protocol.SessionPromptResult
		}{"prompt_result", res})
		fmt.Fprintln(env.Stdout, string(b))
	}
	return exitFor(res, o.Format == "text", env.Stderr)
}

// Show writes a stored session as text, as it was seen: the prompts, the
// replies and thoughts, the tools and what they gave, the approvals
// asked (answered then). It streams the replay, so a session of any size
// shows in bounded memory.
func Show(ctx context.Context, c *client.Client, id string, w io.Writer) error {
	r := &renderer{out: w, errw: w, format: "text", sessionID: id}
	_, err := c.Replay(ctx, id, 0, 0, func(e json.RawMessage, u protocol.SessionUpdate) error {
		switch ev := u.Event.(type) {
		case protocol.UserMessageEvent:
			r.endLine()
			fmt.Fprintf(w, "> %s\n", ev.Text)
		case protocol.ApprovalRequestEvent: // history: nothing to answer
			r.lastSeq = u.Seq
			fmt.Fprintf(w, "  (approval asked: %s)\n", ev.Summary)
			return nil
		}
		r.handle(ctx, event{update: e})
		return nil
	})
	if err != nil {
		return err
	}
	r.endLine()
	return nil
}

// cutNotice says why a reply stopped at max_tokens: the daemon's notice
// (the limit and the key that raises it), else plainly.
func cutNotice(res protocol.SessionPromptResult) string {
	if res.Notice != "" {
		return res.Notice
	}
	return "the reply was cut at the model's token limit"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// decidePlan answers the plan mode's end: proceed (asking, or accepting
// edits) or keep planning, with what to change (sent as feedback).
func (r *renderer) decidePlan(ctx context.Context, u approval) {
	decision, feedback := protocol.DecisionKeepPlanning, ""
	switch r.approve {
	case "all":
		decision = protocol.DecisionProceedAsk
	case "none":
	default:
		for {
			line, err := r.answers.ReadLine("Proceed with this plan? [y]es, asking / [a]ccept edits / [n]o, keep planning: ")
			ans := strings.ToLower(strings.TrimSpace(line))
			if err != nil && ans == "" {
				fmt.Fprintln(r.errw, "\n(no answer: stdin closed) planning goes on")
				break
			}
			switch ans {
			case "y", "yes":
				decision = protocol.DecisionProceedAsk
			case "a", "accept":
				decision = protocol.DecisionProceedEdits
			case "n", "no":
				fb, _ := r.answers.ReadLine("What should change? (Enter: nothing more) ")
				feedback = strings.TrimSpace(fb)
			default:
				continue
			}
			break
		}
	}
	go func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r.c.Approve(cctx, protocol.SessionApproveParams{SessionID: r.sessionID, RequestID: u.RequestID, Decision: decision, Feedback: feedback})
	}()
}
