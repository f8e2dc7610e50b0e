// Package goals keeps sessions working toward a goal. A session's goal
// keeps it working: when no turn runs and no prompt waits, a goal turn
// starts (its prompt restates the objective word for word and what is
// left of the budget), one at a time, until the model calls goal_done
// (met) or goal_blocked (it needs the user), the budget runs out, three
// goal turns in a row fail, or a client pauses or clears it. The
// people's prompts go first: a goal turn starts only when nothing else
// waits. While a goal turn waits for an approval the goal is blocked
// (reason "approval"), active again once answered. The goal is stored
// with the session; a daemon that starts goes on with the active ones.
//
// It takes part in the sessions' turns as a session.Participant, and
// drives them through the Manager's public face, as the scheduler does.
package goals

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Kind is a goal turn's input kind.
const Kind = "goal"

// failuresToPause is how many failed goal turns in a row pause it.
const failuresToPause = 3

// MaxObjective bounds an objective, in bytes.
const MaxObjective = 16384

// state is a session's goal as stored: the wire's, and what it counts
// from (the session's usage when it was set).
type state struct {
	protocol.Goal
	BaseUSD    float64 `json:"baseUsd"`
	BaseTokens int64   `json:"baseTokens"`
	Failures   int     `json:"failures,omitempty"`
}

// box is a session's goal as kept with the session: its lock (taken
// before any of the session's) and the goal (nil: none).
type box struct {
	mu sync.Mutex
	g  *state
}

// Goals runs the sessions' goals.
type Goals struct {
	session.Moments
	m     *session.Manager
	store *store.Store
	log   *slog.Logger
	// defaultUSD is the budget of a goal set with none (0: no limit).
	defaultUSD func() float64
}

// New makes the goals of m's sessions, stored in st, and joins them to
// every session's turns. defaultUSD says the budget of a goal set with
// none, as the config says now.
func New(m *session.Manager, st *store.Store, log *slog.Logger, defaultUSD func() float64) *Goals {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Goals{m: m, store: st, log: log, defaultUSD: defaultUSD}
	m.Join(g)
	return g
}

// boxOf is s's goal box.
func boxOf(s *session.Session) *box {
	return s.Keep(boxKey{}, func() any { return &box{} }).(*box)
}

type boxKey struct{}

// spentOn is g with what s has spent on it so far.
func spentOn(s *session.Session, g state) protocol.Goal {
	u := s.Spent()
	v := g.Goal
	v.Spent.USD = max(u.CostUSD-g.BaseUSD, 0)
	v.Spent.Tokens = max(u.InputTokens+u.OutputTokens-g.BaseTokens, 0)
	if g.State == protocol.GoalActive || g.State == protocol.GoalBlocked {
		v.Spent.Minutes = time.Since(time.UnixMilli(g.StartedMs)).Minutes()
	}
	return v
}

// setLocked changes s's goal (b.mu held): stored, told (goal_update).
// nil clears it.
func (gs *Goals) setLocked(s *session.Session, b *box, g *state) {
	if g == nil {
		b.g = nil
		gs.store.SetGoal(s.ID(), nil, false)
		return
	}
	v := spentOn(s, *g)
	g.Spent = v.Spent
	b.g = g
	body, _ := json.Marshal(g)
	gs.store.SetGoal(s.ID(), body, g.State == protocol.GoalActive || g.State == protocol.GoalBlocked)
	s.Publish(protocol.GoalUpdateEvent{Goal: v})
}

// view is s's goal with its spending now (nil: none).
func view(s *session.Session) *protocol.Goal {
	b := boxOf(s)
	b.mu.Lock()
	g := b.g
	b.mu.Unlock()
	if g == nil {
		return nil
	}
	v := spentOn(s, *g)
	return &v
}

// Set sets (or replaces) a session's goal (session/goal) and starts its
// first turn when the session is idle.
func (gs *Goals) Set(c *session.Client, p protocol.SessionGoalParams) (*protocol.SessionGoalResult, error) {
	obj := strings.TrimSpace(p.Objective)
	if obj == "" {
		return nil, &protocol.ParamsError{Field: "objective", Reason: "is required"}
	}
	if len(obj) > MaxObjective {
		return nil, &protocol.ParamsError{Field: "objective", Reason: fmt.Sprintf("at most %d bytes", MaxObjective)}
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
	if b == (protocol.GoalBudget{}) && gs.defaultUSD != nil {
		if d := gs.defaultUSD(); d > 0 {
			b.USD = &d
		}
	}
	s, err := gs.m.Lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	u := s.Spent()
	g := &state{Goal: protocol.Goal{Objective: obj, State: protocol.GoalActive, Budget: b, StartedMs: time.Now().UnixMilli()},
		BaseUSD: u.CostUSD, BaseTokens: u.InputTokens + u.OutputTokens}
	bx := boxOf(s)
	bx.mu.Lock()
	gs.setLocked(s, bx, g)
	bx.mu.Unlock()
	gs.Idle(s)
	return &protocol.SessionGoalResult{SessionID: s.ID(), Goal: view(s)}, nil
}

// Pause pauses a session's goal (session/goal/pause); a met goal has
// nothing left to pause (a paused one could be resumed, and a met goal
// may not be).
func (gs *Goals) Pause(c *session.Client, id string) (*protocol.SessionGoalResult, error) {
	return gs.change(c, id, func(g *state) error {
		if g.State == protocol.GoalMet || g.State == protocol.GoalCleared {
			return &protocol.ParamsError{Field: "sessionId", Reason: "the goal is " + g.State + ": nothing to pause"}
		}
		g.State, g.Reason = protocol.GoalPaused, "paused by "+who(c)
		return nil
	})
}

// Resume makes a paused or blocked goal active again
// (session/goal/resume).
func (gs *Goals) Resume(c *session.Client, id string) (*protocol.SessionGoalResult, error) {
	return gs.change(c, id, func(g *state) error {
		if g.State == protocol.GoalMet || g.State == protocol.GoalCleared {
			return &protocol.ParamsError{Field: "sessionId", Reason: "the goal is " + g.State + ": set a new one (session/goal)"}
		}
		g.State, g.Reason, g.Failures = protocol.GoalActive, "", 0
		return nil
	})
}

// Clear ends a session's goal (session/goal/clear): told cleared, then
// gone.
func (gs *Goals) Clear(c *session.Client, id string) (*protocol.SessionGoalResult, error) {
	return gs.change(c, id, func(g *state) error {
		g.State, g.Reason = protocol.GoalCleared, "cleared by "+who(c)
		return nil
	})
}

// change applies f to a copy of the session's goal, then stores and
// tells it; an active goal goes on at once when the session is idle.
func (gs *Goals) change(c *session.Client, id string, f func(*state) error) (*protocol.SessionGoalResult, error) {
	s, err := gs.m.Lookup(c, id)
	if err != nil {
		return nil, err
	}
	b := boxOf(s)
	b.mu.Lock()
	if b.g == nil {
		b.mu.Unlock()
		return nil, &protocol.ParamsError{Field: "sessionId", Reason: "the session has no goal (session/goal sets one)"}
	}
	ng := *b.g
	if err := f(&ng); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	gs.setLocked(s, b, &ng)
	v := spentOn(s, ng)
	if ng.State == protocol.GoalCleared {
		gs.setLocked(s, b, nil)
	}
	b.mu.Unlock()
	if ng.State == protocol.GoalActive {
		gs.Idle(s)
	}
	return &protocol.SessionGoalResult{SessionID: id, Goal: &v}, nil
}

func who(c *session.Client) string {
	if c == nil {
		return "the daemon"
	}
	if n := c.Name(); n != "" {
		return n
	}
	return c.ID()
}

// Idle implements session.Participant: the goal's next turn starts when
// the goal is active and nothing else runs or waits; past its budget the
// goal ends budget_exhausted instead.
func (gs *Goals) Idle(s *session.Session) {
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.g
	if g == nil || g.State != protocol.GoalActive {
		return
	}
	v := spentOn(s, *g)
	if why := overBudget(v); why != "" {
		ng := *g
		ng.State, ng.Reason = protocol.GoalBudgetExhausted, why
		gs.setLocked(s, b, &ng)
		return
	}
	if _, err := s.StartIfIdle(prompt(v), Kind); err != nil {
		gs.log.Warn("a goal's turn could not start", "sessionId", s.ID(), "err", err)
	}
}

// Working implements session.Participant: an active goal is work an
// ephemeral daemon stays for (a paused, blocked or ended one waits for
// the user instead).
func (gs *Goals) Working(s *session.Session, w *protocol.StayingFor) {
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.g != nil && b.g.State == protocol.GoalActive {
		w.Goals++
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

// prompt is a goal turn's prompt: the objective word for word, and what
// is left of the budget.
func prompt(g protocol.Goal) string {
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

// TurnEnded implements session.Participant: a goal turn that ended is
// counted: its spending, its failure (three in a row pause the goal; a
// cancelled one pauses it at once).
func (gs *Goals) TurnEnded(s *session.Session, kind string, res protocol.SessionPromptResult) {
	if kind != Kind {
		return
	}
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.g == nil {
		return
	}
	ng := *b.g
	ng.Turns++
	switch {
	case res.StopReason == agent.StopCancelled && ng.State == protocol.GoalActive:
		ng.State, ng.Reason = protocol.GoalPaused, "its turn was cancelled"
	case res.Error != nil:
		ng.Failures++
		if ng.Failures >= failuresToPause && ng.State == protocol.GoalActive {
			ng.State, ng.Reason = protocol.GoalPaused, fmt.Sprintf("its last %d turns failed; the last: %s", ng.Failures, res.Error.Message)
		}
	default:
		ng.Failures = 0
	}
	gs.setLocked(s, b, &ng)
}

// Asking implements session.Participant: the goal is blocked while its
// turn waits for an approval, active again once answered.
func (gs *Goals) Asking(s *session.Session, kind string, a session.Ask) {
	if kind != Kind {
		return
	}
	asking := a.Resolved == nil
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.g
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
	gs.setLocked(s, b, &ng)
}

// host is the session's goal as its tools reach it.
type host struct {
	gs *Goals
	s  *session.Session
}

func (h host) Done(summary string) error { return h.gs.ends(h.s, protocol.GoalMet, "", summary) }

func (h host) Blocked(reason string) error { return h.gs.ends(h.s, protocol.GoalBlocked, reason, "") }

func (gs *Goals) ends(s *session.Session, st, reason, summary string) error {
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.g
	if g == nil || (g.State != protocol.GoalActive && g.State != protocol.GoalBlocked) {
		return fmt.Errorf("no active goal")
	}
	ng := *g
	ng.State, ng.Reason, ng.Summary = st, reason, summary
	gs.setLocked(s, b, &ng)
	return nil
}

// TurnStarting implements session.Participant: a turn gets the goal's
// tools while the goal is active.
func (gs *Goals) TurnStarting(s *session.Session, _ string, a *agent.Agent) {
	b := boxOf(s)
	b.mu.Lock()
	g := b.g
	b.mu.Unlock()
	if g == nil || (g.State != protocol.GoalActive && g.State != protocol.GoalBlocked) {
		return
	}
	a.Tools = append(a.Tools[:len(a.Tools):len(a.Tools)], tool.GoalTools...)
	a.Goal = host{gs, s}
}

// Resumed implements session.Participant: a resumed session's stored
// goal is read.
func (gs *Goals) Resumed(s *session.Session, rec *store.Session) {
	if len(rec.Goal) == 0 {
		return
	}
	var g state
	if json.Unmarshal(rec.Goal, &g) != nil {
		return
	}
	b := boxOf(s)
	b.mu.Lock()
	b.g = &g
	b.mu.Unlock()
}

// Describe implements session.Participant: session/get shows the goal
// with its spending now.
func (gs *Goals) Describe(s *session.Session, l *archive.Live) { l.Goal = view(s) }

// Continue goes on with the active goals a daemon's end left (after the
// cut turns went on: a cut goal turn goes on first).
func (gs *Goals) Continue(ctx context.Context) {
	ids, err := gs.store.ActiveGoals(ctx)
	if err != nil {
		gs.log.Error("the active goals could not be read", "err", err)
		return
	}
	for _, id := range ids {
		s, err := gs.m.Load(ctx, id)
		if err != nil {
			gs.log.Error("a session with an active goal could not be loaded", "sessionId", id, "err", err)
			continue
		}
		gs.Idle(s)
	}
}
