package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Goals. A session's goal keeps it working: when no turn runs and no
// prompt waits, a goal turn starts (its prompt restates the objective
// word for word and what is left of the budget), one at a time, until
// the model calls goal_done (met) or goal_blocked (it needs the user),
// the budget runs out, three goal turns in a row fail, or a client
// pauses or clears it. The people's prompts go first: a goal turn starts
// only when nothing else waits. While a goal turn waits for an approval
// the goal is blocked (reason "approval"), active again once answered.
// The goal is stored with the session; a daemon that starts goes on
// with the active ones.

// kindGoal is a goal turn's input kind.
const kindGoal = "goal"

// goalFailuresToPause is how many failed goal turns in a row pause it.
const goalFailuresToPause = 3

// goalState is a session's goal as stored: the wire's, and what it
// counts from (the session's usage when it was set).
type goalState struct {
	protocol.Goal
	BaseUSD    float64 `json:"baseUsd"`
	BaseTokens int64   `json:"baseTokens"`
	Failures   int     `json:"failures,omitempty"`
}

// goalView is the session's goal with its spending now (nil: none).
func (s *Session) goalView() *protocol.Goal {
	s.gmu.Lock()
	g := s.goal
	s.gmu.Unlock()
	if g == nil {
		return nil
	}
	v := s.spentOn(*g)
	return &v
}

// spentOn is g with what it has spent so far.
func (s *Session) spentOn(g goalState) protocol.Goal {
	s.mu.Lock()
	u := s.spent
	s.mu.Unlock()
	v := g.Goal
	v.Spent.USD = max(u.CostUSD-g.BaseUSD, 0)
	v.Spent.Tokens = max(u.InputTokens+u.OutputTokens-g.BaseTokens, 0)
	if g.State == protocol.GoalActive || g.State == protocol.GoalBlocked {
		v.Spent.Minutes = time.Since(time.UnixMilli(g.StartedMs)).Minutes()
	}
	return v
}

// setGoalLocked changes the goal (s.gmu held): stored, told
// (goal_update). nil clears it.
func (s *Session) setGoalLocked(g *goalState) {
	if g == nil {
		s.goal = nil
		s.m.store.SetGoal(s.id, nil, false)
		return
	}
	v := s.spentOn(*g)
	g.Spent = v.Spent
	s.goal = g
	body, _ := json.Marshal(g)
	s.m.store.SetGoal(s.id, body, g.State == protocol.GoalActive || g.State == protocol.GoalBlocked)
	s.emit(protocol.GoalUpdateEvent{Goal: v})
}

// SetGoal sets (or replaces) a session's goal (session/goal) and starts
// its first turn when the session is idle.
func (m *Manager) SetGoal(c *Client, p protocol.SessionGoalParams) (*protocol.SessionGoalResult, error) {
	obj := strings.TrimSpace(p.Objective)
	if obj == "" {
		return nil, &protocol.ParamsError{Field: "objective", Reason: "is required"}
	}
	if len(obj) > 16384 {
		return nil, &protocol.ParamsError{Field: "objective", Reason: "at most 16384 bytes"}
	}
	var b protocol.GoalBudget
	if p.Budget != nil {
		b = *p.Budget
	}
	switch {
	case b.USD != nil && *b.USD <= 0:
		return nil, &protocol.ParamsError{Field: "budget.usd", Reason: "more than 0"}
	case b.Tokens != nil && *b.Tokens <= 0:
		return nil, &protocol.ParamsError{Field: "budget.tokens", Reason: "more than 0"}
	case b.Minutes != nil && *b.Minutes <= 0:
		return nil, &protocol.ParamsError{Field: "budget.minutes", Reason: "more than 0"}
	case b.Turns != nil && *b.Turns <= 0:
		return nil, &protocol.ParamsError{Field: "budget.turns", Reason: "more than 0"}
	}
	if b == (protocol.GoalBudget{}) {
		if d := m.conf().cfg.Goals.DefaultBudgetUSD; d > 0 {
			b.USD = &d
		}
	}
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	u := s.spent
	s.mu.Unlock()
	g := &goalState{Goal: protocol.Goal{Objective: obj, State: protocol.GoalActive, Budget: b, StartedMs: time.Now().UnixMilli()},
		BaseUSD: u.CostUSD, BaseTokens: u.InputTokens + u.OutputTokens}
	s.gmu.Lock()
	s.setGoalLocked(g)
	s.gmu.Unlock()
	s.goalNext()
	return &protocol.SessionGoalResult{SessionID: s.id, Goal: s.goalView()}, nil
}

// GoalControl pauses, resumes or clears a session's goal
// (session/goal/pause, /resume, /clear).
func (m *Manager) GoalControl(c *Client, id, method string) (*protocol.SessionGoalResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	s.gmu.Lock()
	g := s.goal
	if g == nil {
		s.gmu.Unlock()
		return nil, &protocol.ParamsError{Field: "sessionId", Reason: "the session has no goal (session/goal sets one)"}
	}
	ng := *g
	var view *protocol.Goal
	switch method {
	case protocol.MethodSessionGoalPause:
		ng.State, ng.Reason = protocol.GoalPaused, "paused by "+who(c)
	case protocol.MethodSessionGoalResume:
		if g.State == protocol.GoalMet || g.State == protocol.GoalCleared {
			s.gmu.Unlock()
			return nil, &protocol.ParamsError{Field: "sessionId", Reason: "the goal is " + g.State + ": set a new one (session/goal)"}
		}
		ng.State, ng.Reason, ng.Failures = protocol.GoalActive, "", 0
	case protocol.MethodSessionGoalClear:
		ng.State, ng.Reason = protocol.GoalCleared, "cleared by "+who(c)
	}
	s.setGoalLocked(&ng)
	v := s.spentOn(ng)
	view = &v
	if ng.State == protocol.GoalCleared {
		s.setGoalLocked(nil)
	}
	s.gmu.Unlock()
	if ng.State == protocol.GoalActive {
		s.goalNext()
	}
	return &protocol.SessionGoalResult{SessionID: id, Goal: view}, nil
}

func who(c *Client) string {
	if c == nil {
		return "the daemon"
	}
	if n := c.Name(); n != "" {
		return n
	}
	return c.ID()
}

// goalNext starts the goal's next turn when the goal is active, no turn
// runs and no prompt waits; past its budget the goal ends
// budget_exhausted instead.
func (s *Session) goalNext() {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	g := s.goal
	if g == nil || g.State != protocol.GoalActive || !s.t.idle() || s.t.queued() || s.t.shutting() {
		return
	}
	v := s.spentOn(*g)
	if why := overBudget(v); why != "" {
		ng := *g
		ng.State, ng.Reason = protocol.GoalBudgetExhausted, why
		s.setGoalLocked(&ng)
		return
	}
	j := &job{prompt: goalPrompt(v), done: make(chan protocol.SessionPromptResult, 1), goal: true,
		in: &input{id: protocol.NewID("in_", 8), kind: kindGoal, ended: make(chan struct{})}}
	if err := s.enqueue(j); err != nil {
		s.m.log.Warn("a goal's turn could not start", "sessionId", s.id, "err", err)
	}
}

// overBudget says which of the goal's limits its spending reached ("":
// none).
func overBudget(g protocol.Goal) string {
	b, sp := g.Budget, g.Spent
	switch {
	case b.USD != nil && sp.USD >= *b.USD:
		return fmt.Sprintf("its budget of $%.4f is spent ($%.4f)", *b.USD, sp.USD)
	case b.Tokens != nil && sp.Tokens >= *b.Tokens:
		return fmt.Sprintf("its budget of %d tokens is spent (%d)", *b.Tokens, sp.Tokens)
	case b.Minutes != nil && sp.Minutes >= *b.Minutes:
		return fmt.Sprintf("its %.0f minutes have passed", *b.Minutes)
	case b.Turns != nil && g.Turns >= *b.Turns:
		return fmt.Sprintf("its %d turns have run", *b.Turns)
	}
	return ""
}

// goalPrompt is a goal turn's prompt: the objective word for word, and
// what is left of the budget.
func goalPrompt(g protocol.Goal) string {
	var left []string
	b, sp := g.Budget, g.Spent
	if b.USD != nil {
		left = append(left, fmt.Sprintf("$%.4f of $%.4f", *b.USD-sp.USD, *b.USD))
	}
	if b.Tokens != nil {
		left = append(left, fmt.Sprintf("%d of %d tokens", *b.Tokens-sp.Tokens, *b.Tokens))
	}
	if b.Minutes != nil {
		left = append(left, fmt.Sprintf("%.0f of %.0f minutes", *b.Minutes-sp.Minutes, *b.Minutes))
	}
	if b.Turns != nil {
		left = append(left, fmt.Sprintf("%d of %d turns", *b.Turns-g.Turns, *b.Turns))
	}
	budget := "no limit"
	if len(left) > 0 {
		budget = strings.Join(left, ", ")
	}
	return fmt.Sprintf("[Goal, turn %d] Work toward this objective:\n\n%s\n\nBudget left: %s. When the objective is fully met and checked, call goal_done with a summary; if you cannot go on without the user, call goal_blocked with the reason. Otherwise do the next step.",
		g.Turns+1, g.Objective, budget)
}

// goalTurnEnded counts a goal turn that ended: its spending, its failure
// (three in a row pause the goal; a cancelled one pauses it at once).
func (s *Session) goalTurnEnded(res protocol.SessionPromptResult) {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	g := s.goal
	if g == nil {
		return
	}
	ng := *g
	ng.Turns++
	switch {
	case res.StopReason == agent.StopCancelled && ng.State == protocol.GoalActive:
		ng.State, ng.Reason = protocol.GoalPaused, "its turn was cancelled"
	case res.Error != nil:
		ng.Failures++
		if ng.Failures >= goalFailuresToPause && ng.State == protocol.GoalActive {
			ng.State, ng.Reason = protocol.GoalPaused, fmt.Sprintf("its last %d turns failed; the last: %s", ng.Failures, res.Error.Message)
		}
	default:
		ng.Failures = 0
	}
	s.setGoalLocked(&ng)
}

// goalAsks marks the goal blocked while its turn waits for an approval
// (asking), active again once answered.
func (s *Session) goalAsks(asking bool) {
	if !s.t.goalTurn() {
		return
	}
	s.gmu.Lock()
	defer s.gmu.Unlock()
	g := s.goal
	if g == nil {
		return
	}
	ng := *g
	switch {
	case asking && g.State == protocol.GoalActive:
		ng.State, ng.Reason = protocol.GoalBlocked, "approval"
	case !asking && g.State == protocol.GoalBlocked && g.Reason == "approval":
		ng.State, ng.Reason = protocol.GoalActive, ""
	default:
		return
	}
	s.setGoalLocked(&ng)
}

// goalHost is the session's goal as its tools reach it.
type goalHost struct{ s *Session }

func (h goalHost) Done(summary string) error {
	return h.s.goalEnds(protocol.GoalMet, "", summary)
}

func (h goalHost) Blocked(reason string) error {
	return h.s.goalEnds(protocol.GoalBlocked, reason, "")
}

func (s *Session) goalEnds(state, reason, summary string) error {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	g := s.goal
	if g == nil || (g.State != protocol.GoalActive && g.State != protocol.GoalBlocked) {
		return fmt.Errorf("no active goal")
	}
	ng := *g
	ng.State, ng.Reason, ng.Summary = state, reason, summary
	s.setGoalLocked(&ng)
	return nil
}

// goalTools gives a turn the goal's tools while the goal is active.
func (s *Session) goalTools(a *agent.Agent) {
	s.gmu.Lock()
	g := s.goal
	s.gmu.Unlock()
	if g == nil || (g.State != protocol.GoalActive && g.State != protocol.GoalBlocked) {
		return
	}
	a.Tools = append(a.Tools[:len(a.Tools):len(a.Tools)], tool.GoalTools...)
	a.Goal = goalHost{s}
}

// loadGoal reads a resumed session's stored goal.
func (s *Session) loadGoal(body []byte) {
	if len(body) == 0 {
		return
	}
	var g goalState
	if json.Unmarshal(body, &g) != nil {
		return
	}
	s.gmu.Lock()
	s.goal = &g
	s.gmu.Unlock()
}

// ResumeGoals goes on with the active goals a daemon's end left (after
// ContinueInterrupted: a cut goal turn goes on first).
func (m *Manager) ResumeGoals(ctx context.Context) {
	ids, err := m.store.ActiveGoals(ctx)
	if err != nil {
		m.log.Error("the active goals could not be read", "err", err)
		return
	}
	for _, id := range ids {
		m.mu.Lock()
		s := m.live[id]
		m.mu.Unlock()
		if s == nil {
			rec, err := m.store.GetSession(ctx, id)
			if err != nil {
				continue
			}
			if s, err = m.resume(ctx, rec); err != nil {
				m.log.Error("a session with an active goal could not be loaded", "sessionId", id, "err", err)
				continue
			}
			m.mu.Lock()
			if other := m.live[id]; other != nil {
				s = other
			} else {
				m.live[id] = s
			}
			m.mu.Unlock()
		}
		s.goalNext()
	}
}
