package tool

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The plan mode ends with exit_plan: the plan goes to the user, who
// chooses to proceed (in the ask or the accept-edits mode) or to keep
// planning (with feedback the model answers in the same turn).
// internal/plan implements PlanExit for a session; the tool is offered
// only in plan mode.

// PlanExit shows a plan to the user and says what they chose, as the
// tool's result.
type PlanExit interface {
	ExitPlan(ctx context.Context, callID, plan string) (string, error)
}

// ExitPlan is the exit_plan tool.
var ExitPlan Tool = exitPlan{}

// exitPlanArgs are exit_plan's arguments.
type exitPlanArgs struct {
	Plan string `json:"plan" jsonschema:"the whole plan, in Markdown: the steps, the files, how it will be checked"`
}

type exitPlan struct{ takes[exitPlanArgs] }

func (t exitPlan) Spec() Spec {
	return Spec{Name: "exit_plan", Guide: "In plan mode, look around, then call exit_plan with the plan: the user approves it (and the mode) or asks for more planning.",
		Description: "Show the plan to the user and ask to leave the plan mode: they proceed (in the ask or the accept-edits mode) or ask you to keep planning, with feedback.", Schema: t.schema()}
}
func (exitPlan) Asks() bool                     { return false }
func (exitPlan) Kind() string                   { return protocol.KindThink }
func (exitPlan) Summary(json.RawMessage) string { return "Proceed with this plan?" }
func (t exitPlan) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if env.PlanExit == nil {
		return errorf("not in the plan mode")
	}
	if strings.TrimSpace(a.Plan) == "" {
		return errorf("plan is required")
	}
	out, err := env.PlanExit.ExitPlan(ctx, env.CallID, a.Plan)
	if err != nil {
		return errorf("%v", err)
	}
	return Result{Output: out}
}
