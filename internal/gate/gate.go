// Package gate decides, in one place, whether an actor may do an action
// now: a tool call of a session's model, a method of a client, a write to
// a background process, a message to a sub-agent, a change of a
// session's mode. Decide is a pure function of explicit inputs (who
// acts, what it does, the mode and rules in force, the sandbox, the
// parent's grant for a child); the agent's tool gate and the method
// table's owner-only check are its two faces, and every other decision
// of the kind goes through it too, so a new rule is one place to change
// and one table to test.
//
// It knows no sessions, tools or wire: callers describe the action by
// its class (what it may change), not by a tool's name.
package gate

import (
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Actor is who acts.
type Actor string

// The actors.
const (
	// User is a client of the daemon's own user on its local socket.
	User Actor = "user"
	// Device is a paired gateway client (a browser, a script, a phone):
	// it acts for the user, but may not do what only the user at the
	// machine may (the owner-only methods).
	Device Actor = "device"
	// Stranger is a connection whose peer is another local user.
	Stranger Actor = "stranger"
	// Model is a session's model, through its tools.
	Model Actor = "model"
	// Subagent is the model of a session another session's task started.
	Subagent Actor = "subagent"
	// Scheduled is the model of a scheduled run: nobody is there to ask.
	Scheduled Actor = "scheduled"
	// Reviewer is the model that answers approval requests first.
	Reviewer Actor = "reviewer"
	// Command is a command the agent started (a connection made from
	// inside its sandbox): it holds no authority of its own.
	Command Actor = "command"
)

// Actors lists every actor, for the table test.
var Actors = []Actor{User, Device, Stranger, Model, Subagent, Scheduled, Reviewer, Command}

// Kind is what sort of action is asked.
type Kind string

// The kinds of action.
const (
	// ToolCall is a call of one of the agent's tools.
	ToolCall Kind = "tool_call"
	// Method is a call of a daemon method by a client.
	Method Kind = "method"
	// ProcessWrite writes to a session's background process's stdin.
	ProcessWrite Kind = "process_write"
	// TaskMessage sends a sub-agent a prompt (task_send).
	TaskMessage Kind = "task_message"
	// ModeChange changes a session's mode (its risk level).
	ModeChange Kind = "mode_change"
	// Answer answers a session's approval request.
	Answer Kind = "answer"
)

// Kinds lists every kind of action, for the table test.
var Kinds = []Kind{ToolCall, Method, ProcessWrite, TaskMessage, ModeChange, Answer}

// Class is what a tool call may change, as the tool declares it.
type Class string

// The classes of tool call.
const (
	// Looks changes nothing: reads, searches, thinks, asks the user.
	Looks Class = "looks"
	// EditsFiles changes only the files it names (write, edit).
	EditsFiles Class = "edits_files"
	// RunsCommand runs a command that the sandbox confines.
	RunsCommand Class = "runs_command"
	// Fetches reads the web.
	Fetches Class = "fetches"
	// Changes may change anything (a write to a running process, an MCP
	// server's tool that does not say it only reads).
	Changes Class = "changes"
)

// Action is what the actor asks to do.
type Action struct {
	Kind Kind
	// Name is the tool's or the method's name (for the reasons given).
	Name string

	// A tool call. Known: the agent has such a tool. Asks: the tool
	// asks before it runs under the supervised mode (and is refused
	// under read-only). Class: what it may change. InCwd: every path it
	// changes lies under the session's directory; InPlans: under its
	// plan directory (PlanDir).
	Known   bool
	Asks    bool
	Class   Class
	InCwd   bool
	InPlans bool

	// A method: OwnerOnly says only the daemon's own user may call it.
	OwnerOnly bool

	// A mode change: To is the mode asked for.
	To string
	// A task message: ChildMode is the mode the child runs under.
	ChildMode string
}

// Rule is a decision already standing for the action: an "always" or
// "never" answer given earlier in the session, or a permission rule.
type Rule struct {
	// Decision is Allow, Deny or Ask ("": none stands).
	Decision Decision
	// Why says which answer or rule it is.
	Why string
}

// Request is everything a decision is made from.
type Request struct {
	Actor  Actor
	Action Action
	// Mode is the session's mode (risk level) in force now.
	Mode string
	// Rule is the standing decision, if any.
	Rule Rule
	// Hook is what the PreToolUse hooks decided (Allow, Deny, Ask; ""
	// before they ran, or none said), with HookWhy.
	Hook    Decision
	HookWhy string
	// Sandbox: commands run in the sandbox here (so the read-only one
	// can confine them).
	Sandbox bool
	// Grant is what the parent holds, for a child's actions (nil: the
	// actor is no child).
	Grant *Grant
}

// Grant is what a parent session holds, and so the most its child may:
// the tools it has (nil: any), and its mode.
type Grant struct {
	Tools map[string]bool
	Mode  string
}

// Decision is the gate's answer.
type Decision string

// The decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Verdict is a decision with what it rests on.
type Verdict struct {
	Decision Decision
	// Why is the reason: for Ask, why it asks (shown with the
	// approval); for Deny, why not (told to the model or the client).
	Why string
	// ReadOnly: a command runs in the read-only sandbox (plan mode).
	ReadOnly bool
	// Standing: the verdict is a standing answer's (no one is asked).
	Standing bool
}

// PlanDir is where plan mode lets the agent write its plan, under the
// session's directory.
const PlanDir = ".zeroclaw/plans"

// Func is the signature of Decide, so a test can count what reaches it.
type Func func(Request) Verdict

// Decide is the one gate: whether r.Actor may do r.Action now.
func Decide(r Request) Verdict {
	switch r.Action.Kind {
	case Method:
		return method(r)
	case ProcessWrite:
		return processWrite(r)
	case TaskMessage:
		return taskMessage(r)
	case ModeChange:
		return modeChange(r)
	case Answer:
		return answerApproval(r)
	case ToolCall:
		return toolCall(r)
	}
	return deny("unknown action " + string(r.Action.Kind))
}

func deny(why string) Verdict { return Verdict{Decision: Deny, Why: why} }

var allow = Verdict{Decision: Allow}

// client says whether the actor is a person's client (on the socket or
// paired through the gateway).
func client(a Actor) bool { return a == User || a == Device }

// model says whether the actor is an agent's model running a turn.
func model(a Actor) bool { return a == Model || a == Subagent || a == Scheduled }

func method(r Request) Verdict {
	switch {
	case r.Actor == User:
		return allow
	case r.Actor == Device || r.Actor == Stranger:
		if r.Action.OwnerOnly {
			return deny(r.Action.Name + " is only for the daemon's own user, on its local socket")
		}
		return allow
	}
	return deny(string(r.Actor) + " may call no method")
}

// processWrite: a person may type into the session's processes; the
// model does so through its process_write tool (a tool call).
func processWrite(r Request) Verdict {
	if client(r.Actor) {
		return allow
	}
	return deny(string(r.Actor) + " may not write to a process")
}

// taskMessage: a model may prompt its own child, never one that runs
// wider than the mode the parent is in now.
func taskMessage(r Request) Verdict {
	if !model(r.Actor) {
		return deny(string(r.Actor) + " may not prompt a sub-agent")
	}
	if r.Action.ChildMode != "" && rank(r.Action.ChildMode) > rank(r.Mode) {
		return deny("the sub-agent runs in the " + ModeName(r.Action.ChildMode) + " mode, wider than this session's " + ModeName(r.Mode) + " mode now")
	}
	return allow
}

// modeChange: a person picks any mode; a model may only ask to leave
// the plan mode (exit_plan), which asks the person; nobody else.
func modeChange(r Request) Verdict {
	switch {
	case client(r.Actor):
		return allow
	case (r.Actor == Model || r.Actor == Subagent) && r.Mode == protocol.RiskPlan:
		return Verdict{Decision: Ask, Why: "leaving the plan mode asks the user"}
	}
	return deny(string(r.Actor) + " may not change the session's mode")
}

// answerApproval: a person answers; the reviewer may allow or refuse a
// tool call (its verdict is checked by the caller against its limits);
// nobody else, least of all the model that asked.
func answerApproval(r Request) Verdict {
	if client(r.Actor) || r.Actor == Reviewer {
		return allow
	}
	return deny(string(r.Actor) + " may not answer an approval")
}

// toolCall is the tool gate. In order: an unknown tool, the parent's
// grant, a standing refusal, the mode (read-only refuses what asks;
// plan refuses what changes anything but its plan), a rule that asks,
// a standing allow, the mode's asking, then the hook; an actor nobody
// can ask (a scheduled run) is refused what would ask.
func toolCall(r Request) Verdict {
	a := r.Action
	if !model(r.Actor) {
		return deny(string(r.Actor) + " may not call the agent's tools")
	}
	if !a.Known {
		return deny("this agent has no such tool")
	}
	if g := r.Grant; g != nil {
		if g.Tools != nil && !g.Tools[a.Name] {
			return deny("the parent session does not have " + a.Name + ", so its sub-agent may not use it")
		}
	}
	mode := r.Mode
	if g := r.Grant; g != nil && g.Mode != "" && rank(g.Mode) < rank(mode) {
		mode = g.Mode // a child is never wider than its parent
	}
	if r.Rule.Decision == Deny {
		return Verdict{Decision: Deny, Why: r.Rule.Why, Standing: true}
	}
	v := byMode(r, mode)
	if v.Decision == Deny {
		return v
	}
	switch r.Hook {
	case Deny:
		return deny("a PreToolUse hook refused it: " + r.HookWhy)
	case Allow:
		v.Decision, v.Why = Allow, ""
	case Ask:
		v.Decision, v.Why = Ask, "a PreToolUse hook asks"
	}
	if v.Decision == Ask && r.Actor == Scheduled {
		return deny("not asked: this run may do only what permission rules allow (a schedule's approve: rules)")
	}
	return v
}

// byMode is the tool gate's verdict under mode, before the hooks.
func byMode(r Request, mode string) Verdict {
	a := r.Action
	v := allow
	switch {
	case r.Rule.Decision == Ask:
		if mode == protocol.RiskReadonly && a.Asks {
			return deny("the agent is read-only, so " + a.Name + " may not run")
		}
		v = Verdict{Decision: Ask, Why: r.Rule.Why}
	case r.Rule.Decision == Allow:
		v = Verdict{Decision: Allow, Standing: true}
	case !a.Asks:
	case mode == protocol.RiskSupervised, mode == protocol.RiskPlan:
		v = Verdict{Decision: Ask, Why: "the " + ModeName(mode) + " mode asks before " + a.Name + " runs (no permission rule decides it)"}
	case mode == protocol.RiskEdits:
		if a.Class != EditsFiles || !a.InCwd {
			v = Verdict{Decision: Ask, Why: "the accept-edits mode asks before " + a.Name + " runs (only file edits in the session's directory run unasked)"}
		}
	}
	if mode == protocol.RiskReadonly && a.Asks {
		return deny("the agent is read-only, so " + a.Name + " may not run")
	}
	if mode == protocol.RiskPlan {
		return plan(r, v)
	}
	return v
}

// plan applies the plan mode: only what changes nothing runs. Reads and
// searches run; a command runs in the read-only sandbox (where that
// sandbox is off, it is refused); a tool that says it only reads runs;
// a file edit only to a plan file, unasked; anything else that would
// change something is refused without asking, saying why.
func plan(r Request, v Verdict) Verdict {
	a := r.Action
	switch {
	case a.Class == RunsCommand:
		if !r.Sandbox {
			return deny("the plan mode runs commands only in the read-only sandbox, and the sandbox is off here ([sandbox] mode)")
		}
		v.ReadOnly = true
		return v
	case a.Class == EditsFiles:
		if a.InPlans {
			return allow
		}
		return deny("the plan mode changes nothing: write the plan to " + PlanDir + "/ and call exit_plan with it")
	case !a.Asks, a.Class == Looks, a.Class == Fetches:
		// Looks, thinks, answers; or reads the web, asking as under
		// supervised.
		return v
	}
	return deny("the plan mode runs only what changes nothing, and " + a.Name + " may change something")
}

// rank orders the modes from the narrowest.
func rank(mode string) int {
	switch mode {
	case protocol.RiskReadonly:
		return 0
	case protocol.RiskPlan:
		return 1
	case protocol.RiskSupervised:
		return 2
	case protocol.RiskEdits:
		return 3
	case protocol.RiskFull:
		return 4
	}
	return 0 // an unknown mode is the narrowest
}

// Narrower is the narrower of two modes.
func Narrower(a, b string) string {
	if rank(b) < rank(a) {
		return b
	}
	return a
}

// ModeName is a mode's name as people say it ("accept edits").
func ModeName(mode string) string {
	for _, r := range protocol.RiskLevels {
		if r.ID == mode {
			return strings.ToLower(r.Name)
		}
	}
	return mode
}
