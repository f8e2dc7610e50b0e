package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// modes are the columns of the table, narrowest first.
var modes = []string{protocol.RiskReadonly, protocol.RiskPlan, protocol.RiskSupervised, protocol.RiskEdits, protocol.RiskFull}

// Tool calls the table names, by what they declare.
var (
	readFile  = Action{Kind: ToolCall, Name: "read_file", Known: true, Class: Looks}
	editIn    = Action{Kind: ToolCall, Name: "edit_file", Known: true, Asks: true, Class: EditsFiles, InCwd: true}
	editOut   = Action{Kind: ToolCall, Name: "edit_file", Known: true, Asks: true, Class: EditsFiles}
	editPlan  = Action{Kind: ToolCall, Name: "write_file", Known: true, Asks: true, Class: EditsFiles, InCwd: true, InPlans: true}
	shell     = Action{Kind: ToolCall, Name: "shell", Known: true, Asks: true, Class: RunsCommand}
	fetch     = Action{Kind: ToolCall, Name: "web_fetch", Known: true, Asks: true, Class: Fetches}
	mcpReads  = Action{Kind: ToolCall, Name: "mcp__x__get", Known: true, Asks: true, Class: Looks}
	mcpWrites = Action{Kind: ToolCall, Name: "mcp__x__put", Known: true, Asks: true, Class: Changes}
	procWrite = Action{Kind: ToolCall, Name: "process_write", Known: true, Class: Changes}
	unknown   = Action{Kind: ToolCall, Name: "nope"}
)

// cell is one row of the table: a request made under each mode, and the
// verdicts expected, one letter per mode (A allow, K ask, D deny; r after
// a letter: the command runs in the read-only sandbox).
type row struct {
	name string
	req  Request
	want string
}

func rows() []row {
	sb := func(r Request) Request { r.Sandbox = true; return r }
	rs := []row{
		// The model's tool calls, by class, with no rule.
		{"model read", sb(Request{Actor: Model, Action: readFile}), "A A A A A"},
		{"model edit in cwd", sb(Request{Actor: Model, Action: editIn}), "D D K A A"},
		{"model edit outside cwd", sb(Request{Actor: Model, Action: editOut}), "D D K K A"},
		{"model edit a plan file", sb(Request{Actor: Model, Action: editPlan}), "D A K A A"},
		{"model shell", sb(Request{Actor: Model, Action: shell}), "D Kr K K A"},
		{"model shell, no sandbox", Request{Actor: Model, Action: shell}, "D D K K A"},
		{"model fetch", sb(Request{Actor: Model, Action: fetch}), "D K K K A"},
		{"model MCP read-only tool", sb(Request{Actor: Model, Action: mcpReads}), "D K K K A"},
		{"model MCP tool that changes", sb(Request{Actor: Model, Action: mcpWrites}), "D D K K A"},
		{"model process write", sb(Request{Actor: Model, Action: procWrite}), "A A A A A"},
		{"model unknown tool", sb(Request{Actor: Model, Action: unknown}), "D D D D D"},
		// Standing answers and rules.
		{"rule denies shell", sb(Request{Actor: Model, Action: shell, Rule: Rule{Decision: Deny, Why: "rule"}}), "D D D D D"},
		{"rule allows shell", sb(Request{Actor: Model, Action: shell, Rule: Rule{Decision: Allow}}), "D Ar A A A"},
		{"rule allows an edit outside", sb(Request{Actor: Model, Action: editOut, Rule: Rule{Decision: Allow}}), "D D A A A"},
		{"rule asks a read", sb(Request{Actor: Model, Action: readFile, Rule: Rule{Decision: Ask, Why: "the rule asks"}}), "K K K K K"},
		{"rule asks shell", sb(Request{Actor: Model, Action: shell, Rule: Rule{Decision: Ask, Why: "the rule asks"}}), "D Kr K K K"},
		// The PreToolUse hooks, after everything that refuses.
		{"hook denies a read", sb(Request{Actor: Model, Action: readFile, Hook: Deny}), "D D D D D"},
		{"hook allows shell", sb(Request{Actor: Model, Action: shell, Hook: Allow}), "D Ar A A A"},
		{"hook asks a read", sb(Request{Actor: Model, Action: readFile, Hook: Ask}), "K K K K K"},
		{"hook allows an edit outside", sb(Request{Actor: Model, Action: editOut, Hook: Allow}), "D D A A A"},
		// Nobody to ask: a scheduled run is refused what would ask.
		{"scheduled shell", sb(Request{Actor: Scheduled, Action: shell}), "D D D D A"},
		{"scheduled read", sb(Request{Actor: Scheduled, Action: readFile}), "A A A A A"},
		{"scheduled shell a rule allows", sb(Request{Actor: Scheduled, Action: shell, Rule: Rule{Decision: Allow}}), "D Ar A A A"},
		// A child: never wider than its parent's grant.
		{"subagent shell, parent lacks it", sb(Request{Actor: Subagent, Action: shell, Grant: &Grant{Tools: map[string]bool{"read_file": true}}}), "D D D D D"},
		{"subagent shell, parent in plan", sb(Request{Actor: Subagent, Action: shell, Grant: &Grant{Mode: protocol.RiskPlan}}), "D Kr Kr Kr Kr"},
		{"subagent edit, parent in full", sb(Request{Actor: Subagent, Action: editIn, Grant: &Grant{Mode: protocol.RiskFull}}), "D D K A A"},
		{"subagent read, parent has it", sb(Request{Actor: Subagent, Action: readFile, Grant: &Grant{Tools: map[string]bool{"read_file": true}, Mode: protocol.RiskReadonly}}), "A A A A A"},
	}
	// Nobody but a model calls tools.
	for _, a := range []Actor{User, Device, Stranger, Reviewer, Command} {
		rs = append(rs, row{string(a) + " calls a tool", sb(Request{Actor: a, Action: readFile}), "D D D D D"})
	}
	// Methods, owner-only or not; the mode plays no part.
	for _, a := range Actors {
		plain, owner := "D D D D D", "D D D D D"
		switch a {
		case User:
			plain, owner = "A A A A A", "A A A A A"
		case Device, Stranger:
			plain = "A A A A A"
		}
		rs = append(rs,
			row{string(a) + " calls a method", Request{Actor: a, Action: Action{Kind: Method, Name: "status"}}, plain},
			row{string(a) + " calls an owner-only method", Request{Actor: a, Action: Action{Kind: Method, Name: "shutdown", OwnerOnly: true}}, owner})
	}
	for _, a := range Actors {
		person := "D D D D D"
		if a == User || a == Device {
			person = "A A A A A"
		}
		// A process's input from a client.
		rs = append(rs, row{string(a) + " writes to a process", Request{Actor: a, Action: Action{Kind: ProcessWrite}}, person})
		// A mode change: a person picks any; the model asks to leave plan.
		change := person
		if a == Model || a == Subagent {
			change = "D K D D D"
		}
		rs = append(rs, row{string(a) + " changes the mode", Request{Actor: a, Action: Action{Kind: ModeChange, To: protocol.RiskFull}}, change})
		// An approval's answer: a person's, or the reviewer's.
		ans := person
		if a == Reviewer {
			ans = "A A A A A"
		}
		rs = append(rs, row{string(a) + " answers an approval", Request{Actor: a, Action: Action{Kind: Answer}}, ans})
		// A message to a child: the model's, never to a wider child.
		wide, narrow := "D D D D D", "D D D D D"
		if a == Model || a == Subagent || a == Scheduled {
			wide, narrow = "D D D D A", "A A A A A"
		}
		rs = append(rs,
			row{string(a) + " prompts a full child", Request{Actor: a, Action: Action{Kind: TaskMessage, ChildMode: protocol.RiskFull}}, wide},
			row{string(a) + " prompts a read-only child", Request{Actor: a, Action: Action{Kind: TaskMessage, ChildMode: protocol.RiskReadonly}}, narrow})
	}
	return rs
}

func letter(v Verdict) string {
	s := map[Decision]string{Allow: "A", Ask: "K", Deny: "D"}[v.Decision]
	if v.ReadOnly {
		s += "r"
	}
	return s
}

func TestDecideTable(t *testing.T) {
	for _, r := range rows() {
		want := strings.Fields(r.want)
		if len(want) != len(modes) {
			t.Fatalf("%s: %d columns, want %d", r.name, len(want), len(modes))
		}
		for i, mode := range modes {
			req := r.req
			req.Mode = mode
			v := Decide(req)
			if got := letter(v); got != want[i] {
				t.Errorf("%s under %s: %s (%q), want %s", r.name, mode, got, v.Why, want[i])
			}
			if v.Decision != Allow && v.Why == "" {
				t.Errorf("%s under %s: %s without a reason", r.name, mode, v.Decision)
			}
		}
	}
}

// TestEveryCellHasARow: the table names every (actor, kind) pair, so a
// new actor or kind of action is a decision somebody wrote down.
func TestEveryCellHasARow(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range rows() {
		seen[fmt.Sprint(r.req.Actor, "/", r.req.Action.Kind)] = true
	}
	for _, a := range Actors {
		for _, k := range Kinds {
			if !seen[fmt.Sprint(a, "/", k)] {
				t.Errorf("no row for %s doing %s", a, k)
			}
		}
	}
}

func TestUnknownKindIsRefused(t *testing.T) {
	if v := Decide(Request{Actor: User, Action: Action{Kind: "launch"}}); v.Decision != Deny {
		t.Fatalf("an unknown kind of action: %v", v)
	}
}

func TestNarrower(t *testing.T) {
	if got := Narrower(protocol.RiskFull, protocol.RiskPlan); got != protocol.RiskPlan {
		t.Fatalf("Narrower(full, plan) = %s", got)
	}
	if got := Narrower(protocol.RiskReadonly, protocol.RiskEdits); got != protocol.RiskReadonly {
		t.Fatalf("Narrower(readonly, edits) = %s", got)
	}
}
