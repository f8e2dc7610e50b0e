package store

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// A run is claimed once per due time, however many claim it at once and
// across a reopen; the claim writes the schedule's body with it, and a
// run left open is found again.
func TestClaimRunOncePerDueTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	if err := s.PutSchedule(Schedule{ID: "sch_1", Body: []byte(`{"v":0}`)}); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			ok, err := s.ClaimRun("sch_1", 1000, "ses_a", []byte(`{"v":`+string(rune('a'+i))+`}`))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d claims of one due time won", won.Load())
	}
	s.Close()
	s = open(t, path)
	defer s.Close()
	if ok, err := s.ClaimRun("sch_1", 1000, "ses_a", []byte(`{"v":"again"}`)); ok || err != nil {
		t.Fatalf("claimed again after a reopen: %v %v", ok, err)
	}
	scs, err := s.Schedules(context.Background())
	if err != nil || len(scs) != 1 || string(scs[0].Body) == `{"v":0}` || string(scs[0].Body) == `{"v":"again"}` {
		t.Fatalf("the schedule after the claims: %+v %v", scs, err)
	}
	open, err := s.OpenRuns(context.Background())
	if err != nil || len(open) != 1 || open[0].State != "claimed" || open[0].SessionID != "ses_a" {
		t.Fatalf("open runs: %+v %v", open, err)
	}
	if err := s.SetRun(Run{ScheduleID: "sch_1", DueMs: 1000, State: "completed", SessionID: "ses_a"}, []byte(`{"v":"done"}`)); err != nil {
		t.Fatal(err)
	}
	if open, _ := s.OpenRuns(context.Background()); len(open) != 0 {
		t.Fatalf("an ended run is still open: %+v", open)
	}
	if ok, err := s.ClaimRun("sch_2", 1000, "", nil); ok || err == nil {
		t.Fatalf("a run of no schedule: %v %v", ok, err)
	}
	if found, err := s.DeleteSchedule("sch_1"); !found || err != nil {
		t.Fatalf("delete: %v %v", found, err)
	}
	if runs, _ := s.Runs(context.Background(), "sch_1", 10); len(runs) != 0 {
		t.Fatalf("runs of a deleted schedule: %+v", runs)
	}
}
