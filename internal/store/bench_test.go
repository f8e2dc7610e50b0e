package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BenchmarkAppendEvents: the store's side of an event stream, one
// session's events appended as fast as they come, each waited for.
func BenchmarkAppendEvents(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "zc.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateSession(&Session{ID: "s", AgentAlias: "a", Mode: "chat", Cwd: "/", Owner: "c"}); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		wg.Add(1)
		s.AppendEvent("s", Event{Seq: int64(i), Type: "agent_message_chunk",
			Body: fmt.Appendf(nil, `{"sessionId":"s","seq":%d,"type":"agent_message_chunk","text":"ok "}`, i)}, func(error) { wg.Done() })
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkListAllSessionsGrowth: paging (50 a page, keyset) through
// every stored session, 10,000 of them against 100; reports both and the
// ratio (linear paging gives about 100), and what one page costs at the
// end of the 10,000 against the first page of the 100 (keyset paging
// gives about 1: a page's cost does not depend on where it is).
func BenchmarkListAllSessionsGrowth(b *testing.B) {
	pageAll := func(s *Store) {
		var ms int64
		id := ""
		for {
			page, err := s.ListAfter(context.Background(), ms, id, 50)
			if err != nil {
				b.Fatal(err)
			}
			if len(page) < 50 {
				return
			}
			ms, id = page[len(page)-1].UpdatedMs, page[len(page)-1].ID
		}
	}
	stores := map[int]*Store{}
	for _, n := range []int{100, 10000} {
		s, err := Open(filepath.Join(b.TempDir(), "zc.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for i := range n {
			s.CreateSession(&Session{ID: fmt.Sprintf("s%05d", i), AgentAlias: "a", Mode: "chat", Cwd: "/", Owner: "c", UpdatedMs: int64(i)})
		}
		stores[n] = s
	}
	page := func(s *Store, ms int64, id string) time.Duration {
		t0 := time.Now()
		if p, err := s.ListAfter(context.Background(), ms, id, 50); err != nil || len(p) != 50 {
			b.Fatalf("page: %d sessions, %v", len(p), err)
		}
		return time.Since(t0)
	}
	var small, large, first, deep time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		pageAll(stores[100])
		small += time.Since(t0)
		t0 = time.Now()
		pageAll(stores[10000])
		large += time.Since(t0)
		for range 20 {
			first += page(stores[100], 0, "")
			deep += page(stores[10000], 60, "s00060") // the last full page of the 10,000
		}
	}
	b.ReportMetric(float64(small.Nanoseconds())/float64(b.N), "100-ns")
	b.ReportMetric(float64(large.Nanoseconds())/float64(b.N), "10000-ns")
	b.ReportMetric(float64(large)/float64(small), "all-10000/100")
	b.ReportMetric(float64(deep)/float64(first), "last-page/first")
}

// BenchmarkDeleteStall: a session of 1,000,000 events is deleted while
// another session appends an event and waits for its commit, again and
// again; reports how long the delete took and the longest the other
// session waited for a commit meanwhile (one writer serves both).
func BenchmarkDeleteStall(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, err := Open(filepath.Join(b.TempDir(), "zc.db"))
		if err != nil {
			b.Fatal(err)
		}
		for _, id := range []string{"big", "other"} {
			s.CreateSession(&Session{ID: id, AgentAlias: "a", Mode: "chat", Cwd: "/", Owner: "c"})
		}
		body := []byte(`{"sessionId":"big","seq":1,"type":"agent_message_chunk","text":"ok "}`)
		var wg sync.WaitGroup
		for seq := int64(1); seq <= 1_000_000; seq++ {
			wg.Add(1)
			s.AppendEvent("big", Event{Seq: seq, Type: "agent_message_chunk", Body: body}, func(error) { wg.Done() })
		}
		wg.Wait()
		done := make(chan time.Duration)
		go func() {
			t0 := time.Now()
			s.DeleteSession("big")
			done <- time.Since(t0)
		}()
		var worst time.Duration
		var took time.Duration
		for seq := int64(1); took == 0; seq++ {
			t0 := time.Now()
			ch := make(chan error, 1)
			s.AppendEvent("other", Event{Seq: seq, Type: "t", Body: body}, func(err error) { ch <- err })
			<-ch
			worst = max(worst, time.Since(t0))
			select {
			case took = <-done:
			default:
			}
		}
		b.ReportMetric(float64(took.Milliseconds()), "delete-ms")
		b.ReportMetric(float64(worst.Milliseconds()), "worst-stall-ms")
		s.Close()
	}
}
