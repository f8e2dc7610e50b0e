package eventlog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Source is a stream of frames a connection's writer pulls when it
// reaches the stream's place in the connection's one outgoing queue (the
// same shape as jsonrpc.Source; this package does not import jsonrpc).
type Source interface {
	AppendFrames(buf []byte, first bool, max int) ([]byte, bool, error)
}

// A Subscriber is a client as the log sees it. Its methods are called
// with the log's subMu held.
type Subscriber interface {
	// Push queues src on the subscriber's connection (its one outgoing
	// queue, so answers, events and requests keep their order); an
	// error means it will not be pulled.
	Push(src Source) error
	// MaxFrame is the largest frame the subscriber accepts.
	MaxFrame() int
}

// Sub is one subscriber's subscription to one log: a Source its
// connection pulls, queued there when the log has events for it. It
// holds no events of its own: they are read from the log's memory while
// they are recent and from the store when the subscriber fell behind, so
// a slow client neither stalls a turn nor grows the daemon, and still
// misses nothing.
type Sub struct {
	c Subscriber
	l *Log
	// Guarded by l.subMu.
	queued   bool // an item of this sub waits in the connection's queue
	detached bool
	// written is the last seq written to the subscriber (set by the
	// connection's writer, read by the log to trim its memory).
	written atomic.Int64
	// target is what this place in the queue writes up to; writer only.
	target int64
	// behind holds events read from the store and not written yet (for
	// a subscriber that fell out of memory's reach); writer only.
	behind []store.Event
}

// Attach subscribes c. It returns the last seq delivered before c joined
// (c gets every later event, and reads the earlier ones from the store)
// and whether c is new to the log; ok is false when join refused it.
// join, called with subMu held, records the new subscription with the
// client and returns the one the client is to have (its own earlier one,
// if it still holds one), or nil when the client is closed. Attaching c
// again changes nothing and returns the last seq c was written.
func (l *Log) Attach(c Subscriber, join func(*Sub) *Sub) (last int64, added, ok bool) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	if old, in := l.subs[c]; in {
		return old.written.Load(), false, true
	}
	sb := &Sub{c: c, l: l}
	sb.written.Store(l.delivered)
	if sb = join(sb); sb == nil {
		return 0, false, false
	}
	l.subs[c] = sb
	l.list = append(l.list, sb)
	return l.delivered, true, true
}

// Detach ends c's subscription; it says whether c was attached.
func (l *Log) Detach(c Subscriber) bool {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	sb := l.subs[c]
	if sb != nil {
		sb.detached = true
	}
	delete(l.subs, c)
	l.list = slices.DeleteFunc(l.list, func(x *Sub) bool { return x == sb })
	return sb != nil
}

// DetachAll ends every subscription and forgets the recent events; then,
// with the log's lock released, it calls was with each subscriber that
// was attached.
func (l *Log) DetachAll(was func(Subscriber)) {
	l.subMu.Lock()
	subs := l.subs
	l.subs = map[Subscriber]*Sub{}
	l.list = nil
	for _, sb := range subs {
		sb.detached = true
	}
	l.recent = ring{}
	l.subMu.Unlock()
	for c := range subs {
		was(c)
	}
}

// Subscribers returns the subscribers attached now, in no order.
func (l *Log) Subscribers() []Subscriber {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	cs := make([]Subscriber, 0, len(l.subs))
	for c := range l.subs {
		cs = append(cs, c)
	}
	return cs
}

// Attached is how many subscribers are attached now.
func (l *Log) Attached() int {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	return len(l.subs)
}

// catchUpPage bounds one read from the store for a subscriber that is
// behind.
const (
	catchUpRows  = 0 // no row limit: a page is bounded by bytes
	catchUpBytes = 256 << 10
)

// errEventsGone: a subscriber behind the log's memory found its next
// event missing from the store.
var errEventsGone = errors.New("session events are missing from the store")

// AppendFrames implements Source: the session/update frames of this
// subscription, from the one after the last written up to what was
// delivered when the writer reached this place in the queue.
func (sb *Sub) AppendFrames(buf []byte, first bool, max int) ([]byte, bool, error) {
	before := sb.written.Load()
	buf, more, err := sb.appendFrames(buf, first, max)
	if n := sb.written.Load() - before; n > 0 {
		metrics.EventsSent(int(n))
	}
	return buf, more, err
}

func (sb *Sub) appendFrames(buf []byte, first bool, max int) ([]byte, bool, error) {
	l := sb.l
	if first {
		l.subMu.Lock()
		sb.queued = false
		sb.target = l.delivered
		if sb.detached {
			sb.target = 0
		}
		l.subMu.Unlock()
	}
	limit := sb.c.MaxFrame()
	start := len(buf)
	for sb.written.Load() < sb.target {
		// Full, once this call wrote something: every call makes progress.
		if len(buf) >= max && len(buf) > start {
			return buf, true, nil
		}
		next := sb.written.Load() + 1
		// Events read from the store earlier, not written yet.
		for len(sb.behind) > 0 && sb.behind[0].Seq < next {
			sb.behind = sb.behind[1:]
		}
		if len(sb.behind) > 0 {
			for len(sb.behind) > 0 && (len(buf) < max || len(buf) == start) && sb.behind[0].Seq <= sb.target {
				e := sb.behind[0]
				buf = appendUpdate(buf, e.Body, limit)
				sb.written.Store(e.Seq)
				sb.behind = sb.behind[1:]
			}
			if len(sb.behind) == 0 {
				sb.behind = nil
			}
			continue
		}
		var n int
		buf, n = l.fromMemory(buf, next, sb.target, max, limit, &sb.written)
		if n > 0 {
			continue
		}
		// Not in memory any more: this subscriber is behind; catch up
		// from the store at its own pace, a bounded page at a time.
		evs, err := l.st.Events(context.Background(), l.id, next-1, catchUpRows, catchUpBytes)
		if err != nil {
			return buf, false, fmt.Errorf("session %s: catch-up read: %w", l.id, err)
		}
		if len(evs) == 0 || evs[0].Seq != next {
			return buf, false, fmt.Errorf("%w: session %s seq %d", errEventsGone, l.id, next)
		}
		sb.behind = evs
	}
	sb.behind = nil
	return buf, false, nil
}

// fromMemory appends the frames of the recent events from seq up to
// target (stopping at max bytes of buf) and records each as written; it
// returns how many it appended: 0 when seq is no longer in memory.
func (l *Log) fromMemory(buf []byte, seq, target int64, max, limit int, written *atomic.Int64) ([]byte, int) {
	l.subMu.Lock()
	defer l.subMu.Unlock()
	n := 0
	for ; seq <= target; seq++ {
		body, ok := l.recent.get(seq)
		if !ok {
			break
		}
		buf = appendUpdate(buf, body, limit)
		written.Store(seq)
		n++
		if len(buf) >= max {
			break
		}
	}
	return buf, n
}

// updatePrelude and updateEnd wrap a session/update's params into a frame.
const (
	updatePrelude = `{"jsonrpc":"2.0","method":"session/update","params":`
	updateEnd     = "}\n"
)

// appendUpdate appends the frame of one event, cut to fit the client's
// frame limit if it must be (the whole event stays in the store, where
// session/event reads it).
func appendUpdate(buf, body []byte, limit int) []byte {
	if over := len(updatePrelude) + len(body) + len(updateEnd) - 1; over > limit {
		body = protocol.Cut(body, limit-len(updatePrelude)-len(updateEnd))
	}
	buf = append(buf, updatePrelude...)
	buf = append(buf, body...)
	return append(buf, updateEnd...)
}
