package session

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// BenchmarkResume: session/new of a stored session that is not live, one
// of 10,000 messages and 1,000,000 events against an empty one; reports
// both medians and their ratio (attaching must not cost the session's
// length).
func BenchmarkResume(b *testing.B) {
	st, err := store.Open(filepath.Join(b.TempDir(), "zc.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := config.Default(func(string) string { return "" })
	m, err := NewManager(Options{Config: cfg, Store: st, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	for _, id := range []string{"big", "empty"} {
		st.CreateSession(&store.Session{ID: id, AgentAlias: "default", Mode: "chat", Cwd: "/", Owner: "c"})
	}
	var wg sync.WaitGroup
	body := []byte(`{"sessionId":"big","seq":1,"type":"agent_message_chunk","text":"ok "}`)
	for seq := int64(1); seq <= 1_000_000; seq++ {
		wg.Add(1)
		st.AppendEvent("big", store.Event{Seq: seq, Type: "agent_message_chunk", Body: body}, func(error) { wg.Done() })
	}
	for i := int64(0); i < 10_000; i++ {
		wg.Add(1)
		st.AppendMessage("big", i, []byte(fmt.Sprintf(`{"role":"user","text":"message %d"}`, i)), func(error) { wg.Done() })
	}
	wg.Wait()
	c := NewClient(newConn())
	c.SetIdentity("c", "", false, 0)
	defer c.Close()
	resume := func(id string) time.Duration {
		t0 := time.Now()
		if _, err := m.New(context.Background(), c, protocol.SessionNewParams{SessionID: id, KeepSiblings: true}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(t0)
		if err := m.Close(c, id); err != nil { // not live again for the next round
			b.Fatal(err)
		}
		return took
	}
	var big, empty time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		big += resume("big")
		empty += resume("empty")
	}
	b.ReportMetric(float64(big.Nanoseconds())/float64(b.N), "big-ns")
	b.ReportMetric(float64(empty.Nanoseconds())/float64(b.N), "empty-ns")
	b.ReportMetric(float64(big)/float64(empty), "big/empty")
}
