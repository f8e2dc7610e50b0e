package tool

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Goals: while a session works toward a goal (session/goal), its model
// ends the work with goal_done (met) or goal_blocked (it needs the
// user). The session implements Goal; the tools are offered only while
// a goal is active.

// Goal is a session's active goal, as its tools reach it.
type Goal interface {
	// Done says the goal is met, with what was done.
	Done(summary string) error
	// Blocked says the goal needs the user, and why.
	Blocked(reason string) error
}

// GoalTools are the tools of an active goal.
var GoalTools = []Tool{goalDone{}, goalBlocked{}}

// goalDoneArgs are goal_done's arguments.
type goalDoneArgs struct {
	Summary string `json:"summary" jsonschema:"what was done, and how it was checked"`
}

type goalDone struct{ takes[goalDoneArgs] }

func (t goalDone) Spec() Spec {
	return Spec{Name: "goal_done", Description: "Say that the session's goal is met: no more turns run for it. Call it only when the objective is fully done and checked.", Schema: t.schema()}
}
func (goalDone) Asks() bool                     { return false }
func (goalDone) Kind() string                   { return protocol.KindThink }
func (goalDone) Summary(json.RawMessage) string { return "the goal is met" }
func (t goalDone) Run(_ context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if env.Goal == nil {
		return errorf("no goal is set")
	}
	if strings.TrimSpace(a.Summary) == "" {
		return errorf("summary is required")
	}
	if err := env.Goal.Done(a.Summary); err != nil {
		return errorf("%v", err)
	}
	return Result{Output: "The goal is marked met; this turn may end."}
}

// goalBlockedArgs are goal_blocked's arguments.
type goalBlockedArgs struct {
	Reason string `json:"reason" jsonschema:"what you need from the user"`
}

type goalBlocked struct{ takes[goalBlockedArgs] }

func (t goalBlocked) Spec() Spec {
	return Spec{Name: "goal_blocked", Description: "Say that the session's goal cannot go on without the user (a decision, access, information): no more turns run for it until they resume it.", Schema: t.schema()}
}
func (goalBlocked) Asks() bool                     { return false }
func (goalBlocked) Kind() string                   { return protocol.KindThink }
func (goalBlocked) Summary(json.RawMessage) string { return "the goal needs the user" }
func (t goalBlocked) Run(_ context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if env.Goal == nil {
		return errorf("no goal is set")
	}
	if strings.TrimSpace(a.Reason) == "" {
		return errorf("reason is required")
	}
	if err := env.Goal.Blocked(a.Reason); err != nil {
		return errorf("%v", err)
	}
	return Result{Output: "The goal is marked blocked; the user is told. End this turn."}
}
