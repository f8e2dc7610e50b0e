package goals_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

func ptr[T any](v T) *T { return &v }

// supervised makes the default agent ask before a command.
func supervised(c *config.Config) {
	a := c.Agents["default"]
	a.Risk = protocol.RiskSupervised
	c.Agents["default"] = a
}

// A goal on the echo model that calls goal_done on its third turn: three
// turns, each restating the objective word for word with what is left of
// its budget, then met with the summary; the user's prompt runs after,
// and no fourth goal turn. session/get shows the goal as it ended.
func TestGoalRunsUntilDone(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "count to three\n/when \"[Goal, turn 3]\" /tool goal_done {\"summary\":\"counted to three\"}"
	set, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "  " + objective + "\n", Budget: &protocol.GoalBudget{Turns: ptr(10)}})
	if err != nil {
		t.Fatal(err)
	}
	if set.SessionID != sid || set.Goal == nil || set.Goal.State != protocol.GoalActive || set.Goal.Objective != objective || set.Goal.Turns != 0 || *set.Goal.Budget.Turns != 10 {
		t.Fatalf("set: %+v", set.Goal)
	}
	met := goalUntil(t, c, sid, protocol.GoalMet)
	if met.Summary != "counted to three" || met.Turns != 2 { // said during the third turn: two had ended
		t.Fatalf("met: %+v", met)
	}
	// The third turn ends; the user's prompt runs after it, and no
	// fourth goal turn runs.
	if res := d.Prompt(t, cl, sid, "thanks"); res.Content != "echo: thanks" {
		t.Fatalf("the user's prompt: %+v", res)
	}
	prompts := goalPrompts(t, c, sid)
	if len(prompts) != 3 {
		t.Fatalf("%d goal turns: %q", len(prompts), prompts)
	}
	for i, p := range prompts {
		if !strings.HasPrefix(p, fmt.Sprintf("[Goal, turn %d]", i+1)) || !strings.Contains(p, "\n\n"+objective+"\n\n") ||
			!strings.Contains(p, fmt.Sprintf(", %d of 10 turns.", 10-i)) {
			t.Errorf("goal turn %d's prompt: %q", i+1, p)
		}
	}
	// goal_done's tool result in the third turn.
	if r := of(t, c, sid, func(e protocol.ToolResultEvent) bool { return e.Name == "goal_done" }); r.IsError {
		t.Fatalf("goal_done: %+v", r)
	}
	if g := d.goal(t, sid); g == nil || g.State != protocol.GoalMet || g.Turns != 3 || g.Summary != "counted to three" || g.Spent.Tokens <= 0 {
		t.Fatalf("session/get's goal: %+v", g)
	}
}

// A goal the model calls goal_done for when no goal is active (met
// already) gets an error result: the goal stays met.
func TestGoalDoneWithoutActiveGoal(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	_, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"done\"}\n/tool goal_blocked {\"reason\":\"too late\"}"})
	if err != nil {
		t.Fatal(err)
	}
	goalUntil(t, c, sid, protocol.GoalMet)
	// Both calls ran in the one reply: the first met it, the second
	// was refused.
	r := of(t, c, sid, func(e protocol.ToolResultEvent) bool { return e.Name == "goal_blocked" })
	// The turn ended, counted.
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalMet && g.Turns == 1 })
	if !r.IsError || !strings.Contains(r.RawOutput, "no active goal") {
		t.Fatalf("goal_blocked after goal_done: %+v", r)
	}
	if g := d.goal(t, sid); g.State != protocol.GoalMet || g.Turns != 1 {
		t.Fatalf("the goal: %+v", g)
	}
}

// What session/goal refuses, each naming its field: no objective, one too
// long, each budget that is not above 0; a session that is not live, or
// one the client is not attached to.
func TestSetRefusals(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, _ := client(t, "c1", "")
	other, _ := client(t, "c2", "")
	sid := d.Open(t, cl, "")
	for _, tc := range []struct {
		objective string
		budget    *protocol.GoalBudget
		field     string
	}{
		{" \n\t", nil, "objective"},
		{strings.Repeat("x", goals.MaxObjective+1), nil, "objective"},
		{"ok", &protocol.GoalBudget{USD: ptr(0.0)}, "budget.usd"},
		{"ok", &protocol.GoalBudget{USD: ptr(-1.0)}, "budget.usd"},
		{"ok", &protocol.GoalBudget{Tokens: ptr(int64(0))}, "budget.tokens"},
		{"ok", &protocol.GoalBudget{Minutes: ptr(-0.5)}, "budget.minutes"},
		{"ok", &protocol.GoalBudget{Turns: ptr(0)}, "budget.turns"},
	} {
		res, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: tc.objective, Budget: tc.budget})
		if f := paramsField(err); f != tc.field || res != nil {
			t.Errorf("objective %.20q budget %+v: %v (field %q), want field %q", tc.objective, tc.budget, err, f, tc.field)
		}
	}
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: "ses_nowhere", Objective: "ok"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a goal for no session: %v", err)
	}
	if _, err := d.gs.Set(other, protocol.SessionGoalParams{SessionID: sid, Objective: "ok"}); !errors.Is(err, session.ErrForbidden) {
		t.Errorf("a goal from a client not attached: %v", err)
	}
	for name, f := range map[string]func(*session.Client, string) (*protocol.SessionGoalResult, error){
		"pause": d.gs.Pause, "resume": d.gs.Resume, "clear": clearOf(d)} {
		if _, err := f(cl, sid); paramsField(err) != "sessionId" || !strings.Contains(err.Error(), "has no goal") {
			t.Errorf("%s with no goal: %v", name, err)
		}
		if _, err := f(other, sid); !errors.Is(err, session.ErrForbidden) {
			t.Errorf("%s from a client not attached: %v", name, err)
		}
	}
	// Nothing was set: the session has no goal.
	if g := d.goal(t, sid); g != nil {
		t.Fatalf("a refused goal was kept: %+v", g)
	}
}

// The budgets: a goal out of tokens after its first turn, one out of
// turns after two, one out of dollars (a priced model) after one, one
// past its minutes; each ends budget_exhausted naming the limit, and
// runs no more turns.
func TestBudgetExhausted(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		p := c.Providers["echo"]
		p.Pricing = &config.Pricing{Input: 1, Output: 1}
		c.Providers["echo"] = p
	})
	d := h.start(t)
	for _, tc := range []struct {
		name   string
		budget protocol.GoalBudget
		turns  int
		reason string
	}{
		{"tokens", protocol.GoalBudget{Tokens: ptr(int64(1))}, 1, "its budget of 1 tokens is spent"},
		{"turns", protocol.GoalBudget{Turns: ptr(2)}, 2, "its 2 turns have run"},
		{"usd", protocol.GoalBudget{USD: ptr(1e-9)}, 1, "its budget of $0.0000 is spent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, c := client(t, "c-"+tc.name, "")
			sid := d.Open(t, cl, "")
			objective := "write a long essay on " + tc.name
			if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective, Budget: &tc.budget}); err != nil {
				t.Fatal(err)
			}
			g := goalUntil(t, c, sid, protocol.GoalBudgetExhausted)
			if g.Turns != tc.turns || !strings.HasPrefix(g.Reason, tc.reason) {
				t.Fatalf("exhausted: %+v", g)
			}
			// A prompt of the user's runs; no goal turn follows it.
			if res := d.Prompt(t, cl, sid, "and now?"); res.Content != "echo: and now?" {
				t.Fatalf("the user's prompt: %+v", res)
			}
			if n := len(goalPrompts(t, c, sid)); n != tc.turns {
				t.Fatalf("%d goal turns, want %d", n, tc.turns)
			}
			// Resumed past its budget, it is exhausted again at once.
			res, err := d.gs.Resume(cl, sid)
			if err != nil || res.Goal.State != protocol.GoalActive {
				t.Fatalf("resume: %+v %v", res, err)
			}
			if g := goalUntil(t, c, sid, protocol.GoalBudgetExhausted); g.Turns != tc.turns {
				t.Fatalf("exhausted again: %+v", g)
			}
		})
	}
	// Minutes: however quick, the goal ends past its 6 microseconds,
	// before its first turn or after it.
	cl, c := client(t, "c-minutes", "")
	sid := d.Open(t, cl, "")
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "hurry", Budget: &protocol.GoalBudget{Minutes: ptr(1e-7)}}); err != nil {
		t.Fatal(err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalBudgetExhausted); g.Turns > 1 || g.Reason != "its 0.00 minutes have passed" {
		t.Fatalf("out of minutes: %+v", g)
	}
}

// A goal always has a budget: the limits not given take the config's
// defaults ([goals]: turns, minutes and tokens, and its cost when
// default_budget_usd is set).
func TestDefaultBudget(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Goals.DefaultBudgetUSD = 2.5 })
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	res, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"quick\"}"})
	if err != nil {
		t.Fatal(err)
	}
	want := protocol.GoalBudget{USD: ptr(2.5), Turns: ptr(50), Minutes: ptr(120.0), Tokens: ptr(int64(5_000_000))}
	if b := res.Goal.Budget; !reflect.DeepEqual(b, want) {
		t.Fatalf("the default budget: %s, want %s", show(b), show(want))
	}
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalMet && g.Turns == 1 }) // its turn ended
	// The limits given are kept; the others take the defaults.
	res, err = d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"again\"}", Budget: &protocol.GoalBudget{Turns: ptr(3)}})
	if err != nil {
		t.Fatal(err)
	}
	want.Turns = ptr(3)
	if b := res.Goal.Budget; !reflect.DeepEqual(b, want) {
		t.Fatalf("a budget of turns only: %s, want %s", show(b), show(want))
	}
	if g := goalUntil(t, c, sid, protocol.GoalMet); g.Summary != "again" || g.Turns != 0 {
		t.Fatalf("the second goal: %+v", g)
	}
}

func show(b protocol.GoalBudget) string {
	j, _ := json.Marshal(b)
	return string(j)
}

// clearOf is d's clear as pause and resume are called (nothing kept).
func clearOf(d *daemon) func(*session.Client, string) (*protocol.SessionGoalResult, error) {
	return func(c *session.Client, id string) (*protocol.SessionGoalResult, error) {
		return d.gs.Clear(c, id, false)
	}
}

// A goal turn's prompt says what is left of each limit of its budget.
func TestPromptSaysTheBudgetLeft(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	budget := protocol.GoalBudget{USD: ptr(10.0), Tokens: ptr(int64(1_000_000_000)), Minutes: ptr(60.0), Turns: ptr(3)}
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"ok\"}", Budget: &budget}); err != nil {
		t.Fatal(err)
	}
	goalUntil(t, c, sid, protocol.GoalMet)
	p := goalPrompts(t, c, sid)
	if len(p) != 1 || !strings.Contains(p[0], "Budget left: $10.0000 of $10.0000, 1000000000 of 1000000000 tokens, 60 of 60 minutes, 3 of 3 turns. When the objective is fully met") {
		t.Fatalf("the goal turn's prompt: %q", p)
	}
}

// A met goal stays met: pausing it must not make it a goal that resume
// brings back (resume refuses a met goal: set a new one).
func TestPauseOfAMetGoal(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"done\"}"}); err != nil {
		t.Fatal(err)
	}
	goalUntil(t, c, sid, protocol.GoalMet)
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalMet && g.Turns == 1 }) // its turn ended
	// A met goal has nothing to pause: refused, so it cannot be paused
	// and then resumed into running again.
	_, err := d.gs.Pause(cl, sid)
	var pe *protocol.ParamsError
	if !errors.As(err, &pe) || pe.Field != "sessionId" || !strings.Contains(pe.Reason, "met") {
		t.Fatalf("pause of a met goal: %v", err)
	}
	if _, err := d.gs.Resume(cl, sid); err == nil {
		t.Fatal("a met goal resumed")
	}
}

// A goal whose turn waits for an approval (a supervised agent's command)
// is blocked, reason approval, until it is answered, then active again;
// the model's goal_blocked blocks it with its reason and no goal turn
// follows; resumed, the next turn runs, and meets it.
func TestBlockedWhileAsking(t *testing.T) {
	h := newHarness(t, supervised)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "/when \"[Goal, turn 1]\" /tool shell {\"command\":\"echo step\"}\n" +
		"/when \"[Goal, turn 2]\" /tool goal_blocked {\"reason\":\"I need the deploy key\"}\n" +
		"/when \"[Goal, turn 3]\" /tool goal_done {\"summary\":\"deployed\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective}); err != nil {
		t.Fatal(err)
	}
	req := of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return e.ToolName == "shell" })
	if g := goalUntil(t, c, sid, protocol.GoalBlocked); g.Reason != "approval" {
		t.Fatalf("blocked: %+v", g)
	}
	if g := d.goal(t, sid); g.State != protocol.GoalBlocked || g.Reason != "approval" {
		t.Fatalf("session/get while asking: %+v", g)
	}
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
		t.Fatalf("approve: %v %v", ok, err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalActive); g.Reason != "" {
		t.Fatalf("active again: %+v", g)
	}
	if r := of(t, c, sid, func(e protocol.ToolResultEvent) bool { return e.Name == "shell" }); r.IsError || !strings.Contains(r.RawOutput, "step") {
		t.Fatalf("the command: %+v", r)
	}
	if g := goalUntil(t, c, sid, protocol.GoalBlocked); g.Reason != "I need the deploy key" || g.Turns != 1 {
		t.Fatalf("blocked by the model: %+v", g)
	}
	// The user's own turn asks too: the goal is not its, and stays
	// blocked by the model's reason.
	mine, err := d.M.Prompt(cl, sid, "/tool shell {\"command\":\"echo mine\"}")
	if err != nil {
		t.Fatal(err)
	}
	req = of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return e.ToolName == "shell" })
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
		t.Fatalf("approve: %v %v", ok, err)
	}
	if res := <-mine; res.StopReason != "end_turn" || !strings.Contains(res.Content, "mine") {
		t.Fatalf("the user's prompt: %+v", res)
	}
	if g := d.goal(t, sid); g.State != protocol.GoalBlocked || g.Reason != "I need the deploy key" {
		t.Fatalf("the goal after the user's turn asked: %+v", g)
	}
	if n := len(goalPrompts(t, c, sid)); n != 2 {
		t.Fatalf("%d goal turns while blocked", n)
	}
	res, err := d.gs.Resume(cl, sid)
	if err != nil || res.Goal.State != protocol.GoalActive || res.Goal.Reason != "" || res.Goal.Turns != 2 {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalMet); g.Summary != "deployed" {
		t.Fatalf("met: %+v", g)
	}
	// Met: it cannot be resumed.
	if _, err := d.gs.Resume(cl, sid); paramsField(err) != "sessionId" || !strings.Contains(err.Error(), "the goal is met") {
		t.Fatalf("resuming a met goal: %v", err)
	}
}

// Paused while its turn waits for an approval, a goal stays paused once
// the approval is answered and the turn ends: no goal turn starts, the
// user's prompts run; resumed, its next turn starts; cleared (by the
// daemon), it is told cleared and gone, and pause, resume and clear find
// no goal.
func TestPauseResumeClear(t *testing.T) {
	h := newHarness(t, supervised)
	d := h.start(t)
	cl, c := client(t, "c1", "the tester")
	sid := d.Open(t, cl, "")
	objective := "/tool shell {\"command\":\"echo step\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective}); err != nil {
		t.Fatal(err)
	}
	req := of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return true })
	goalUntil(t, c, sid, protocol.GoalBlocked)
	paused, err := d.gs.Pause(cl, sid)
	if err != nil || paused.Goal.State != protocol.GoalPaused || paused.Goal.Reason != "paused by the tester" {
		t.Fatalf("pause: %+v %v", paused, err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalPaused); g.Reason != "paused by the tester" {
		t.Fatalf("goal_update paused: %+v", g)
	}
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionRejectOnce}); !ok || err != nil {
		t.Fatalf("answer: %v %v", ok, err)
	}
	of(t, c, sid, func(protocol.TurnCompleteEvent) bool { return true })
	if res := d.Prompt(t, cl, sid, "meanwhile"); res.Content != "echo: meanwhile" {
		t.Fatalf("the user's prompt: %+v", res)
	}
	if n := len(goalPrompts(t, c, sid)); n != 1 {
		t.Fatalf("%d goal turns while paused", n)
	}
	if g := d.goal(t, sid); g.State != protocol.GoalPaused || g.Turns != 1 {
		t.Fatalf("session/get while paused: %+v", g)
	}
	// Resumed: the next turn starts, and asks again.
	if res, err := d.gs.Resume(cl, sid); err != nil || res.Goal.State != protocol.GoalActive {
		t.Fatalf("resume: %+v %v", res, err)
	}
	of(t, c, sid, func(e protocol.UserMessageEvent) bool { return strings.HasPrefix(e.Text, "[Goal, turn 2]") })
	req = of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return true })
	// Cleared by the daemon (no client): told cleared, then gone.
	cleared, err := d.gs.Clear(nil, sid, false)
	if err != nil || cleared.Goal.State != protocol.GoalCleared || cleared.Goal.Reason != "cleared by the daemon" {
		t.Fatalf("clear: %+v %v", cleared, err)
	}
	goalUntil(t, c, sid, protocol.GoalCleared)
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
		t.Fatalf("answer: %v %v", ok, err)
	}
	of(t, c, sid, func(protocol.TurnCompleteEvent) bool { return true })
	if g := d.goal(t, sid); g != nil {
		t.Fatalf("a cleared goal is still shown: %+v", g)
	}
	if res := d.Prompt(t, cl, sid, "after"); res.Content != "echo: after" {
		t.Fatalf("the user's prompt: %+v", res)
	}
	if n := len(goalPrompts(t, c, sid)); n != 2 {
		t.Fatalf("%d goal turns after the clear", n)
	}
	for name, f := range map[string]func(*session.Client, string) (*protocol.SessionGoalResult, error){
		"pause": d.gs.Pause, "resume": d.gs.Resume, "clear": clearOf(d)} {
		if _, err := f(cl, sid); paramsField(err) != "sessionId" {
			t.Errorf("%s of a cleared goal: %v", name, err)
		}
	}
}

// A goal's turn cancelled (session/cancel) pauses the goal at once,
// saying why; no turn follows.
func TestCancelledTurnPauses(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/delay 60000\nslowly"}); err != nil {
		t.Fatal(err)
	}
	of(t, c, sid, func(e protocol.UserMessageEvent) bool { return strings.HasPrefix(e.Text, "[Goal, turn 1]") })
	if ok, err := d.M.Cancel(cl, sid); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalPaused); g.Reason != "its turn was cancelled" || g.Turns != 1 {
		t.Fatalf("paused: %+v", g)
	}
	if res := d.Prompt(t, cl, sid, "next"); res.Content != "echo: next" {
		t.Fatalf("the user's prompt: %+v", res)
	}
	if n := len(goalPrompts(t, c, sid)); n != 1 {
		t.Fatalf("%d goal turns", n)
	}
}

// Three goal turns that fail in a row pause the goal, naming the last
// failure; a turn that succeeds between failures starts the count over.
func TestThreeFailuresPause(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "/when \"[Goal, turn 1]\" /fail first\n/when \"[Goal, turn 3]\" /fail third\n" +
		"/when \"[Goal, turn 4]\" /fail fourth\n/when \"[Goal, turn 5]\" /fail fifth\n" +
		"/when \"[Goal, turn 6]\" /fail sixth\n/when \"[Goal, turn 7]\" /tool goal_done {\"summary\":\"recovered\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective}); err != nil {
		t.Fatal(err)
	}
	g := goalUntil(t, c, sid, protocol.GoalPaused)
	if g.Turns != 5 || !strings.HasPrefix(g.Reason, "its last 3 turns failed; the last: ") || !strings.Contains(g.Reason, "fifth") {
		t.Fatalf("paused: %+v", g)
	}
	var outcomes []string
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.TurnCompleteEvent); ok {
			outcomes = append(outcomes, e.Outcome)
		}
	}
	if strings.Join(outcomes, " ") != "failed completed failed failed failed" {
		t.Fatalf("the goal's turns: %v", outcomes)
	}
	// Resumed, the count starts over: one more failure does not pause
	// it, and its next turn meets it.
	if res, err := d.gs.Resume(cl, sid); err != nil || res.Goal.State != protocol.GoalActive || res.Goal.Reason != "" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalMet); g.Summary != "recovered" || g.Turns != 6 {
		t.Fatalf("met after the resume: %+v", g)
	}
}

// A session closed and loaded again has its stored goal back: session/get
// shows it as it was, and resumed it goes on from its turns so far.
func TestResumedSessionHasItsGoal(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "/when \"[Goal, turn 1]\" /tool goal_blocked {\"reason\":\"ask me\"}\n/when \"[Goal, turn 2]\" /tool goal_done {\"summary\":\"after the reload\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective, Budget: &protocol.GoalBudget{Turns: ptr(5)}}); err != nil {
		t.Fatal(err)
	}
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalBlocked && g.Turns == 1 }) // its turn ended
	if err := d.M.Close(cl, sid); err != nil {
		t.Fatal(err)
	}
	cl2, c2 := client(t, "c2", "")
	d.Open(t, cl2, sid)
	g := d.goal(t, sid)
	if g == nil || g.State != protocol.GoalBlocked || g.Reason != "ask me" || g.Objective != objective || g.Turns != 1 || *g.Budget.Turns != 5 {
		t.Fatalf("the goal after the reload: %+v", g)
	}
	if _, err := d.gs.Resume(cl2, sid); err != nil {
		t.Fatal(err)
	}
	if g := goalUntil(t, c2, sid, protocol.GoalMet); g.Summary != "after the reload" || g.Turns != 1 {
		t.Fatalf("met: %+v", g)
	}
	if p := goalPrompts(t, c2, sid); len(p) != 1 || !strings.HasPrefix(p[0], "[Goal, turn 2]") || !strings.Contains(p[0], ", 4 of 5 turns.") {
		t.Fatalf("the goal turn after the reload: %q", p)
	}
}

// A session with no goal is loaded with none; one whose stored goal does
// not decode (a damaged row) is loaded too, without it.
func TestResumedWithoutAGoal(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, _ := client(t, "c1", "")
	plain, damaged := d.Open(t, cl, ""), d.Open(t, cl, "")
	for _, sid := range []string{plain, damaged} {
		if err := d.M.Close(cl, sid); err != nil {
			t.Fatal(err)
		}
	}
	h.Store.SetGoal(damaged, []byte(`{"objective":`), false)
	if err := h.Store.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{plain, damaged} {
		d.Open(t, cl, sid)
		if g := d.goal(t, sid); g != nil {
			t.Fatalf("%s: a goal after the reload: %+v", sid, g)
		}
		if res := d.Prompt(t, cl, sid, "hello"); res.Content != "echo: hello" {
			t.Fatalf("%s: %+v", sid, res)
		}
		if _, err := d.gs.Resume(cl, sid); paramsField(err) != "sessionId" {
			t.Fatalf("%s: resume: %v", sid, err)
		}
	}
}

// The active goals a daemon's end left go on in the next daemon
// (Continue): a goal set while the user's turn ran, the daemon stopped
// before its first turn could start; the next daemon on the same store
// runs it.
func TestContinueAfterRestart(t *testing.T) {
	h := newHarness(t, nil)
	d1 := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d1.Open(t, cl, "")
	busy, err := d1.M.Prompt(cl, sid, "/delay 60000\nstill busy")
	if err != nil {
		t.Fatal(err)
	}
	of(t, c, sid, func(e protocol.UserMessageEvent) bool { return true })
	res, err := d1.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"done in the next daemon\"}"})
	if err != nil || res.Goal.State != protocol.GoalActive {
		t.Fatalf("set: %+v %v", res, err)
	}
	d1.Shutdown()
	if r := <-busy; r.StopReason != "cancelled" {
		t.Fatalf("the user's turn at the daemon's end: %+v", r)
	}
	if n := len(goalPrompts(t, c, sid)); n != 0 {
		t.Fatalf("%d goal turns in the first daemon", n)
	}
	cl.Close()

	d2 := h.start(t)
	cl2, c2 := client(t, "c2", "")
	d2.Open(t, cl2, sid)
	if g := d2.goal(t, sid); g == nil || g.State != protocol.GoalActive || g.Turns != 0 {
		t.Fatalf("the stored goal: %+v", g)
	}
	d2.gs.Continue(context.Background())
	if g := goalUntil(t, c2, sid, protocol.GoalMet); g.Summary != "done in the next daemon" {
		t.Fatalf("met: %+v", g)
	}
	of(t, c2, sid, func(protocol.TurnCompleteEvent) bool { return true })
	if p := goalPrompts(t, c2, sid); len(p) != 1 || !strings.HasPrefix(p[0], "[Goal, turn 1]") {
		t.Fatalf("the next daemon's goal turns: %q", p)
	}
	// With no goal active, Continue starts nothing more.
	d2.gs.Continue(context.Background())
	if res := d2.Prompt(t, cl2, sid, "done?"); res.Content != "echo: done?" {
		t.Fatalf("the user's prompt: %+v", res)
	}
	if n := len(goalPrompts(t, c2, sid)); n != 1 {
		t.Fatalf("%d goal turns", n)
	}
}
