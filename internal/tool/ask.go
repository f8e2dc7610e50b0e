package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"strings"
	"time"
)

// noElicitation is the result when no client can answer.
const noElicitation = "the client cannot answer questions (it did not advertise elicitation); continue without asking"

const askDefaultSecs = 300

// askUserArgs are ask_user's arguments.
type askUserArgs struct {
	Question    string   `json:"question"`
	Choices     []string `json:"choices,omitempty"`
	TimeoutSecs int      `json:"timeout_secs,omitempty" schema:"minimum=1" jsonschema:"default 300"`
}

type askUser struct{ takes[askUserArgs] }

func (t askUser) Spec() Spec {
	return Spec{Name: "ask_user", Guide: "When the request is ambiguous or a choice is the user's to make, ask with ask_user instead of guessing; do not ask what you can find out yourself.",
		Description: "Ask the user a question and wait for the answer; give choices to offer a fixed set.",
		Schema:      t.schema()}
}
func (askUser) Asks() bool   { return false }
func (askUser) Kind() string { return protocol.KindOther }
func (t askUser) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Ask: " + a.Question
}

func (t askUser) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if strings.TrimSpace(a.Question) == "" {
		return errorf("question is required")
	}
	prop := map[string]any{"type": "string", "title": a.Question}
	if len(a.Choices) > 0 {
		prop["enum"] = a.Choices
	}
	sch, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"answer": prop}, "required": []string{"answer"}})
	secs := a.TimeoutSecs
	if secs <= 0 {
		secs = askDefaultSecs
	}
	ans, res, ok := elicit(ctx, env, Elicitation{Message: a.Question, Schema: sch}, time.Duration(secs)*time.Second)
	if !ok {
		return res
	}
	var c struct {
		Answer any `json:"answer"`
	}
	json.Unmarshal(ans.Content, &c)
	if s, isStr := c.Answer.(string); isStr {
		return Result{Output: "the user answered: " + s}
	}
	return Result{Output: "the user answered: " + string(ans.Content)}
}

// pollArgs are poll's arguments.
type pollArgs struct {
	Question        string   `json:"question"`
	Options         []string `json:"options" schema:"minItems=2"`
	Multi           bool     `json:"multi,omitempty"`
	DurationMinutes int      `json:"duration_minutes,omitempty" schema:"minimum=1"`
}

type poll struct{ takes[pollArgs] }

func (t poll) Spec() Spec {
	return Spec{Name: "poll", Guide: "Offer the user a fixed set of options with poll when they must pick.",
		Description: "Ask the user to pick from options (several with multi); waits up to duration_minutes (default 5).",
		Schema:      t.schema()}
}
func (poll) Asks() bool   { return false }
func (poll) Kind() string { return protocol.KindOther }
func (t poll) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Poll: " + a.Question
}

func (t poll) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if strings.TrimSpace(a.Question) == "" || len(a.Options) < 2 {
		return errorf("question and at least two options are required")
	}
	var prop map[string]any
	if a.Multi {
		prop = map[string]any{"type": "array", "title": a.Question, "items": map[string]any{"type": "string", "enum": a.Options}}
	} else {
		prop = map[string]any{"type": "string", "title": a.Question, "enum": a.Options}
	}
	sch, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"choice": prop}, "required": []string{"choice"}})
	mins := a.DurationMinutes
	if mins <= 0 {
		mins = 5
	}
	ans, res, ok := elicit(ctx, env, Elicitation{Message: a.Question, Schema: sch}, time.Duration(mins)*time.Minute)
	if !ok {
		return res
	}
	var c struct {
		Choice json.RawMessage `json:"choice"`
	}
	json.Unmarshal(ans.Content, &c)
	return Result{Output: "the user chose: " + string(c.Choice)}
}

// elicit asks through env with a timeout; ok is false when res is the
// tool's final result (no client, declined, cancelled, timeout, error).
func elicit(ctx context.Context, env *Env, e Elicitation, timeout time.Duration) (Answer, Result, bool) {
	if env.Elicit == nil {
		return Answer{}, errorf(noElicitation), false
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ans, err := env.Elicit(tctx, e)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return Answer{}, errorf("cancelled before the user answered"), false
	case errors.Is(err, context.DeadlineExceeded):
		return Answer{}, errorf("the user did not answer within %s", timeout), false
	default:
		return Answer{}, errorf("the client failed to ask: %v", err), false
	}
	switch ans.Action {
	case "accept":
		return ans, Result{}, true
	case "decline":
		return ans, Result{Output: "the user declined to answer"}, false
	case "cancel":
		return ans, Result{Output: "the user cancelled the question"}, false
	}
	return ans, errorf("the client answered with unknown action %q", ans.Action), false
}

// planArgs are the plan tool's arguments.
type planArgs struct {
	Entries []planEntry `json:"entries"`
}

// planEntry is a PlanEntry as the model writes it: the same fields
// (the conversion to PlanEntry does not compile otherwise), with the
// values the schema allows.
type planEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status" schema:"enum=pending|in_progress|completed"`
	Priority string `json:"priority" schema:"enum=high|medium|low"`
}

type plan struct{ takes[planArgs] }

func (t plan) Spec() Spec {
	return Spec{Name: "plan", Guide: "For work of several steps, publish a plan with the plan tool and keep it current as steps finish.",
		Description: "Publish the current plan: the whole list of entries each time.",
		Schema:      t.schema()}
}
func (plan) Asks() bool                     { return false }
func (plan) Kind() string                   { return protocol.KindThink }
func (plan) Summary(json.RawMessage) string { return "Update the plan" }

func (t plan) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	entries := []PlanEntry{}
	for i, e := range a.Entries {
		switch e.Status {
		case "pending", "in_progress", "completed":
		default:
			return errorf("entries[%d].status %q: must be pending, in_progress or completed", i, e.Status)
		}
		switch e.Priority {
		case "high", "medium", "low":
		default:
			return errorf("entries[%d].priority %q: must be high, medium or low", i, e.Priority)
		}
		entries = append(entries, PlanEntry(e))
	}
	if env.Plan != nil {
		env.Plan(entries)
	}
	return Result{Output: fmt.Sprintf("plan updated (%d entries)", len(entries))}
}
