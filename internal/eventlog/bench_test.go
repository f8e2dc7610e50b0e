package eventlog

import (
	"fmt"
	"testing"
)

// puller is a subscriber whose connection's writer pulls at once: it
// keeps the one source queued on it.
type puller struct{ src Source }

func (p *puller) Push(src Source) error { p.src = src; return nil }
func (p *puller) MaxFrame() int         { return 1 << 20 }

// BenchmarkDeliver: the per-event path past the store's commit, for 1
// and 8 subscribers: the event delivered (memory, each subscription
// queued) and each subscriber's writer pulling its frame.
func BenchmarkDeliver(b *testing.B) {
	body := []byte(`{"sessionId":"s","seq":1,"type":"agent_message_chunk","turnId":"turn_0123456789abcdef","text":"a streamed chunk of text"}`)
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			l := New(nil, "s", nil)
			ps := make([]*puller, n)
			for i := range ps {
				ps[i] = &puller{}
				l.Attach(ps[i], join)
			}
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				l.Committed(int64(i+1), body, nil)
				for _, p := range ps {
					var err error
					if buf, _, err = p.src.AppendFrames(buf[:0], true, 64<<10); err != nil {
						b.Fatal(err)
					}
					p.src = nil
				}
			}
		})
	}
}
