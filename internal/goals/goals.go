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

// The bounds. A goal always has a budget: the limits of turns, minutes
// and tokens not given take [goals]' defaults (and its cost
// default_budget_usd, when set); a cost limit on a model with no known
// price never binds, so it is refused unless a token limit is given
// too. Its time and cost are checked before each model call and each
// tool call of its turns (the agent's Bound), not only between turns;
// its minutes count only while it is active (or waits for an approval),
// not while paused or blocked. When it ends (met, out of budget,
// cleared) the background processes and sub-agents its turns started
// are stopped, unless it was set, or cleared, with keep.

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
	// ActiveUs is the time it counted before its current stretch, in
	// microseconds; SinceUs when that stretch began (Unix microseconds;
	// 0: it is not counting now: paused, blocked, ended).
	ActiveUs int64 `json:"activeUs,omitempty"`
	SinceUs  int64 `json:"sinceUs,omitempty"`
}

// counting says whether g's minutes pass now: while it is active or its
// turn waits for an approval.
func counting(g protocol.Goal) bool {
	return g.State == protocol.GoalActive || (g.State == protocol.GoalBlocked && g.Reason == "approval")
}

// clock starts or stops g's minutes as its state says, at now.
func (g *state) clock(now time.Time) {
	us := now.UnixMicro()
	switch on := counting(g.Goal); {
	case on && g.SinceUs == 0:
		g.SinceUs = us
	case !on && g.SinceUs != 0:
		g.ActiveUs += max(us-g.SinceUs, 0)
		g.SinceUs = 0
	}
}

// minutes is how long g has counted, at now.
func (g state) minutes(now time.Time) float64 {
	us := g.ActiveUs
	if g.SinceUs != 0 {
		us += max(now.UnixMicro()-g.SinceUs, 0)
	}
	return float64(us) / 60e6
}

// box is a session's goal as kept with the session: its lock (taken
// before any of the session's), the goal (nil: none) and what its turns
// started.
type box struct {
	mu sync.Mutex
	g  *state
	// cleared: the last goal was cleared (resume says so).
	cleared bool
	// gen counts the goals set; turnGen is the goal (gen) whose turn
	// runs, so a turn of a goal since replaced is not counted as the
	// new one's.
	gen, turnGen int
	// inTurn: a goal turn runs; before are the ids of the session's
	// background processes when it started.
	inTurn bool
	before map[string]bool
	// procs and children are what the goal's turns started: background
	// processes (ids) and sub-agents (session ids).
	procs, children map[string]bool
	// stopNext: the goal that started this session (a sub-agent) ended
	// while its turn was about to begin: that turn is cancelled as it
	// begins.
	stopNext bool
}

// startedLocked adds the background processes the running goal turn
// started so far to b.procs (b.mu held).
func (b *box) startedLocked(s *session.Session) {
	t := s.ProcessTable()
	if !b.inTurn || t == nil {
		return
	}
	for _, p := range t.RunningProcesses() {
		if !b.before[p.ID()] {
			if b.procs == nil {
				b.procs = map[string]bool{}
			}
			b.procs[p.ID()] = true
		}
	}
}

// target is what a goal's end stops: a session's background process, or
// a sub-agent's session (its turn and its processes).
type target struct {
	s       *session.Session
	proc    string // "": the whole child
	isChild bool
}

// Goals runs the sessions' goals.
type Goals struct {
	session.Moments
	m     *session.Manager
	store *store.Store
	log   *slog.Logger
	// now is the clock (a test's own).
	now func() time.Time
}

// New makes the goals of m's sessions, stored in st, and joins them to
// every session's turns; a goal's default budget is the config's in
// force ([goals]).
func New(m *session.Manager, st *store.Store, log *slog.Logger) *Goals {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &Goals{m: m, store: st, log: log, now: time.Now}
	m.Join(g)
	return g
}

// boxOf is s's goal box.
func boxOf(s *session.Session) *box {
	return s.Keep(boxKey{}, func() any { return &box{} }).(*box)
}

type boxKey struct{}

// spentOn is g with what s has spent on it so far, at now.
func spentOn(s *session.Session, g state, now time.Time) protocol.Goal {
	u := s.Spent()
	v := g.Goal
	v.Spent.USD = max(u.CostUSD-g.BaseUSD, 0)
	v.Spent.Tokens = max(u.InputTokens+u.OutputTokens-g.BaseTokens, 0)
	v.Spent.Minutes = g.minutes(now)
	return v
}

// ended says whether state st is a goal's end.
func ended(st string) bool {
	return st == protocol.GoalMet || st == protocol.GoalBudgetExhausted || st == protocol.GoalCleared
}

// setLocked changes s's goal (b.mu held): stored, told (goal_update).
// nil clears it. A goal that ends takes what its turns started, to be
// stopped (stop, after b.mu is released) unless it is kept.
func (gs *Goals) setLocked(s *session.Session, b *box, g *state) (stop []target) {
	if g == nil {
		b.g = nil
		gs.store.SetGoal(s.ID(), nil, false)
		return nil
	}
	if ended(g.State) && (b.g == nil || !ended(b.g.State)) {
		stop = gs.endingLocked(s, b, g)
	}
	g.clock(gs.now())
	v := spentOn(s, *g, gs.now())
	g.Spent = v.Spent
	b.g = g
	body, _ := json.Marshal(g)
	gs.store.SetGoal(s.ID(), body, g.State == protocol.GoalActive || g.State == protocol.GoalBlocked)
	s.Publish(protocol.GoalUpdateEvent{Goal: v})
	return stop
}

// endingLocked takes what the ending goal g's turns started and that
// still runs (b.mu held): nothing when g keeps it.
func (gs *Goals) endingLocked(s *session.Session, b *box, g *state) []target {
	b.startedLocked(s)
	procs, children := b.procs, b.children
	b.procs, b.children = nil, nil
	if g.Keep {
		return nil
	}
	var out []target
	if t := s.ProcessTable(); t != nil {
		for id := range procs {
			if p := t.Get(id); p != nil && p.Running() {
				out = append(out, target{s: s, proc: id})
			}
		}
	}
	for id := range children {
		if c, err := gs.m.Lookup(nil, id); err == nil {
			out = append(out, target{s: c, isChild: true})
		}
	}
	g.Stopped = len(out)
	return out
}

// stop stops what an ended goal's turns started: its background
// processes, and its sub-agents' turns and processes. It returns once
// they ended.
func (gs *Goals) stop(ts []target) {
	sig, _ := tool.SignalNamed("")
	for _, t := range ts {
		if t.isChild {
			gs.cancel(t.s)
			if tb := t.s.ProcessTable(); tb != nil {
				for _, p := range tb.RunningProcesses() {
					p.Kill(sig, tool.KillGrace)
				}
			}
			continue
		}
		if tb := t.s.ProcessTable(); tb != nil {
			if p := tb.Get(t.proc); p != nil {
				p.Kill(sig, tool.KillGrace)
			}
		}
	}
}

// view is s's goal with its spending now (nil: none).
func (gs *Goals) view(s *session.Session) *protocol.Goal {
	b := boxOf(s)
	b.mu.Lock()
	g := b.g
	b.mu.Unlock()
	if g == nil {
		return nil
	}
	v := spentOn(s, *g, gs.now())
	return &v
}

// Set sets (or replaces) a session's goal (session/goal) and starts its
// first turn when the session is idle. The limits not given take the
// config's defaults; a cost limit on a model with no known price needs
// a token limit beside it.
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
	s, err := gs.m.Lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	if b.USD != nil && b.Tokens == nil && !s.Priced() {
		return nil, &protocol.ParamsError{Field: "budget.usd", Reason: "the session's model has no known price, so a cost limit would never bind: give budget.tokens too (or set the provider's [pricing])"}
	}
	gs.defaults(&b)
	u := s.Spent()
	g := &state{Goal: protocol.Goal{Objective: obj, State: protocol.GoalActive, Budget: b, StartedMs: gs.now().UnixMilli(), Keep: p.Keep},
		BaseUSD: u.CostUSD, BaseTokens: u.InputTokens + u.OutputTokens}
	bx := boxOf(s)
	bx.mu.Lock()
	var stop []target
	if old := bx.g; old != nil && !ended(old.State) {
		// The goal replaced ends: what its turns started goes with it
		// (unless it kept it).
		o := *old
		stop = gs.endingLocked(s, bx, &o)
	}
	bx.cleared = false
	bx.gen++
	gs.setLocked(s, bx, g)
	bx.mu.Unlock()
	gs.stop(stop)
	gs.Idle(s)
	return &protocol.SessionGoalResult{SessionID: s.ID(), Goal: gs.view(s)}, nil
}

// defaults fills the limits b lacks with the config's ([goals]): every
// goal has a limit of turns, minutes and tokens.
func (gs *Goals) defaults(b *protocol.GoalBudget) {
	d := gs.m.Config().Goals
	if b.USD == nil && d.DefaultBudgetUSD > 0 {
		b.USD = &d.DefaultBudgetUSD
	}
	if b.Turns == nil && d.DefaultTurns > 0 {
		b.Turns = &d.DefaultTurns
	}
	if b.Minutes == nil && d.DefaultMinutes > 0 {
		m := float64(d.DefaultMinutes)
		b.Minutes = &m
	}
	if b.Tokens == nil && d.DefaultTokens > 0 {
		b.Tokens = &d.DefaultTokens
	}
}

// Pause pauses a session's goal (session/goal/pause); an ended goal has
// nothing left to pause (a paused one could be resumed, and an ended
// goal may not be).
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
// (session/goal/resume); a met or cleared one is over.
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
// gone. What its turns started is stopped unless keep.
func (gs *Goals) Clear(c *session.Client, id string, keep bool) (*protocol.SessionGoalResult, error) {
	return gs.change(c, id, func(g *state) error {
		g.State, g.Reason = protocol.GoalCleared, "cleared by "+who(c)
		g.Keep = g.Keep || keep
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
		why := "the session has no goal (session/goal sets one)"
		if b.cleared {
			why = "the session's goal was cleared: set a new one (session/goal)"
		}
		b.mu.Unlock()
		return nil, &protocol.ParamsError{Field: "sessionId", Reason: why}
	}
	ng := *b.g
	if err := f(&ng); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	stop := gs.setLocked(s, b, &ng)
	v := spentOn(s, ng, gs.now())
	if ng.State == protocol.GoalCleared {
		gs.setLocked(s, b, nil)
		b.cleared = true
	}
	b.mu.Unlock()
	gs.stop(stop)
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
	g := b.g
	if g == nil || g.State != protocol.GoalActive {
		b.mu.Unlock()
		return
	}
	v := spentOn(s, *g, gs.now())
	if why := overBudget(v); why != "" {
		ng := *g
		ng.State, ng.Reason = protocol.GoalBudgetExhausted, why
		stop := gs.setLocked(s, b, &ng)
		b.mu.Unlock()
		gs.stop(stop)
		return
	}
	defer b.mu.Unlock()
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
		return fmt.Sprintf("its %s minutes have passed", minutesText(*b.Minutes))
	case b.Turns != nil && g.Turns >= *b.Turns:
		return fmt.Sprintf("its %d turns have run", *b.Turns)
	}
	return ""
}

// minutesText is m minutes as said: whole, or with its fraction.
func minutesText(m float64) string {
	if m == float64(int64(m)) {
		return fmt.Sprintf("%.0f", m)
	}
	return fmt.Sprintf("%.2f", m)
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
		left = append(left, fmt.Sprintf("%.0f of %s minutes", *b.Minutes-sp.Minutes, minutesText(*b.Minutes)))
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
	b.startedLocked(s)
	b.inTurn, b.before = false, nil
	if b.g == nil || b.turnGen != b.gen {
		// No goal now, or another: the turn was a goal's since replaced.
		b.mu.Unlock()
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
	stop := gs.setLocked(s, b, &ng)
	b.mu.Unlock()
	gs.stop(stop)
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
	g := b.g
	if g == nil || (g.State != protocol.GoalActive && g.State != protocol.GoalBlocked) {
		b.mu.Unlock()
		return fmt.Errorf("no active goal")
	}
	ng := *g
	ng.State, ng.Reason, ng.Summary = st, reason, summary
	stop := gs.setLocked(s, b, &ng)
	b.mu.Unlock()
	gs.stop(stop)
	return nil
}

// TurnStarting implements session.Participant: a turn gets the goal's
// tools while the goal is active; a goal turn is bounded by its budget
// (before each model call and tool call), and what it starts is the
// goal's: its background processes, and its sub-agents (Emitted).
func (gs *Goals) TurnStarting(s *session.Session, kind string, a *agent.Agent) {
	b := boxOf(s)
	b.mu.Lock()
	if b.stopNext {
		// A sub-agent whose goal ended as this turn was about to begin.
		b.stopNext = false
		b.mu.Unlock()
		gs.m.Cancel(nil, s.ID())
		return
	}
	g := b.g
	if kind == Kind {
		b.inTurn, b.before, b.turnGen = true, map[string]bool{}, b.gen
		if t := s.ProcessTable(); t != nil {
			for _, p := range t.RunningProcesses() {
				b.before[p.ID()] = true
			}
		}
	}
	b.mu.Unlock()
	if g == nil || (g.State != protocol.GoalActive && g.State != protocol.GoalBlocked) {
		return
	}
	a.Tools = append(a.Tools[:len(a.Tools):len(a.Tools)], tool.GoalTools...)
	a.Goal = host{gs, s}
	if kind == Kind {
		a.Bound = func() string { return gs.bound(s) }
	}
}

// Emitted implements session.Participant: a sub-agent a goal turn's
// task tool started (its result names the child) is the goal's.
func (gs *Goals) Emitted(s *session.Session, e protocol.EventBody) {
	r, ok := e.(protocol.ToolResultEvent)
	if !ok || len(r.Details) == 0 {
		return
	}
	if t, ok := tool.Lookup(r.Name); !ok || !tool.DrivesTasks(t) {
		return
	}
	var d tool.TaskDetails
	if json.Unmarshal(r.Details, &d) != nil || d.Subagent.SessionID == "" {
		return
	}
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.inTurn || b.g == nil {
		return
	}
	if b.children == nil {
		b.children = map[string]bool{}
	}
	b.children[d.Subagent.SessionID] = true
}

// cancel cancels child's turn: the one running, or the one about to
// begin (TurnStarting cancels it).
func (gs *Goals) cancel(child *session.Session) {
	if !child.Busy() {
		return
	}
	b := boxOf(child)
	b.mu.Lock()
	b.stopNext = true
	b.mu.Unlock()
	if ok, _ := gs.m.Cancel(nil, child.ID()); ok {
		b.mu.Lock()
		b.stopNext = false
		b.mu.Unlock()
	}
}

// bound is the goal's limit its turn reached ("": none): its time or
// its cost, asked before each model call and tool call of its turns.
func (gs *Goals) bound(s *session.Session) string {
	b := boxOf(s)
	b.mu.Lock()
	g := b.g
	b.mu.Unlock()
	if g == nil || !counting(g.Goal) {
		return ""
	}
	if why := overBudget(spentOn(s, *g, gs.now())); why != "" {
		return "the goal's budget is reached: " + why
	}
	return ""
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
	if counting(g.Goal) && g.SinceUs == 0 && g.ActiveUs == 0 {
		// Stored before its minutes were counted so: since it was set.
		g.SinceUs = g.StartedMs * 1000
	}
	b := boxOf(s)
	b.mu.Lock()
	b.g = &g
	b.mu.Unlock()
}

// Describe implements session.Participant: session/get shows the goal
// with its spending now.
func (gs *Goals) Describe(s *session.Session, l *archive.Live) { l.Goal = gs.view(s) }

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
