// Package schedule says when a schedule is due: a cron expression (five
// fields, ranges, steps, @daily and the like) in a time zone, an
// interval (every), or one time (at).
//
// Cron times are counted on the zone's wall clock, so a daylight-saving
// change neither skips nor doubles a run: a time the spring change
// skips (02:30 when 02:00 becomes 03:00) runs when the clock has passed
// it (03:30, the same distance past the change), and a time the autumn
// change repeats (01:30 twice) runs once, the first time. The cron
// library's own next time does neither (it skips the first and runs the
// second twice), so it is asked on a wall clock without a zone (UTC)
// and its answer placed in the zone here.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Spec is a schedule's when, as a client gives it: exactly one of Cron,
// Every and At, and the time zone Cron and a local At are read in ("":
// the daemon's).
type Spec struct {
	Cron     string `json:"cron,omitempty"`
	Every    string `json:"every,omitempty"`
	At       string `json:"at,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// MinEvery is the shortest interval.
const MinEvery = time.Second

// When is a parsed Spec.
type When struct {
	Spec   Spec
	loc    *time.Location
	cron   cron.Schedule
	every  time.Duration
	at     time.Time
	anchor time.Time
}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// FieldError is why Parse refused a Spec, and the field at fault: cron,
// every, at or timezone (cron too when not exactly one of the three is
// given).
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Parse reads s (an error is a *FieldError). anchor is when the schedule began (its every counts
// from it) and now is the time a local At ("HH:MM") is read against: the
// next such time. The Spec it keeps has a local At resolved (RFC 3339),
// so parsing it again later gives the same time.
func Parse(s Spec, anchor, now time.Time) (*When, error) {
	n := 0
	for _, v := range []string{s.Cron, s.Every, s.At} {
		if strings.TrimSpace(v) != "" {
			n++
		}
	}
	if n != 1 {
		return nil, &FieldError{"cron", errors.New("give exactly one of cron, every and at")}
	}
	w := &When{Spec: s, loc: time.Local, anchor: anchor}
	if s.Timezone != "" {
		loc, err := time.LoadLocation(s.Timezone)
		if err != nil || s.Timezone == "Local" {
			return nil, &FieldError{"timezone", fmt.Errorf("timezone %q: not a zone of the tz database (such as Europe/Paris or UTC)", s.Timezone)}
		}
		w.loc = loc
	}
	switch {
	case s.Cron != "":
		expr := strings.TrimSpace(s.Cron)
		if strings.HasPrefix(expr, "@every") {
			return nil, &FieldError{"cron", fmt.Errorf("cron %q: use every for an interval", s.Cron)}
		}
		if strings.HasPrefix(expr, "CRON_TZ=") || strings.HasPrefix(expr, "TZ=") {
			return nil, &FieldError{"cron", fmt.Errorf("cron %q: give the zone as timezone", s.Cron)}
		}
		sch, err := parser.Parse(expr)
		if err != nil {
			return nil, &FieldError{"cron", fmt.Errorf("cron %q: %v (five fields: minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly)", s.Cron, err)}
		}
		w.cron = sch
		w.Spec.Cron = expr
	case s.Every != "":
		d, err := time.ParseDuration(strings.TrimSpace(s.Every))
		if err != nil {
			return nil, &FieldError{"every", fmt.Errorf("every %q: a duration such as 2s, 10m or 1h30m", s.Every)}
		}
		if d < MinEvery {
			return nil, &FieldError{"every", fmt.Errorf("every %q: at least %v", s.Every, MinEvery)}
		}
		w.every = d
		w.Spec.Every = strings.TrimSpace(s.Every)
	default:
		at, err := parseAt(strings.TrimSpace(s.At), w.loc, now)
		if err != nil {
			return nil, &FieldError{"at", err}
		}
		w.at = at
		w.Spec.At = at.Format(time.RFC3339)
	}
	return w, nil
}

// parseAt reads an RFC 3339 time, or a local HH:MM: its next time after
// now in loc.
func parseAt(s string, loc *time.Location, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	hm, err := time.Parse("15:04", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("at %q: an RFC 3339 time (2026-12-24T09:00:00+01:00) or a local HH:MM", s)
	}
	local := now.In(loc)
	t := time.Date(local.Year(), local.Month(), local.Day(), hm.Hour(), hm.Minute(), 0, 0, loc)
	if !t.After(now) {
		t = time.Date(local.Year(), local.Month(), local.Day()+1, hm.Hour(), hm.Minute(), 0, 0, loc)
	}
	return t, nil
}

// Next is the first due time after after; false when there is none (an
// at that has passed).
func (w *When) Next(after time.Time) (time.Time, bool) {
	switch {
	case w.cron != nil:
		// On the wall clock: the cron library's times in UTC, which
		// has no daylight saving, placed in the zone.
		l := after.In(w.loc)
		wall := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
		for range 1000 {
			n := w.cron.Next(wall)
			if n.IsZero() {
				return time.Time{}, false
			}
			t := inZone(n, w.loc)
			if t.After(after) {
				return t, true
			}
			// A wall time the zone repeats or had already reached.
			wall = n
		}
		return time.Time{}, false
	case w.every > 0:
		if after.Before(w.anchor) {
			return w.anchor.Add(w.every), true
		}
		k := after.Sub(w.anchor)/w.every + 1
		return w.anchor.Add(k * w.every), true
	default:
		if w.at.After(after) {
			return w.at, true
		}
		return time.Time{}, false
	}
}

// inZone is the instant wall (a wall-clock time in UTC) names in loc. A
// wall time loc skips (a spring change's hour) is read with the offset
// before the change: 02:30 when 02:00 becomes 03:00 is 03:30 (time.Date
// leaves the choice open). A repeated one is its first instant.
func inZone(wall time.Time, loc *time.Location) time.Time {
	same := func(t time.Time) bool { l := t.In(loc); return l.Hour() == wall.Hour() && l.Minute() == wall.Minute() }
	t := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc)
	_, now := t.Zone()
	_, before := t.Add(-24 * time.Hour).In(loc).Zone()
	if !same(t) {
		return wall.Add(-time.Duration(before) * time.Second)
	}
	if before > now {
		// The autumn's repeated hour: the first of the two.
		if first := t.Add(-time.Duration(before-now) * time.Second); same(first) {
			return first
		}
	}
	return t
}

// Location is the zone the schedule is read in.
func (w *When) Location() *time.Location { return w.loc }
