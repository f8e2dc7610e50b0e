package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
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
