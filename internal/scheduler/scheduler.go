// Package scheduler runs schedules: a prompt at due times (package
// schedule says when), in a session or in a new session per run.
//
// Each due time fires once. A run is claimed in the store, with the
// schedule's next due time, in one transaction before it starts; its
// prompt carries a clientMessageId made of the schedule and the due
// time, so a run a dead daemon left claimed or started is sent again by
// the next one and runs at most once (the session answers a prompt it
// took with its outcome). Due times that passed while no daemon ran
// follow the schedule's missed policy: skip (none runs) or once (one
// catch-up run). A schedule whose runs fail three times in a row pauses
// itself, with the reason.
package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/schedule"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// FailuresToPause is how many failed runs in a row pause a schedule.
const FailuresToPause = 3

// Options configure a Scheduler.
type Options struct {
	Store    *store.Store
	Sessions *session.Manager
	Log      *slog.Logger
	// Now is the clock (tests give their own); nil: time.Now.
	Now func() time.Time
	// Enabled: due runs fire ([schedules] enabled); Max bounds how many
	// schedules there are ([schedules] max).
	Enabled bool
	Max     int
}

// Scheduler keeps the schedules and fires their runs.
type Scheduler struct {
	o    Options
	wake chan struct{}

	mu      sync.Mutex
	items   map[string]*item
	running map[string]bool // a run of the schedule is under way
	ctx     context.Context
	wg      sync.WaitGroup
}

// item is one schedule: what is stored (body) and its parsed when.
type item struct {
	body stored
	// when is its parsed when (replaced by schedule/update while runs
	// may read it).
	when atomic.Pointer[schedule.When]
	// catchUp is the due time of a catch-up run (missed: once) to fire
	// when the run a dead daemon left, followed now, ends (0: none).
	catchUp int64
}

// stored is a schedule's body in the store.
type stored struct {
	protocol.Schedule
	// AnchorMs is when it began: an every counts from it.
	AnchorMs int64 `json:"anchorMs"`
}

// New makes a Scheduler; Start loads the schedules and runs them.
func New(o Options) *Scheduler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Max <= 0 {
		o.Max = 100
	}
	return &Scheduler{o: o, wake: make(chan struct{}, 1), items: map[string]*item{}, running: map[string]bool{}}
}

// Start loads the stored schedules, sends again the runs a dead daemon
// left open, applies each schedule's missed policy, and fires runs as
// they come due until ctx ends; Wait waits for that.
func (s *Scheduler) Start(ctx context.Context) error {
	s.ctx = ctx
	scs, err := s.o.Store.Schedules(ctx)
	if err != nil {
		return err
	}
	now := s.o.Now()
	s.mu.Lock()
	for _, sc := range scs {
		var b stored
		if err := json.Unmarshal(sc.Body, &b); err != nil {
			s.o.Log.Error("a stored schedule could not be read", "scheduleId", sc.ID, "err", err)
			continue
		}
		w, err := parse(b, now)
		if err != nil {
			s.o.Log.Error("a stored schedule could not be read", "scheduleId", sc.ID, "err", err)
			continue
		}
		it := &item{body: b}
		it.when.Store(w)
		s.items[sc.ID] = it
	}
	s.mu.Unlock()
	open, err := s.o.Store.OpenRuns(ctx)
	if err != nil {
		return err
	}
	for _, r := range open {
		s.mu.Lock()
		it := s.items[r.ScheduleID]
		var b stored
		if it != nil {
			s.running[r.ScheduleID] = true
			b = it.body
		}
		s.mu.Unlock()
		if it == nil {
			continue
		}
		s.o.Log.Info("a schedule's run a dead daemon left goes on", "scheduleId", r.ScheduleID, "dueMs", r.DueMs)
		s.wg.Go(func() { s.run(b, r.DueMs, r.SessionID, true) })
	}
	if s.o.Enabled {
		s.catchUp(now)
	}
	s.wg.Go(s.loop)
	return nil
}

// Wait waits for the loop and the runs to end (after Start's ctx).
func (s *Scheduler) Wait() { s.wg.Wait() }

// parse reads a stored schedule's when.
func parse(b stored, now time.Time) (*schedule.When, error) {
	return schedule.Parse(schedule.Spec{Cron: b.Cron, Every: b.Every, At: b.At, Timezone: b.Timezone}, time.UnixMilli(b.AnchorMs), now)
}

// catchUp applies the missed policy of each schedule whose next run came
// due while no daemon ran.
func (s *Scheduler) catchUp(now time.Time) {
	type lateOne struct {
		it   *item
		body stored // as it was (runs may change it.body)
	}
	s.mu.Lock()
	var late []lateOne
	for _, it := range s.items {
		if it.body.enabled() && it.body.NextRunMs > 0 && it.body.NextRunMs <= now.UnixMilli() {
			late = append(late, lateOne{it, it.body})
		}
	}
	s.mu.Unlock()
	for _, l := range late {
		it := l.it
		// The latest due time that passed.
		due := time.UnixMilli(l.body.NextRunMs)
		for n := 0; n < 100000; n++ {
			next, ok := it.when.Load().Next(due)
			if !ok || next.After(now) {
				break
			}
			due = next
		}
		if l.body.Missed == protocol.MissedOnce {
			s.mu.Lock()
			busy := s.running[l.body.ScheduleID]
			if busy {
				// After the run being followed, and never skipped.
				it.catchUp = due.UnixMilli()
				b := it.body
				b.NextRunMs = s.nextAfter(it, b, now)
				it.body.NextRunMs = b.NextRunMs
			}
			s.mu.Unlock()
			if !busy {
				s.fire(it, due.UnixMilli(), "")
			}
			continue
		}
		s.mu.Lock()
		b := it.body
		s.mu.Unlock()
		b.LastRun = &protocol.ScheduleRun{DueMs: due.UnixMilli(), State: protocol.RunSkipped, Reason: "missed: no daemon ran when it was due (missed: skip)"}
		b.NextRunMs = s.nextAfter(it, b, now)
		s.save(it, b)
		metrics.ScheduleRun(protocol.RunSkipped)
	}
}

func (b stored) enabled() bool { return b.Enabled == nil || *b.Enabled }

// nextAfter is b's next due time after t (0: none more: an at that
// passed, until reached, maxRuns run).
func (s *Scheduler) nextAfter(it *item, b stored, t time.Time) int64 {
	if b.MaxRuns > 0 && b.Runs >= b.MaxRuns {
		return 0
	}
	next, ok := it.when.Load().Next(t)
	if !ok {
		return 0
	}
	if b.Until != "" {
		if until, err := time.Parse(time.RFC3339, b.Until); err == nil && next.After(until) {
			return 0
		}
	}
	return next.UnixMilli()
}

// save writes b as the schedule's body.
func (s *Scheduler) save(it *item, b stored) error {
	body, _ := json.Marshal(b)
	if err := s.o.Store.PutSchedule(store.Schedule{ID: b.ScheduleID, Body: body, CreatedMs: b.CreatedMs}); err != nil {
		return err
	}
	s.mu.Lock()
	it.body = b
	s.mu.Unlock()
	s.poke()
	return nil
}

func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop fires the runs as they come due.
func (s *Scheduler) loop() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		now := s.o.Now()
		wait := time.Hour
		type dueOne struct {
			it *item
			at int64
		}
		var due []dueOne
		s.mu.Lock()
		for _, it := range s.items {
			b := it.body
			if !s.o.Enabled || !b.enabled() || b.NextRunMs == 0 {
				continue
			}
			if at := time.UnixMilli(b.NextRunMs); !at.After(now) {
				due = append(due, dueOne{it, b.NextRunMs})
			} else if d := at.Sub(now); d < wait {
				wait = d
			}
		}
		s.mu.Unlock()
		sort.Slice(due, func(i, j int) bool { return due[i].at < due[j].at })
		for _, d := range due {
			s.fire(d.it, d.at, "")
		}
		if len(due) > 0 {
			continue
		}
		t.Reset(wait)
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
			t.Stop() // (Go 1.23 timers: no stale tick to drain)
		case <-t.C:
		}
	}
}

// fire claims it's run due at dueMs and starts it; reason (when not "")
// says why it runs now (schedule/run). A run of it still under way: this
// one is skipped.
func (s *Scheduler) fire(it *item, dueMs int64, reason string) (protocol.Schedule, error) {
	s.mu.Lock()
	b := it.body
	busy := s.running[b.ScheduleID]
	s.mu.Unlock()
	now := s.o.Now()
	after := time.UnixMilli(dueMs)
	if now.After(after) {
		after = now
	}
	if busy {
		// Its lastRun stays the run under way (whose end will replace
		// it): a due time skipped is told (schedule_update) and moves
		// the next one on; a schedule/run refused changes nothing.
		err := fmt.Errorf("%w: a run of %s is under way", session.ErrBusy, b.ScheduleID)
		if reason != "" {
			return b.Schedule, err
		}
		b.NextRunMs = s.nextAfter(it, b, after)
		s.save(it, b)
		s.note(b, protocol.ScheduleRun{DueMs: dueMs, State: protocol.RunSkipped, SessionID: b.SessionID, Reason: "the previous run is still under way"})
		metrics.ScheduleRun(protocol.RunSkipped)
		return b.Schedule, err
	}
	sid := b.SessionID
	if b.NewSession != nil {
		sid = b.ScheduleID + "-" + strconv.FormatInt(dueMs, 10)
	}
	b.Runs++
	b.LastRun = &protocol.ScheduleRun{DueMs: dueMs, State: protocol.RunStarted, SessionID: sid}
	if reason == "" {
		b.NextRunMs = s.nextAfter(it, b, after)
	}
	body, _ := json.Marshal(b)
	claimed, err := s.o.Store.ClaimRun(b.ScheduleID, dueMs, sid, body)
	if err != nil {
		// Not fired (the store failed): the loop moves past this due
		// time rather than trying it again at once.
		s.o.Log.Error("a schedule's run could not be claimed", "scheduleId", b.ScheduleID, "dueMs", dueMs, "err", err)
		if reason == "" {
			s.mu.Lock()
			it.body.NextRunMs = b.NextRunMs
			s.mu.Unlock()
		}
		return b.Schedule, err
	}
	s.mu.Lock()
	if claimed {
		it.body = b
		s.running[b.ScheduleID] = true
	} else if reason == "" {
		// Claimed before (it fired already): only move on.
		it.body.NextRunMs = b.NextRunMs
	}
	s.mu.Unlock()
	if !claimed {
		return b.Schedule, nil
	}
	s.wg.Go(func() { s.run(b, dueMs, sid, false) })
	return b.Schedule, nil
}

// run runs b's run due at dueMs in session sid and records its end;
// resumed: a dead daemon's run, sent again.
func (s *Scheduler) run(b stored, dueMs int64, sid string, resumed bool) {
	ctx := s.ctx
	cmid := b.ScheduleID + ":" + strconv.FormatInt(dueMs, 10)
	run := protocol.ScheduleRun{DueMs: dueMs, SessionID: sid}
	res, err := s.prompt(ctx, b, sid, cmid, &run, resumed)
	if ctx.Err() != nil {
		return // the daemon stops: the next one sends it again
	}
	switch {
	case err != nil:
		run.State, run.Reason = protocol.RunFailed, err.Error()
	case res.Error != nil:
		run.State, run.Reason = protocol.RunFailed, res.Error.Message
	case res.StopReason == protocol.StopEndTurn:
		run.State = protocol.RunCompleted
	default:
		run.State, run.Reason = protocol.RunFailed, "the turn ended "+res.StopReason
		if res.Notice != "" {
			run.Reason += ": " + res.Notice
		}
	}
	if res != nil {
		run.TurnID = res.TurnID
	}
	s.end(b.ScheduleID, run)
}

// prompt opens the run's session and sends its prompt, then waits for
// its result.
func (s *Scheduler) prompt(ctx context.Context, b stored, sid, cmid string, run *protocol.ScheduleRun, resumed bool) (*protocol.SessionPromptResult, error) {
	p := protocol.SessionNewParams{SessionID: sid, KeepSiblings: true}
	if b.NewSession != nil {
		p.AgentAlias, p.Cwd, p.Mode = b.NewSession.AgentAlias, b.NewSession.Cwd, "code"
	}
	c := session.NewClient(nowhere{})
	c.SetIdentity("scheduler", "scheduler", false, protocol.DefaultMaxFrame)
	_, err := s.o.Sessions.New(ctx, c, p)
	c.Close() // not attached: nobody reads its events here
	if err != nil {
		return nil, fmt.Errorf("its session %s: %v", sid, err)
	}
	if b.NewSession != nil {
		s.o.Sessions.Rename(ctx, sid, "⏱ "+firstLine(b.Prompt))
	}
	if !resumed {
		s.o.Store.SetRun(store.Run{ScheduleID: b.ScheduleID, DueMs: run.DueMs, State: protocol.RunStarted, SessionID: sid}, nil)
		s.note(b, protocol.ScheduleRun{DueMs: run.DueMs, State: protocol.RunStarted, SessionID: sid})
	}
	pending, err := s.o.Sessions.Submit(nil, sid, session.Input{Text: b.Prompt, ClientMessageID: cmid, NoAsk: b.Approve == protocol.ApproveRules})
	if err != nil {
		return nil, err
	}
	var res protocol.SessionPromptResult
	select {
	case res = <-pending.Done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if res.Duplicate && res.StopReason == "" {
		// Taken before (a dead daemon's run): its turn goes on there.
		return s.o.Sessions.Await(ctx, nil, sid, cmid)
	}
	return &res, nil
}

// end records a run's end: the run, the schedule's last run and its
// failures in a row (FailuresToPause pause it), a schedule_update in
// the session.
func (s *Scheduler) end(id string, run protocol.ScheduleRun) {
	s.mu.Lock()
	it := s.items[id]
	delete(s.running, id)
	var b stored
	if it != nil {
		b = it.body
	}
	s.mu.Unlock()
	metrics.ScheduleRun(run.State)
	if it == nil { // deleted meanwhile
		s.o.Store.SetRun(store.Run{ScheduleID: id, DueMs: run.DueMs, State: run.State, SessionID: run.SessionID, Reason: run.Reason}, nil)
		return
	}
	b.LastRun = &run
	if run.State == protocol.RunFailed {
		b.Failures++
		if b.Failures >= FailuresToPause {
			off := false
			b.Enabled = &off
			b.PausedReason = fmt.Sprintf("its last %d runs failed; the last: %s", b.Failures, run.Reason)
		}
	} else {
		b.Failures = 0
	}
	body, _ := json.Marshal(b)
	if err := s.o.Store.SetRun(store.Run{ScheduleID: id, DueMs: run.DueMs, State: run.State, SessionID: run.SessionID, Reason: run.Reason}, body); err != nil {
		s.o.Log.Error("a schedule's run could not be recorded", "scheduleId", id, "err", err)
	}
	s.mu.Lock()
	it.body = b
	catchUp := it.catchUp
	it.catchUp = 0
	s.mu.Unlock()
	s.note(b, run)
	if catchUp > 0 && b.enabled() && s.ctx.Err() == nil {
		s.fire(it, catchUp, "catch-up")
	}
	s.poke()
}

// note tells run's session what became of it (schedule_update).
func (s *Scheduler) note(b stored, run protocol.ScheduleRun) {
	if run.SessionID == "" {
		return
	}
	s.o.Sessions.Note(run.SessionID, protocol.ScheduleUpdateEvent{ScheduleID: b.ScheduleID, Run: run})
}

// nowhere is the scheduler's connection: it attaches to open a session
// and leaves at once, so nothing is ever pushed to it.
type nowhere struct{}

func (nowhere) Push(session.Source) error { return nil }
func (nowhere) Call(context.Context, string, any, any) error {
	return errors.New("the scheduler answers no requests")
}
func (nowhere) Notify(string, any) error { return nil }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}
