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

type goalDone struct{}

func (goalDone) Spec() Spec {
	s, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"summary": map[string]any{"type": "string", "description": "what was done, and how it was checked"}}, "required": []string{"summary"}})
	return Spec{Name: "goal_done", Description: "Say that the session's goal is met: no more turns run for it. Call it only when the objective is fully done and checked.", Schema: s}
}
func (goalDone) Asks() bool                     { return false }
func (goalDone) Kind() string                   { return protocol.KindThink }
func (goalDone) Summary(json.RawMessage) string { return "the goal is met" }
func (goalDone) Run(_ context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Summary string `json:"summary"`
	}
	if err := decode(input, &a); err != nil {
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

type goalBlocked struct{}

func (goalBlocked) Spec() Spec {
	s, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"reason": map[string]any{"type": "string", "description": "what you need from the user"}}, "required": []string{"reason"}})
	return Spec{Name: "goal_blocked", Description: "Say that the session's goal cannot go on without the user (a decision, access, information): no more turns run for it until they resume it.", Schema: s}
}
func (goalBlocked) Asks() bool                     { return false }
func (goalBlocked) Kind() string                   { return protocol.KindThink }
func (goalBlocked) Summary(json.RawMessage) string { return "the goal needs the user" }
func (goalBlocked) Run(_ context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Reason string `json:"reason"`
	}
	if err := decode(input, &a); err != nil {
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
