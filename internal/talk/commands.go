package talk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/mdterm"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// chatCommand is one /command of the chat: the one place its names, its
// help, what it does and when it may run come from (dispatch, /help,
// Tab completion and the rules while a turn runs).
type chatCommand struct {
	names []string // the first is the name; the others mean the same
	args  string   // its arguments, as /help shows them
	help  string   // what it does (lines after the first are indented)
	// local: it needs no daemon (it runs even while none answers).
	local bool
	// busy is what it does while a turn runs (the terminal chat):
	// queued behind the turn unless it says otherwise.
	busy busyRule
	run  func(ch *chat, ctx context.Context, word, arg string) error
}

// busyRule says what a command typed while a turn runs does.
type busyRule int

const (
	busyQueue  busyRule = iota // waits for the turn to end, as a prompt does
	busyBeside                 // runs at once, beside the turn
	busyCancel                 // cancels the turn
	busyQuit                   // leaves
	busyHelp                   // shows the help
)

// errQuit: the person leaves.
var errQuit = errors.New("quit")

// chatCommands are the chat's commands, in the order /help lists them
// (set in init: /help shows the table); slashWords, what Tab completes
// after a /: their names, sorted.
var (
	chatCommands []chatCommand
	slashWords   []string
)

func init() {
	chatCommands = []chatCommand{
		{names: []string{"/new", "/clear"}, help: "start a new session (the old one stays: /resume)",
			run: func(ch *chat, ctx context.Context, _, _ string) error { return ch.open(ctx, "") }},
		{names: []string{"/sessions"}, help: "list recent sessions", run: (*chat).sessions},
		{names: []string{"/resume"}, args: "[ID]", help: "continue a session: without an id pick one from a list;\nan id prefix resumes the one session it matches",
			run: func(ch *chat, ctx context.Context, _, arg string) error { ch.resume(ctx, arg); return nil }},
		{names: []string{"/cancel"}, help: "cancel the running turn (Esc or Ctrl-C do it too)", busy: busyCancel, run: (*chat).cancel},
		{names: []string{"/compact"}, help: "summarise earlier turns out of the model's view (the history keeps them)", run: (*chat).compact},
		{names: []string{"/model"}, args: "[M]", help: "show the session's model, or switch it to M (see zeroclaw models)", run: (*chat).model},
		{names: []string{"/mode"}, args: "[NAME]", help: "show the mode, or switch it: read-only, plan, ask, accept edits, full\n(Shift-Tab cycles ask, accept edits, plan)", busy: busyBeside, run: (*chat).mode},
		{names: []string{"/reasoning"}, args: "[L]", help: "show the session's reasoning level, or set it: off, low, medium, high", run: (*chat).reasoning},
		{names: []string{"/undo"}, help: "undo the last turn: its files and its place in the conversation (asks first)",
			run: func(ch *chat, ctx context.Context, word, arg string) error { ch.rewind(ctx, word, arg); return nil }},
		{names: []string{"/rewind"}, args: "[N]", help: "list the turns and what each changed, or go back to before turn N (asks first)",
			run: func(ch *chat, ctx context.Context, word, arg string) error { ch.rewind(ctx, word, arg); return nil }},
		{names: []string{"/diff"}, args: "[N]", help: "what turn N (or the whole session) changed in the files", run: (*chat).diff},
		{names: []string{"/fork"}, help: "continue in a new session from this conversation (this one stays)", run: (*chat).fork},
		{names: []string{"/export"}, args: "[F]", help: "write the session to F (.md, .json or .html; default zeroclaw-ID.md)",
			run: func(ch *chat, ctx context.Context, _, arg string) error {
				ch.export(ctx, ch.cv.r.sessionID, arg)
				return nil
			}},
		{names: []string{"/steer"}, args: "TEXT", help: "send TEXT to the running turn (it joins at the model's next call)", busy: busyBeside, run: (*chat).steer},
		{names: []string{"/queue"}, args: "[rm N | clear]", help: "list the prompts waiting behind the running turn, or remove them", busy: busyBeside, run: (*chat).queue},
		{names: []string{"/tasks"}, help: "the session's sub-agents (zeroclaw chat --session ID follows one)", busy: busyBeside, run: (*chat).tasks},
		{names: []string{"/goal"}, args: "[OBJECTIVE [--budget $N] [--keep] | pause | resume | clear [--keep]]", help: "the session's goal: it works toward it turn after turn, within its budget", busy: busyBeside, run: (*chat).goal},
		{names: []string{"/schedule"}, args: "[every D | at T | \"CRON\"] PROMPT", help: "the schedules that run in this session, or add one\n(/schedule run|pause|resume|rm ID)", busy: busyBeside, run: (*chat).schedule},
		{names: []string{"/ps"}, help: "the session's background processes", busy: busyBeside, run: (*chat).ps},
		{names: []string{"/logs"}, args: "[ID]", help: "a background process's output, followed until it ends\n(/logs alone stops following; an id's start is enough)", busy: busyBeside, run: (*chat).logs},
		{names: []string{"/kill"}, args: "ID", help: "stop a background process (TERM, then KILL after 2 s)", busy: busyBeside, run: (*chat).kill},
		{names: []string{"/status"}, help: "the daemon's status", run: (*chat).status},
		{names: []string{"/help"}, help: "this list", local: true, busy: busyHelp,
			run: func(ch *chat, _ context.Context, _, _ string) error { ch.say(chatHelp()); return nil }},
		{names: []string{"/quit", "/exit"}, help: "leave (Ctrl-D on an empty line too)", local: true, busy: busyQuit,
			run: func(*chat, context.Context, string, string) error { return errQuit }},
	}
	slashWords = commandNames()
}

// lookupCommand finds a command by any of its names.
func lookupCommand(word string) *chatCommand {
	for i := range chatCommands {
		if slices.Contains(chatCommands[i].names, word) {
			return &chatCommands[i]
		}
	}
	return nil
}

// commandNames are what Tab completes after a /, sorted.
func commandNames() []string {
	var out []string
	for _, c := range chatCommands {
		out = append(out, c.names...)
	}
	slices.Sort(out)
	return out
}

// chatHelp is /help: the commands, then what else a line and a key do.
func chatHelp() string {
	var b strings.Builder
	b.WriteString("commands:\n")
	for _, c := range chatCommands {
		left := strings.Join(c.names, ", ")
		if c.args != "" {
			left += " " + c.args
		}
		lines := strings.Split(c.help, "\n")
		if len(left) <= 16 {
			fmt.Fprintf(&b, "  %-16s %s\n", left, lines[0])
		} else {
			fmt.Fprintf(&b, "  %s  %s\n", left, lines[0])
		}
		for _, l := range lines[1:] {
			fmt.Fprintf(&b, "  %-16s %s\n", "", l)
		}
	}
	b.WriteString(chatHelpMore)
	return b.String()
}

const chatHelpMore = `/mcp__SERVER__PROMPT args  an MCP server's prompt (args: name=value, or in order)
@SERVER:URI      in a prompt, attaches that MCP server's resource
anything else is a prompt; start it with // to send a literal /.
keys: Enter sends, Alt-Enter (or a trailing \) adds a line, a paste is one
prompt, Up/Down walk the history, Tab completes a /command (an MCP
server's prompts too) and an @ mention of a resource; Esc or Ctrl-C
cancel a turn, and what you type meanwhile is queued; Ctrl-S sends what
you typed to the running turn (yours or another client's) as a steer;
Ctrl-C twice on an empty prompt (or Ctrl-D) leaves.
other clients on the session: their prompts (labelled with their name and
id), replies and approvals show as they come; the first answer to an
approval wins.
approvals: y once; for the rest of this session only: c this command or
input, a every call of the tool; in this project, stored for later
sessions too (zeroclaw permissions lists and revokes them): p this
command or input, P every call of the tool; n no; e explain.`

func (ch *chat) sessions(ctx context.Context, _, _ string) error {
	page, err := ch.cv.c.List(ctx, protocol.SessionListParams{Limit: 20})
	if err != nil {
		return err
	}
	for _, s := range page.Sessions {
		mark := " "
		if s.SessionID == ch.cv.r.sessionID {
			mark = "*"
		}
		ch.say(fmt.Sprintf("%s %s  %s  %-11s %s", mark, s.SessionID, time.UnixMilli(s.UpdatedMs).Format("01-02 15:04"), s.State, s.Title))
	}
	return nil
}

func (ch *chat) cancel(ctx context.Context, _, _ string) error {
	if cancelled, _ := ch.cv.c.Cancel(ctx, ch.cv.r.sessionID); !cancelled {
		ch.note("nothing is running")
	}
	return nil
}

func (ch *chat) model(ctx context.Context, _, arg string) error {
	params := protocol.SessionConfigureParams{SessionID: ch.cv.r.sessionID}
	if arg != "" {
		params.Model = &arg
	}
	cr, err := ch.cv.c.Configure(ctx, params)
	if err != nil {
		return err
	}
	ch.mu.Lock()
	ch.ns.Model = cr.Model
	ch.tokens[1] = cr.ContextWindow
	ch.mu.Unlock()
	ch.say(fmt.Sprintf("model %s on %s (%s, %s), context window %d tokens", cr.Model, cr.Provider, cr.ProviderKind, cr.URL, cr.ContextWindow))
	return nil
}

func (ch *chat) reasoning(ctx context.Context, _, arg string) error {
	params := protocol.SessionConfigureParams{SessionID: ch.cv.r.sessionID}
	if arg != "" {
		params.Reasoning = &arg
	}
	cr, err := ch.cv.c.Configure(ctx, params)
	if err != nil {
		return err
	}
	level := cr.Reasoning
	if level == "" {
		level = "the provider's (none set)"
	}
	ch.say("reasoning: " + level)
	return nil
}

func (ch *chat) compact(ctx context.Context, _, _ string) error {
	cr, err := ch.cv.c.Compact(ctx, ch.cv.r.sessionID)
	if err != nil {
		return err
	}
	ch.say(fmt.Sprintf("compacted: %d earlier message(s) summarised out of the model's view (the history keeps them)", cr.DroppedMessages))
	return nil
}

func (ch *chat) diff(ctx context.Context, _, arg string) error {
	p := protocol.SessionDiffParams{SessionID: ch.cv.r.sessionID}
	if arg != "" {
		n, err := strconv.Atoi(arg)
		if err != nil {
			ch.note("/diff N: N is a turn number (/rewind lists them)")
			return nil
		}
		p.Turn = n
	}
	var res protocol.SessionDiffResult
	if err := ch.cv.c.Call(ctx, protocol.MethodSessionDiff, p, &res); err != nil {
		return err
	}
	if res.Diff == "" {
		ch.say("no changes to the files")
		return nil
	}
	lines := strings.Split(strings.TrimRight(res.Diff, "\n"), "\n")
	for i, l := range lines {
		lines[i] = mdterm.Safe(l)
	}
	ch.say(strings.Join(lines, "\n"))
	return nil
}

func (ch *chat) fork(ctx context.Context, _, _ string) error {
	sid := ch.cv.r.sessionID
	var res protocol.SessionForkResult
	if err := ch.cv.c.Call(ctx, protocol.MethodSessionFork, protocol.SessionForkParams{SessionID: sid}, &res); err != nil {
		return err
	}
	if err := ch.open(ctx, res.SessionID); err != nil {
		return err
	}
	ch.say(fmt.Sprintf("forked: this is %s now; %s stays as it was (/resume %s)", res.SessionID, sid, sid))
	return nil
}

func (ch *chat) steer(ctx context.Context, _, arg string) error {
	if arg == "" {
		ch.note("/steer TEXT: the text for the running turn")
		return nil
	}
	var res protocol.SessionSteerResult
	if err := ch.cv.c.Call(ctx, protocol.MethodSessionSteer, protocol.SessionSteerParams{SessionID: ch.cv.r.sessionID, Prompt: &arg}, &res); err != nil {
		return err
	}
	if res.Outcome == protocol.SteerInjected {
		ch.say("(steered: the agent sees it at its next model call)")
	} else {
		ch.say("(no turn is running: send it as a prompt)")
	}
	return nil
}

func (ch *chat) queue(ctx context.Context, _, arg string) error {
	c, sid := ch.cv.c, ch.cv.r.sessionID
	var res protocol.SessionQueueResult
	var err error
	switch {
	case arg == "clear":
		err = c.Call(ctx, protocol.MethodSessionQueueClear, protocol.SessionRef{SessionID: sid}, &res)
	case strings.HasPrefix(arg, "rm "):
		var q protocol.SessionQueueResult
		if err = c.Call(ctx, protocol.MethodSessionQueue, protocol.SessionRef{SessionID: sid}, &q); err == nil {
			n, aerr := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(arg, "rm ")))
			if aerr != nil || n < 1 || n > len(q.Items) {
				ch.note(fmt.Sprintf("/queue rm N: N from 1 to %d", len(q.Items)))
				return nil
			}
			err = c.Call(ctx, protocol.MethodSessionQueueRemove, protocol.SessionQueueRemoveParams{SessionID: sid, ID: q.Items[n-1].ID}, &res)
		}
	default:
		err = c.Call(ctx, protocol.MethodSessionQueue, protocol.SessionRef{SessionID: sid}, &res)
	}
	if err != nil {
		return err
	}
	if res.Removed > 0 {
		ch.say(fmt.Sprintf("removed %d queued prompt(s)", res.Removed))
	}
	if len(res.Items) == 0 {
		ch.say("the queue is empty")
	}
	for i, it := range res.Items {
		ch.say(fmt.Sprintf("%2d) %s  %s", i+1, time.UnixMilli(it.QueuedMs).Format("15:04:05"), cut(it.Text, 60)))
	}
	return nil
}

func (ch *chat) status(ctx context.Context, _, _ string) error {
	st, err := ch.cv.c.Status(ctx)
	if err != nil {
		return err
	}
	ch.say(fmt.Sprintf("daemon %s pid %d · provider %s · %d client(s) · %d live session(s) · session %s",
		st.ServerVersion, st.PID, st.Provider, st.Clients, st.ActiveSessions, ch.cv.r.sessionID))
	return nil
}
