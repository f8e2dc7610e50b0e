package goals_test

import (
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/subagents"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// fakeClock is the goals' clock in a test: time moves when the test
// says.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(d *daemon) *fakeClock {
	c := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	goals.SetClock(d.gs, c.now)
	return c
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A goal set without a budget stops by itself: it has the config's
// default turns (here 3), and ends budget_exhausted after them.
func TestNoBudgetStopsByItself(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Goals.DefaultTurns = 3 })
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "never done"}); err != nil {
		t.Fatal(err)
	}
	g := goalUntil(t, c, sid, protocol.GoalBudgetExhausted)
	if g.Turns != 3 || g.Reason != "its 3 turns have run" {
		t.Fatalf("exhausted: %+v", g)
	}
	if res := d.Prompt(t, cl, sid, "and now?"); res.Content != "echo: and now?" {
		t.Fatalf("the user's prompt: %+v", res)
	}
	if n := len(goalPrompts(t, c, sid)); n != 3 {
		t.Fatalf("%d goal turns, want 3", n)
	}
}

// A cost limit on a model with no known price (echo, no [pricing])
// would never bind: it is refused, unless a token limit is given too.
func TestCostOnAnUnpricedModel(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	_, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "spend", Budget: &protocol.GoalBudget{USD: ptr(0.01)}})
	if paramsField(err) != "budget.usd" || !strings.Contains(err.Error(), "no known price") || !strings.Contains(err.Error(), "budget.tokens") {
		t.Fatalf("a cost limit alone on an unpriced model: %v", err)
	}
	if g := d.goal(t, sid); g != nil {
		t.Fatalf("a refused goal was set: %+v", g)
	}
	res, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"ok\"}",
		Budget: &protocol.GoalBudget{USD: ptr(0.01), Tokens: ptr(int64(1_000_000))}})
	if err != nil || *res.Goal.Budget.Tokens != 1_000_000 || *res.Goal.Budget.USD != 0.01 {
		t.Fatalf("with a token limit: %+v %v", res, err)
	}
	goalUntil(t, c, sid, protocol.GoalMet)
}

// A goal's time is checked before each model call and each tool call of
// its turns: the turn whose time runs out while its first command waits
// for an approval runs that command, then ends before its second (and
// before another model call), saying why; the goal ends
// budget_exhausted.
func TestTimeBudgetEndsTheTurnAtItsNextCall(t *testing.T) {
	h := newHarness(t, supervised)
	d := h.start(t)
	clock := newClock(d)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "/tool shell {\"command\":\"echo one\"}\n/tool shell {\"command\":\"echo two\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective, Budget: &protocol.GoalBudget{Minutes: ptr(1.0)}}); err != nil {
		t.Fatal(err)
	}
	req := of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return e.ToolName == "shell" })
	clock.advance(2 * time.Minute)
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
		t.Fatalf("approve: %v %v", ok, err)
	}
	if r := of(t, c, sid, func(e protocol.ToolResultEvent) bool { return e.Name == "shell" }); r.IsError || !strings.Contains(r.RawOutput, "one") {
		t.Fatalf("the first command: %+v", r)
	}
	done := of(t, c, sid, func(protocol.TurnCompleteEvent) bool { return true })
	if done.StopReason != protocol.StopBudget || done.Notice != "the goal's budget is reached: its 1 minutes have passed" {
		t.Fatalf("the goal turn ended: %+v", done)
	}
	g := goalUntil(t, c, sid, protocol.GoalBudgetExhausted)
	if g.Turns != 1 || g.Reason != "its 1 minutes have passed" {
		t.Fatalf("exhausted: %+v", g)
	}
	ran := false // the first command's result came
	for _, u := range c.All(t) {
		switch e := u.Event.(type) {
		case protocol.ToolCallEvent:
			if strings.Contains(string(e.RawInput), "two") {
				t.Errorf("the second command was called past the goal's time: %+v", e)
			}
		case protocol.ToolResultEvent:
			ran = true
		case protocol.AgentMessageChunkEvent:
			if ran {
				t.Errorf("the model was called again past the goal's time: %q", e.Text)
			}
		}
	}
}

// A goal's minutes pass only while it works: not while it is blocked by
// the model (or paused). Resumed after an hour blocked, a goal of 30
// minutes goes on.
func TestMinutesExcludeTheWait(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	clock := newClock(d)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "/when \"[Goal, turn 1]\" /tool goal_blocked {\"reason\":\"need you\"}\n/when \"[Goal, turn 2]\" /tool goal_done {\"summary\":\"went on\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective, Budget: &protocol.GoalBudget{Minutes: ptr(30.0)}}); err != nil {
		t.Fatal(err)
	}
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalBlocked && g.Turns == 1 })
	clock.advance(time.Hour)
	res, err := d.gs.Resume(cl, sid)
	if err != nil || res.Goal.State != protocol.GoalActive || res.Goal.Spent.Minutes != 0 {
		t.Fatalf("resumed after an hour blocked: %+v %v", res, err)
	}
	if g := goalUntil(t, c, sid, protocol.GoalMet); g.Summary != "went on" || g.Spent.Minutes != 0 {
		t.Fatalf("met: %+v", g)
	}
}

// A cleared goal cannot be resumed (nor a met one), and says why.
func TestClearedGoalCannotBeResumed(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_blocked {\"reason\":\"wait\"}"}); err != nil {
		t.Fatal(err)
	}
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalBlocked && g.Turns == 1 })
	if _, err := d.gs.Clear(cl, sid, false); err != nil {
		t.Fatal(err)
	}
	_, err := d.gs.Resume(cl, sid)
	if paramsField(err) != "sessionId" || !strings.Contains(err.Error(), "goal was cleared") {
		t.Fatalf("resuming a cleared goal: %v", err)
	}
	// A new goal set: it is no longer the cleared one.
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: "/tool goal_done {\"summary\":\"ok\"}"}); err != nil {
		t.Fatal(err)
	}
	goalUntil(t, c, sid, protocol.GoalMet)
	if _, err := d.gs.Resume(cl, sid); paramsField(err) != "sessionId" || !strings.Contains(err.Error(), "the goal is met") {
		t.Fatalf("resuming a met goal: %v", err)
	}
}

// A goal's end stops the background processes its turns started (told
// killed, and in the goal's stopped); a goal set with keep leaves them
// running; a process the user's own turn started is not the goal's.
func TestGoalEndStopsWhatItStarted(t *testing.T) {
	h := newHarness(t, full)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	if res := d.Prompt(t, cl, sid, "/tool shell {\"command\":\"sleep 600\",\"background\":true}"); res.StopReason != "end_turn" {
		t.Fatalf("the user's process: %+v", res)
	}
	mine := of(t, c, sid, func(e protocol.ProcessUpdateEvent) bool { return e.Process.State == "running" }).Process.ID
	objective := "/when \"[Goal, turn 1]\" /tool shell {\"command\":\"sleep 601\",\"background\":true}\n/when \"[Goal, turn 2]\" /tool goal_done {\"summary\":\"done\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective}); err != nil {
		t.Fatal(err)
	}
	its := of(t, c, sid, func(e protocol.ProcessUpdateEvent) bool { return e.Process.State == "running" && e.Process.ID != mine }).Process.ID
	if g := goalUntil(t, c, sid, protocol.GoalMet); g.Stopped != 1 {
		t.Fatalf("met: %+v", g)
	}
	if e := of(t, c, sid, func(e protocol.ProcessUpdateEvent) bool { return e.Process.State != "running" }); e.Process.ID != its || e.Process.State != "killed" {
		t.Fatalf("the goal's process after its end: %+v", e.Process)
	}
	s, err := d.M.Lookup(cl, sid)
	if err != nil {
		t.Fatal(err)
	}
	defer s.ProcessTable().Get(mine).Kill(nil, 0)
	states := map[string]string{}
	for _, p := range s.ProcessInfos() {
		states[p.ID] = p.State
	}
	if states[mine] != "running" || states[its] != "killed" {
		t.Fatalf("the processes: %v", states)
	}
}

// full runs the default agent's commands without asking.
func full(c *config.Config) {
	a := c.Agents["default"]
	a.Risk = protocol.RiskFull
	c.Agents["default"] = a
}

// What a goal's turns started outlives its end when the user keeps it:
// a goal set with keep, once met; a goal cleared with keep. Cleared
// without, its process is stopped.
func TestGoalEndKeeps(t *testing.T) {
	h := newHarness(t, full)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	s, err := d.M.Lookup(cl, sid)
	if err != nil {
		t.Fatal(err)
	}
	started := func(n int) string {
		t.Helper()
		e := of(t, c, sid, func(e protocol.ProcessUpdateEvent) bool {
			return e.Process.State == "running" && strings.Contains(e.Process.Command, fmt.Sprint(n))
		})
		return e.Process.ID
	}
	state := func(id string) string {
		for _, p := range s.ProcessInfos() {
			if p.ID == id {
				return p.State
			}
		}
		return ""
	}
	run := func(n int, then string) string {
		return fmt.Sprintf("/when \"[Goal, turn 1]\" /tool shell {\"command\":\"sleep %d\",\"background\":true}\n/when \"[Goal, turn 2]\" /tool %s", n, then)
	}

	// Set with keep, then met: its process runs on.
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: run(701, "goal_done {\"summary\":\"up\"}"), Keep: true}); err != nil {
		t.Fatal(err)
	}
	kept := started(701)
	defer s.ProcessTable().Get(kept).Kill(nil, 0)
	if g := goalUntil(t, c, sid, protocol.GoalMet); !g.Keep || g.Stopped != 0 {
		t.Fatalf("met, kept: %+v", g)
	}
	of(t, c, sid, func(protocol.TurnCompleteEvent) bool { return true })
	if st := state(kept); st != "running" {
		t.Fatalf("the kept goal's process: %q", st)
	}

	// Cleared with keep: its process runs on.
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: run(702, "goal_blocked {\"reason\":\"wait\"}")}); err != nil {
		t.Fatal(err)
	}
	kept2 := started(702)
	defer s.ProcessTable().Get(kept2).Kill(nil, 0)
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalBlocked && g.Turns == 2 })
	if res, err := d.gs.Clear(cl, sid, true); err != nil || res.Goal.Stopped != 0 || !res.Goal.Keep {
		t.Fatalf("cleared, kept: %+v %v", res, err)
	}
	if st := state(kept2); st != "running" {
		t.Fatalf("the process of the goal cleared with keep: %q", st)
	}

	// Cleared without: its process is stopped before clear answers.
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: run(703, "goal_blocked {\"reason\":\"wait\"}")}); err != nil {
		t.Fatal(err)
	}
	gone := started(703)
	goalWith(t, c, sid, func(g protocol.Goal) bool { return g.State == protocol.GoalBlocked && g.Turns == 2 })
	if res, err := d.gs.Clear(cl, sid, false); err != nil || res.Goal.Stopped != 1 {
		t.Fatalf("cleared: %+v %v", res, err)
	}
	if st := state(gone); st != "killed" {
		t.Fatalf("the process of the goal cleared: %q", st)
	}
	if st := state(kept2); st != "running" {
		t.Fatalf("a kept process after another goal's clear: %q", st)
	}
}

// A goal's end stops the sub-agents its turns started: a background
// child still working is cancelled once the goal is met.
func TestGoalEndStopsItsSubagents(t *testing.T) {
	h := newHarness(t, full)
	var gs *goals.Goals
	sd := h.Start(t, func(m *session.Manager) {
		gs = goals.New(m, h.Store, nil)
		subagents.New(m, h.Store, nil)
	})
	d := &daemon{sd, gs}
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	objective := "/when \"[Goal, turn 1]\" /tool task {\"description\":\"long one\",\"prompt\":\"/delay 60000\\nnever done soon\",\"background\":true}\n" +
		"/when \"[Goal, turn 2]\" /tool goal_done {\"summary\":\"done\"}"
	if _, err := d.gs.Set(cl, protocol.SessionGoalParams{SessionID: sid, Objective: objective}); err != nil {
		t.Fatal(err)
	}
	child := of(t, c, sid, func(e protocol.SubagentUpdateEvent) bool { return e.Subagent.State == protocol.SubagentRunning }).Subagent.SessionID
	if g := goalUntil(t, c, sid, protocol.GoalMet); g.Stopped != 1 {
		t.Fatalf("met: %+v", g)
	}
	end := of(t, c, sid, func(e protocol.SubagentUpdateEvent) bool {
		return e.Subagent.SessionID == child && e.Subagent.State != protocol.SubagentRunning
	})
	if end.Subagent.State != protocol.SubagentCancelled {
		t.Fatalf("the goal's sub-agent after its end: %+v", end.Subagent)
	}
}
