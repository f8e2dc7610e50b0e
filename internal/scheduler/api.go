package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/schedule"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// unknown is the answer about an id no schedule has.
func unknown(id string) error {
	return &protocol.ParamsError{Field: "scheduleId", Reason: fmt.Sprintf("no schedule %q (schedule/list lists them)", id)}
}

// Create adds a schedule (schedule/create).
func (s *Scheduler) Create(ctx context.Context, f protocol.ScheduleFields) (protocol.Schedule, error) {
	now := s.o.Now()
	b := stored{Schedule: protocol.Schedule{ScheduleID: protocol.NewID("sch_", 8), ScheduleFields: f, CreatedMs: now.UnixMilli()}, AnchorMs: now.UnixMilli()}
	it, err := s.check(ctx, &b, now)
	if err != nil {
		return protocol.Schedule{}, err
	}
	s.mu.Lock()
	n := len(s.items)
	s.mu.Unlock()
	if n >= s.o.Max {
		return protocol.Schedule{}, fmt.Errorf("%w: there are %d schedules already, the limit ([schedules] max)", session.ErrLimit, n)
	}
	s.mu.Lock()
	s.items[b.ScheduleID] = it
	s.mu.Unlock()
	if err := s.save(it, b); err != nil {
		s.mu.Lock()
		delete(s.items, b.ScheduleID)
		s.mu.Unlock()
		return protocol.Schedule{}, err
	}
	s.o.Log.Info("schedule created", "scheduleId", b.ScheduleID, "nextRunMs", b.NextRunMs)
	return s.view(b), nil
}

// check validates b's fields (filling in the defaults), parses its when
// and sets its next run after now.
func (s *Scheduler) check(ctx context.Context, b *stored, now time.Time) (*item, error) {
	f := &b.ScheduleFields
	bad := func(field, format string, args ...any) error {
		return &protocol.ParamsError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(f.Prompt) == "" {
		return nil, bad("prompt", "is required")
	}
	if len(f.Prompt) > MaxPrompt {
		return nil, bad("prompt", "%d bytes: at most %d", len(f.Prompt), MaxPrompt)
	}
	w, err := schedule.Parse(schedule.Spec{Cron: f.Cron, Every: f.Every, At: f.At, Timezone: f.Timezone}, time.UnixMilli(b.AnchorMs), now)
	if fe := (*schedule.FieldError)(nil); errors.As(err, &fe) {
		// Its message begins with the field's name, which the wire's
		// error says already.
		return nil, bad(fe.Field, "%s", strings.TrimPrefix(fe.Error(), fe.Field+" "))
	} else if err != nil {
		return nil, bad("cron", "%v", err)
	}
	f.Cron, f.Every, f.At = w.Spec.Cron, w.Spec.Every, w.Spec.At
	switch {
	case f.SessionID != "" && f.NewSession != nil:
		return nil, bad("sessionId", "give sessionId or newSession, not both")
	case f.SessionID != "":
		if _, err := s.o.Store.GetSession(ctx, f.SessionID); err != nil {
			return nil, bad("sessionId", "no session %s", f.SessionID)
		}
	case f.NewSession != nil:
		if a := f.NewSession.AgentAlias; a != "" && s.o.Sessions != nil {
			if cfg := s.o.Sessions.Config(); !slices.Contains(cfg.AgentAliases(), a) {
				return nil, bad("newSession.agentAlias", "unknown agent %q (known: %s)", a, strings.Join(cfg.AgentAliases(), ", "))
			}
		}
		if cwd := f.NewSession.Cwd; cwd != "" {
			if fi, err := os.Stat(cwd); !filepath.IsAbs(cwd) || err != nil || !fi.IsDir() {
				return nil, bad("newSession.cwd", "%q is not an absolute path to a directory", cwd)
			}
		}
	default:
		return nil, bad("sessionId", "give sessionId (run in that session) or newSession {agentAlias, cwd} (a new session per run)")
	}
	switch f.Missed {
	case "":
		f.Missed = protocol.MissedSkip
	case protocol.MissedSkip, protocol.MissedOnce:
	default:
		return nil, bad("missed", "%q: skip or once", f.Missed)
	}
	switch f.Approve {
	case "":
		f.Approve = protocol.ApproveAsk
	case protocol.ApproveAsk, protocol.ApproveRules:
	default:
		return nil, bad("approve", "%q: ask or rules", f.Approve)
	}
	if f.Until != "" {
		if _, err := time.Parse(time.RFC3339, f.Until); err != nil {
			return nil, bad("until", "%q: an RFC 3339 time", f.Until)
		}
	}
	if f.MaxRuns < 0 {
		return nil, bad("maxRuns", "%d: 0 (no limit) or more", f.MaxRuns)
	}
	it := &item{body: *b}
	it.when.Store(w)
	b.NextRunMs = s.nextAfter(it, *b, now)
	if b.NextRunMs == 0 && b.enabled() && b.Runs == 0 {
		return nil, bad("at", "it would never run (its time has passed, or until comes first)")
	}
	it.body = *b
	return it, nil
}

// MaxPrompt bounds a schedule's prompt, in bytes (schedule/create and
// schedule/update refuse a longer one).
const MaxPrompt = 16384

// maxReason bounds a run's and a pause's reason as a client is told
// them (an error's text, however long, is cut).
const maxReason = 2048

// listPageBytes bounds a page of schedule/list (its schedules as JSON):
// far below any client's frame limit, whatever is stored.
var listPageBytes = 1 << 20

// List tells the schedules, the oldest first (schedule/list), a page at
// a time: those after cursor ("": from the first) until the page holds
// listPageBytes (at least one); next continues after it ("": the last
// page). A bad cursor is -32602.
func (s *Scheduler) List(cursor string) (page []protocol.Schedule, next string, err error) {
	var afterMs int64
	var afterID string
	if cursor != "" {
		ms, id, ok := strings.Cut(cursor, "/")
		n, perr := strconv.ParseInt(ms, 10, 64)
		if !ok || perr != nil || id == "" {
			return nil, "", &protocol.ParamsError{Field: "cursor", Reason: fmt.Sprintf("%q is not a nextCursor of schedule/list", cursor)}
		}
		afterMs, afterID = n, id
	}
	s.mu.Lock()
	bs := make([]stored, 0, len(s.items))
	for _, it := range s.items {
		if b := it.body; cursor == "" || b.CreatedMs > afterMs || (b.CreatedMs == afterMs && b.ScheduleID > afterID) {
			bs = append(bs, b)
		}
	}
	s.mu.Unlock()
	sort.Slice(bs, func(i, j int) bool {
		if bs[i].CreatedMs != bs[j].CreatedMs {
			return bs[i].CreatedMs < bs[j].CreatedMs
		}
		return bs[i].ScheduleID < bs[j].ScheduleID
	})
	page = make([]protocol.Schedule, 0, len(bs))
	size := 0
	for i, b := range bs {
		v := s.view(b)
		j, _ := json.Marshal(v)
		if len(page) > 0 && size+len(j) > listPageBytes {
			last := bs[i-1]
			return page, strconv.FormatInt(last.CreatedMs, 10) + "/" + last.ScheduleID, nil
		}
		size += len(j) + 1
		page = append(page, v)
	}
	return page, "", nil
}

// view is b as a client sees it: with what its run under way waits for,
// and bounded (a prompt stored before MaxPrompt was, cut, says so).
func (s *Scheduler) view(b stored) protocol.Schedule {
	v := b.Schedule
	if len(v.Prompt) > MaxPrompt {
		v.Prompt, v.PromptTruncated = cut(v.Prompt, MaxPrompt), true
	}
	v.PausedReason = cutReason(v.PausedReason)
	if v.LastRun != nil && len(v.LastRun.Reason) > maxReason {
		r := *v.LastRun
		r.Reason = cutReason(r.Reason)
		v.LastRun = &r
	}
	s.mu.Lock()
	busy := s.running[b.ScheduleID]
	s.mu.Unlock()
	if busy && b.LastRun != nil && b.LastRun.SessionID != "" {
		if req := s.o.Sessions.Waiting(b.LastRun.SessionID); req != "" {
			v.Waiting = &protocol.ScheduleWaiting{Kind: "approval", RequestID: req, SessionID: b.LastRun.SessionID}
		}
	}
	return v
}

// Update changes the fields given (schedule/update). Enabling a paused
// schedule clears its failures; its next run is counted from now.
func (s *Scheduler) Update(ctx context.Context, p protocol.ScheduleUpdateParams) (protocol.Schedule, error) {
	s.mu.Lock()
	it := s.items[p.ScheduleID]
	var b stored
	if it != nil {
		b = it.body
	}
	s.mu.Unlock()
	if it == nil {
		return protocol.Schedule{}, unknown(p.ScheduleID)
	}
	f := p.ScheduleFields
	if f.Prompt != "" {
		b.Prompt = f.Prompt
	}
	if f.Cron != "" || f.Every != "" || f.At != "" {
		b.Cron, b.Every, b.At = f.Cron, f.Every, f.At
		b.AnchorMs = s.o.Now().UnixMilli()
	}
	if f.Timezone != "" {
		b.Timezone = f.Timezone
	}
	if f.SessionID != "" {
		b.SessionID, b.NewSession = f.SessionID, nil
	}
	if f.NewSession != nil {
		b.SessionID, b.NewSession = "", f.NewSession
	}
	if f.Missed != "" {
		b.Missed = f.Missed
	}
	if f.Until != "" {
		b.Until = f.Until
	}
	if f.MaxRuns != 0 {
		b.MaxRuns = f.MaxRuns
	}
	if f.Approve != "" {
		b.Approve = f.Approve
	}
	if f.Enabled != nil {
		on := *f.Enabled
		b.Enabled = &on
		if on {
			b.PausedReason, b.Failures = "", 0
		}
	}
	nit, err := s.check(ctx, &b, s.o.Now())
	if err != nil {
		return protocol.Schedule{}, err
	}
	it.when.Store(nit.when.Load())
	if err := s.save(it, b); err != nil {
		return protocol.Schedule{}, err
	}
	return s.view(b), nil
}

// Delete removes a schedule and its runs' records (schedule/delete); a
// run under way goes on to its end.
func (s *Scheduler) Delete(id string) (bool, error) {
	found, err := s.o.Store.DeleteSchedule(id)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	if _, ok := s.items[id]; ok {
		found = true
	}
	delete(s.items, id)
	s.mu.Unlock()
	s.poke()
	return found, nil
}

// RunNow fires a run of the schedule now (schedule/run), whether it is
// enabled or not; its next due time stays.
func (s *Scheduler) RunNow(id string) (protocol.Schedule, error) {
	s.mu.Lock()
	it := s.items[id]
	s.mu.Unlock()
	if it == nil {
		return protocol.Schedule{}, unknown(id)
	}
	v, err := s.fire(it, s.o.Now().UnixMilli(), "now")
	return s.view(stored{Schedule: v}), err
}

// cut is s's first n bytes at most, whole UTF-8 characters.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutReason is a reason bounded by maxReason, saying when it was cut.
func cutReason(r string) string {
	if len(r) <= maxReason {
		return r
	}
	return cut(r, maxReason) + " … (cut)"
}
