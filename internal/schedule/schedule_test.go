package schedule

import (
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, s Spec, anchor time.Time) *When {
	t.Helper()
	w, err := Parse(s, anchor, anchor)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// runs lists the first n due times after from, in the zone, as wall
// clock with the zone's abbreviation.
func runs(w *When, from time.Time, n int) string {
	var out []string
	t := from
	for range n {
		next, ok := w.Next(t)
		if !ok {
			out = append(out, "none")
			break
		}
		out = append(out, next.In(w.Location()).Format("01-02 15:04 MST"))
		t = next
	}
	return strings.Join(out, ", ")
}

// Across the spring change (02:00 becomes 03:00) a daily 02:30 runs at
// 03:30 that day, not never; across the autumn one (01:00-02:00 twice) a
// daily 01:30 runs once, not twice; a weekday 09:00 keeps its wall time.
func TestCronAcrossDaylightSaving(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tz database: ", err)
	}
	spring := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)   // the change is on 03-08
	autumn := time.Date(2026, 10, 31, 12, 0, 0, 0, ny) // and on 11-01
	for _, c := range []struct {
		cron string
		from time.Time
		want string
	}{
		{"30 2 * * *", spring, "03-08 03:30 EDT, 03-09 02:30 EDT, 03-10 02:30 EDT"},
		{"30 1 * * *", autumn, "11-01 01:30 EDT, 11-02 01:30 EST, 11-03 01:30 EST"},
		{"0 9 * * 1-5", autumn, "11-02 09:00 EST, 11-03 09:00 EST, 11-04 09:00 EST"},
		{"@daily", spring, "03-08 00:00 EST, 03-09 00:00 EDT, 03-10 00:00 EDT"},
		// Every half hour through the autumn change: the repeated wall
		// times run once (01:00 EDT, 01:30 EDT, then 02:00 EST).
		{"*/30 0-3 * * *", time.Date(2026, 11, 1, 0, 45, 0, 0, ny), "11-01 01:00 EDT, 11-01 01:30 EDT, 11-01 02:00 EST, 11-01 02:30 EST"},
		// And through the spring one: no half hour is left without a run.
		{"*/30 0-4 * * *", time.Date(2026, 3, 8, 1, 15, 0, 0, ny), "03-08 01:30 EST, 03-08 03:00 EDT, 03-08 03:30 EDT, 03-08 04:00 EDT"},
	} {
		w := mustParse(t, Spec{Cron: c.cron, Timezone: "America/New_York"}, c.from)
		if got := runs(w, c.from, len(strings.Split(c.want, ", "))); got != c.want {
			t.Errorf("%s from %s:\n got %s\nwant %s", c.cron, c.from.Format(time.RFC3339), got, c.want)
		}
	}
}

// A daily run across the autumn change asked twice in the repeated hour
// (a daemon that starts during it) does not run the repeated time again.
func TestCronRepeatedHourAfterARestart(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tz database: ", err)
	}
	w := mustParse(t, Spec{Cron: "30 1 * * *", Timezone: "America/New_York"}, time.Date(2026, 10, 1, 0, 0, 0, 0, ny))
	first, _ := w.Next(time.Date(2026, 11, 1, 0, 0, 0, 0, ny))
	// The second 01:15 (EST), after the first 01:30 ran.
	second := first.Add(45 * time.Minute)
	next, _ := w.Next(second)
	if got := next.In(ny).Format("01-02 15:04 MST"); got != "11-02 01:30 EST" {
		t.Fatalf("after the first 01:30 (%s), asked at %s: next %s", first, second.In(ny).Format("15:04 MST"), got)
	}
}

func TestEveryCountsFromItsStart(t *testing.T) {
	start := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	w := mustParse(t, Spec{Every: "2s"}, start)
	if got := runs(w, start, 3); got != "12-06 10:00 UTC, 12-06 10:00 UTC, 12-06 10:00 UTC" {
		t.Fatalf("every 2s: %s", got)
	}
	// Asked late (a daemon down for 9 s), the next is the next one due,
	// on the same grid.
	next, _ := w.Next(start.Add(9 * time.Second))
	if !next.Equal(start.Add(10 * time.Second)) {
		t.Fatalf("every 2s asked 9 s in: %s", next)
	}
}

func TestAt(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no tz database: ", err)
	}
	now := time.Date(2026, 12, 6, 18, 0, 0, 0, paris)
	w, err := Parse(Spec{At: "17:30", Timezone: "Europe/Paris"}, now, now)
	if err != nil {
		t.Fatal(err)
	}
	if w.Spec.At != "2026-12-07T17:30:00+01:00" {
		t.Fatalf("17:30 after 18:00 is tomorrow's: %s", w.Spec.At)
	}
	if got := runs(w, now, 2); got != "12-07 17:30 CET, none" {
		t.Fatalf("at runs: %s", got)
	}
	w, err = Parse(Spec{At: "2026-12-24T09:00:00Z"}, now, now)
	if err != nil || w.Spec.At != "2026-12-24T09:00:00Z" {
		t.Fatalf("an RFC 3339 at: %+v %v", w, err)
	}
}

func TestParseRefusesWhatIsNotASchedule(t *testing.T) {
	now := time.Now()
	for _, s := range []Spec{{}, {Cron: "* * * * *", Every: "1m"}, {Cron: "61 * * * *"}, {Cron: "* * * *"}, {Cron: "@every 1m"},
		{Cron: "CRON_TZ=UTC * * * * *"}, {Every: "soon"}, {Every: "10ms"}, {At: "25:00"}, {At: "tomorrow"},
		{Cron: "@daily", Timezone: "Mars/Olympus"}} {
		if _, err := Parse(s, now, now); err == nil {
			t.Errorf("%+v was taken", s)
		}
	}
}
