package talk

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/mdterm"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// eventStyle is how a view dresses the lines of the one event formatter
// below: the plain renderer (prompt, piped chat) and the terminal chat
// show the same events with the same words, each in its own dress.
type eventStyle struct {
	tool, ok, bad, dim func(string) string
	safe               func(string) string // makes model and tool text safe for the terminal
	okMark, badMark    string
	boxes              [3]string // a plan entry pending, in progress, completed
}

func same(s string) string { return s }

// plainStyle: no colour, ASCII boxes, text as it came.
var plainStyle = eventStyle{tool: same, ok: same, bad: same, dim: same, safe: same,
	okMark: "→", badMark: "✗", boxes: [3]string{"[ ]", "[~]", "[x]"}}

// tuiStyle: the chat's colours (when it may use them), Unicode boxes,
// escape bytes shown, never sent.
func (ch *chat) tuiStyle() eventStyle {
	return eventStyle{
		tool: func(s string) string { return ch.sgr("\x1b[33m", s) },
		ok:   func(s string) string { return ch.sgr("\x1b[32m", s) },
		bad:  func(s string) string { return ch.sgr("\x1b[31m", s) },
		dim:  ch.dim, safe: mdterm.Safe,
		okMark: "✓", badMark: "✗", boxes: [3]string{"☐", "◐", "☑"},
	}
}

// toolCallLine: the tool's name and what the call is about (toolLine).
func (st eventStyle) toolCallLine(e protocol.ToolCallEvent, width int) string {
	return st.tool("⚙ "+e.Name) + " " + st.safe(toolLine(e.Kind, e.RawInput, width))
}

// toolResultLine: a mark for success or failure and the output's first
// lines.
func (st eventStyle) toolResultLine(e protocol.ToolResultEvent, width int) string {
	mark := st.ok("  " + st.okMark + " ")
	if e.IsError {
		mark = st.bad("  " + st.badMark + " ")
	}
	return mark + st.dim(st.safe(firstLines(e.RawOutput, 3, width)))
}

// planLines: one line per entry, its box saying how far it is.
func (st eventStyle) planLines(entries []protocol.PlanEntry) string {
	var b strings.Builder
	for _, e := range entries {
		box := st.boxes[0]
		switch e.Status {
		case "in_progress":
			box = st.boxes[1]
		case "completed":
			box = st.boxes[2]
		}
		fmt.Fprintf(&b, "%s %s\n", box, st.safe(e.Content))
	}
	return strings.TrimRight(b.String(), "\n")
}

// eventNote is the line an event said as a note of its own shows (the
// line renderer writes it as it is): "" for a hook that passed, which
// is not said.
func eventNote(ev protocol.EventBody) string {
	switch e := ev.(type) {
	case protocol.HookEvent:
		if e.Outcome != "ok" {
			return hookNote(e)
		}
	case protocol.ProcessUpdateEvent:
		return processNote(e)
	case protocol.SubagentUpdateEvent:
		return subagentNote(e)
	case protocol.TurnResumedEvent:
		return resumedNote(e)
	case protocol.ScheduleUpdateEvent:
		return scheduleNote(e)
	case protocol.GoalUpdateEvent:
		return goalNote(e)
	case protocol.ApprovalReviewedEvent:
		return reviewNote(e)
	}
	return ""
}

// hookNote says what a hook that did not simply pass did.
func hookNote(e protocol.HookEvent) string {
	s := fmt.Sprintf("  hook %s (%s) %s", e.Event, mdterm.Safe(firstLines(e.Command, 1, 60)), e.Outcome)
	if why := cmp.Or(e.Reason, e.Error); why != "" {
		s += ": " + mdterm.Safe(firstLines(why, 2, 200))
	}
	return s
}

// processNote says what became of a background process.
func processNote(e protocol.ProcessUpdateEvent) string {
	p := e.Process
	s := fmt.Sprintf("  process %s (%s) %s", p.ID, mdterm.Safe(firstLines(p.Command, 1, 60)), p.State)
	switch {
	case p.State == "running":
		s = fmt.Sprintf("  process %s (%s) started in the background, pid %d", p.ID, mdterm.Safe(firstLines(p.Command, 1, 60)), p.Pid)
	case p.ExitCode != nil:
		s += fmt.Sprintf(", exit code %d", *p.ExitCode)
	case p.Signal != "":
		s += ", " + p.Signal
	}
	return s
}

// resumedNote says a turn goes on after a daemon restart.
func resumedNote(e protocol.TurnResumedEvent) string {
	return fmt.Sprintf("  (the daemon restarted during this turn; it goes on, attempt %d)", e.Attempt)
}

// reviewNote says what the reviewer did with a call.
func reviewNote(e protocol.ApprovalReviewedEvent) string {
	s := fmt.Sprintf("  (reviewer %s: %s %s", e.Reviewer, e.Decision, e.ToolName)
	if e.Risk != "" {
		s += ", " + e.Risk + " risk"
	}
	if e.Rationale != "" {
		s += ": " + e.Rationale
	} else if e.Error != "" {
		s += ": " + e.Error
	}
	return s + ")"
}

// goalNote says how a session's goal stands.
func goalNote(e protocol.GoalUpdateEvent) string {
	g := e.Goal
	s := fmt.Sprintf("  (goal %s after %s", strings.ReplaceAll(g.State, "_", " "), protocol.TurnsText(g.Turns))
	if g.Spent.USD > 0 {
		s += fmt.Sprintf(", $%.4f", g.Spent.USD)
	}
	switch {
	case g.Summary != "":
		s += ": " + g.Summary
	case g.Reason != "":
		s += ": " + g.Reason
	}
	return s + ")"
}

// scheduleNote says what became of a schedule's run.
func scheduleNote(e protocol.ScheduleUpdateEvent) string {
	s := fmt.Sprintf("  (schedule %s: run %s", e.ScheduleID, e.Run.State)
	if e.Run.Reason != "" {
		s += ": " + e.Run.Reason
	}
	return s + ")"
}

// subagentNote says what became of a sub-agent.
func subagentNote(e protocol.SubagentUpdateEvent) string {
	a := e.Subagent
	what := mdterm.Safe(firstLines(a.Description, 1, 60))
	switch a.State {
	case protocol.SubagentRunning:
		how := "started"
		if a.Background {
			how = "started in the background"
		}
		return fmt.Sprintf("  sub-agent %s (%s, agent %s) %s: zeroclaw chat --session %s follows it", a.SessionID, what, a.Agent, how, a.SessionID)
	case protocol.SubagentCompleted:
		return fmt.Sprintf("  sub-agent %s (%s) completed", a.SessionID, what)
	}
	s := fmt.Sprintf("  sub-agent %s (%s) %s", a.SessionID, what, a.State)
	if a.Summary != "" {
		s += ": " + mdterm.Safe(firstLines(a.Summary, 2, 200))
	}
	return s
}

// timedOut is what an approval nobody answered in time says.
const timedOut = "  (no answer in time: rejected)"
