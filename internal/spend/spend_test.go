package spend

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// charge is one charge the store was given.
type charge struct {
	session, day string
	u            store.Usage
}

// days is the store's spend: each day's, the reads of it, and the
// charges queued (answered with failWith).
type days struct {
	mu       sync.Mutex
	spent    map[string]store.Usage
	readErr  error
	reads    []string
	charges  []charge
	failWith error
}

func (d *days) Spent(_ context.Context, day string) (store.Usage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reads = append(d.reads, day)
	if d.readErr != nil {
		return store.Usage{}, d.readErr
	}
	return d.spent[day], nil
}

func (d *days) Charge(sessionID, day string, u store.Usage, after func(error)) {
	d.mu.Lock()
	d.charges = append(d.charges, charge{sessionID, day, u})
	err := d.failWith
	d.mu.Unlock()
	after(err)
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

func priced(cost float64) store.Usage {
	return store.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 5, CacheWriteTokens: 1, CostUSD: cost, Priced: true}
}

// The day's spend is read from the store once, when the day is new to
// the ledger; charges add to it in memory and reach the store with the
// day they were counted in; at midnight (the clock's) the next day is
// read, and counted from what the store holds of it.
func TestTheDayRollsOverAtMidnight(t *testing.T) {
	loc := time.FixedZone("east", 5*3600)
	c := &clock{now: time.Date(2026, 3, 9, 23, 30, 0, 0, loc)}
	st := &days{spent: map[string]store.Usage{"2026-03-09": priced(1), "2026-03-10": priced(0.25)}}
	l := New(st, c.Now, nil)
	b := config.Budget{MaxCostUSDPerDay: 10, MaxCostUSDPerSession: 2}

	if got := l.Today(b); got.Day != "2026-03-09" || got.Usage.CostUSD == nil || *got.Usage.CostUSD != 1 || got.Usage.InputTokens != 100 ||
		got.MaxCostUSDPerDay != 10 || got.MaxCostUSDPerSession != 2 {
		t.Fatalf("today: %+v", got)
	}
	l.Charge("s1", priced(0.5), true)
	l.Charge("s2", priced(0.5), false) // fenced: in memory only
	if got := l.Today(b); *got.Usage.CostUSD != 2 || got.Usage.InputTokens != 300 || got.Usage.CacheWriteTokens != 3 {
		t.Errorf("today after two charges: %+v", got.Usage)
	}

	// The same day, to its last instant, is not read again.
	c.set(time.Date(2026, 3, 9, 23, 59, 59, 999, loc))
	l.Today(b)
	// The next midnight of the clock's zone, though it is still the 9th
	// in UTC.
	c.set(time.Date(2026, 3, 10, 0, 0, 0, 0, loc))
	if got := l.Today(b); got.Day != "2026-03-10" || *got.Usage.CostUSD != 0.25 {
		t.Errorf("the next day: %+v", got)
	}
	l.Charge("s1", priced(0.5), true)
	if got := l.Today(b); *got.Usage.CostUSD != 0.75 {
		t.Errorf("the next day after a charge: %+v", got.Usage)
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	if want := []string{"2026-03-09", "2026-03-10"}; strings.Join(st.reads, " ") != strings.Join(want, " ") {
		t.Errorf("days read %v, want %v", st.reads, want)
	}
	want := []charge{{"s1", "2026-03-09", priced(0.5)}, {"s1", "2026-03-10", priced(0.5)}}
	if len(st.charges) != len(want) || st.charges[0] != want[0] || st.charges[1] != want[1] {
		t.Errorf("the store was charged %+v, want %+v", st.charges, want)
	}
}

// A clock going back (a new day to the ledger) reads that day again;
// a time outside the day's bounds that formats as the same day (a zone
// change) keeps the spend and only moves the bounds.
func TestTheClockGoingBack(t *testing.T) {
	c := &clock{now: time.Date(2026, 3, 10, 1, 0, 0, 0, time.UTC)}
	st := &days{spent: map[string]store.Usage{"2026-03-09": priced(3)}}
	l := New(st, c.Now, nil)
	l.Charge("s", priced(1), false)
	c.set(time.Date(2026, 3, 9, 22, 0, 0, 0, time.UTC))
	if day, u := l.today(); day != "2026-03-09" || u.CostUSD != 3 {
		t.Errorf("back a day: %s %+v", day, u)
	}
	// The same date in a zone ahead, early enough to be before the UTC
	// day's bounds (the 8th, 12:30 UTC).
	c.set(time.Date(2026, 3, 9, 0, 30, 0, 0, time.FixedZone("ahead", 12*3600)))
	l.Charge("s", priced(1), false)
	if day, u := l.today(); day != "2026-03-09" || u.CostUSD != 4 {
		t.Errorf("the same day in another zone: %s %+v", day, u)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.reads) != 2 {
		t.Errorf("days read: %v", st.reads)
	}
}

// A day's spend the store cannot read is counted from zero, and the log
// says so; a charge the store cannot write stays counted, and the log
// says so.
func TestStoreFailuresAreLogged(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	st := &days{readErr: errors.New("unreadable"), failWith: errors.New("disk full")}
	l := New(st, func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }, log)
	l.Charge("s", priced(0.5), true)
	if day, u := l.today(); day != "2026-01-02" || u != priced(0.5) {
		t.Errorf("after the failures: %s %+v", day, u)
	}
	s := logged.String()
	for _, want := range []string{"the day's spend could not be read; counting it from zero", "day=2026-01-02", "unreadable",
		"a model call's spend could not be stored", "sessionId=s", "disk full"} {
		if !strings.Contains(s, want) {
			t.Errorf("the log lacks %q: %s", want, s)
		}
	}
}

// Over names the day's limit once the day has spent it, with the day,
// the spend and the limit as config.toml holds it; under it, or with no
// limit, nothing.
func TestOverTheDaysLimit(t *testing.T) {
	st := &days{spent: map[string]store.Usage{"2025-06-01": priced(2.5)}}
	l := New(st, func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.Local) }, nil)
	for _, c := range []struct {
		max  float64
		want string
	}{
		{0, ""},
		{-1, ""},
		{3, ""},
		{2.5, "today's budget is spent: 2025-06-01 has cost $2.5000, and [budget] max_cost_usd_per_day = 2.5 in config.toml; raise it, or wait for tomorrow (local time)"},
		{1e-7, "today's budget is spent: 2025-06-01 has cost $2.5000, and [budget] max_cost_usd_per_day = 1e-07 in config.toml; raise it, or wait for tomorrow (local time)"},
	} {
		if got := l.Over(config.Budget{MaxCostUSDPerDay: c.max, MaxCostUSDPerSession: 0.1}); got != c.want {
			t.Errorf("Over(%g) = %q, want %q", c.max, got, c.want)
		}
	}
}

// status's today: an unpriced day has no cost, a day without calls no
// usage.
func TestTodayOnTheWire(t *testing.T) {
	st := &days{spent: map[string]store.Usage{}}
	l := New(st, func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }, nil)
	if got := l.Today(config.Budget{}); got != (protocol.SpendToday{Day: "2025-06-01"}) {
		t.Errorf("a day without calls: %+v", got)
	}
	l.Charge("s", store.Usage{InputTokens: 7}, false)
	got := l.Today(config.Budget{})
	if got.Usage.InputTokens != 7 || got.Usage.CostUSD != nil {
		t.Errorf("an unpriced day: %+v", got.Usage)
	}
}

// Within the day, the ledger tells the day without formatting it (or
// anything else that allocates): status asks on every call.
func TestTheDayIsToldWithoutFormatting(t *testing.T) {
	st := &days{spent: map[string]store.Usage{}}
	l := New(st, func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }, nil)
	l.today()
	if n := testing.AllocsPerRun(100, func() { l.today() }); n != 0 {
		t.Errorf("today allocates %v times a call", n)
	}
}

func TestAddAndDollars(t *testing.T) {
	var u store.Usage
	Add(&u, store.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4})
	if u.Priced {
		t.Error("unpriced usage made it priced")
	}
	Add(&u, priced(0.5))
	Add(&u, store.Usage{InputTokens: 1})
	if want := (store.Usage{InputTokens: 102, OutputTokens: 12, CacheReadTokens: 8, CacheWriteTokens: 5, CostUSD: 0.5, Priced: true}); u != want {
		t.Errorf("sum %+v, want %+v", u, want)
	}
	for v, want := range map[float64]string{1: "1", 0.5: "0.5", 2.25: "2.25", 1e-7: "1e-07", 1000000: "1e+06"} {
		if got := Dollars(v); got != want {
			t.Errorf("Dollars(%v) = %q, want %q", v, got, want)
		}
	}
}

// New without a clock keeps the day by time.Now.
func TestNewDefaultsToTheWallClock(t *testing.T) {
	l := New(&days{}, nil, nil)
	before := time.Now().Format(time.DateOnly)
	day, _ := l.today()
	after := time.Now().Format(time.DateOnly)
	if day != before && day != after {
		t.Errorf("day %s, the wall clock's %s", day, before)
	}
}

// BenchmarkToday is status's today within the day.
func BenchmarkToday(b *testing.B) {
	l := New(&days{}, time.Now, nil)
	bu := config.Budget{MaxCostUSDPerDay: 5}
	l.Charge("s", priced(1), false)
	b.ReportAllocs()
	for b.Loop() {
		l.Today(bu)
	}
}
