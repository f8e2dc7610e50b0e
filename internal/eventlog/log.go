// Package eventlog is a session's event log: each event gets the next
// seq, is written through the store, and reaches the subscribers only
// after its write committed, so what a client sees is on disk. A failed
// write breaks the log until it is mended from what the store holds (no
// seq a client saw is ever used again). Subscribers are pulled by their
// connection's writer and catch up from a bounded in-memory ring of
// recent events, or from the store once the ring no longer has them.
//
// The session owns one Log and tells it, at construction, what it needs
// of the session: the store, the session's id, and what to do when a
// write fails (end the turn). The log knows nothing else of sessions.
//
// Locks. A Log has three, taken in this order when nested (they sit in
// the session's order; see the comment on session.Session): emitMu →
// cmu → subMu. emitMu orders seq assignment with the store's queue
// (Write, InOrder, Fence, Mend); cmu guards the failure and the
// "something changed" signal; subMu the subscriptions, the last
// delivered seq and the recent events. A Subscriber's own lock (Attach's
// join) comes after subMu.
package eventlog

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Log is the event log of one session. Make one with New.
type Log struct {
	st       *store.Store
	id       string
	quotedID []byte
	broken   func(error) // told of the first write failure (the session ends its turn)

	emitMu sync.Mutex // orders seq assignment with the store queue
	seq    int64      // the last seq given out
	fenced bool       // closed: nothing more may be written
	turn   string     // the turn whose events are written now ("": none)

	subMu     sync.Mutex
	subs      map[Subscriber]*Sub
	list      []*Sub // subs as a slice: deliver's loop, per event
	delivered int64  // last seq committed and handed to the subscribers
	recent    ring   // committed events some subscriber has not been written yet

	cmu     sync.Mutex
	failed  error         // the write failure that broke the log, until mended
	changed chan struct{} // closed (and replaced) when delivered or failed change
}

// New returns the empty log of session id, writing through st. broken
// is called once for the first write failure (not again until the log is
// mended), outside the log's locks.
func New(st *store.Store, id string, broken func(error)) *Log {
	q, _ := json.Marshal(id)
	return &Log{st: st, id: id, quotedID: q, broken: broken, subs: map[Subscriber]*Sub{}}
}

// Resume starts the log of a stored session after last, its last stored
// seq (which counts as delivered: subscribers read it from the store).
func (l *Log) Resume(last int64) {
	l.emitMu.Lock()
	l.seq = last
	l.emitMu.Unlock()
	l.subMu.Lock()
	l.delivered = last
	l.subMu.Unlock()
}

// Write records one event as one of turn (nil: the turn whose events are
// written now, see InTurn; a queue_update is the session's, of no turn),
// writing in (if not nil) in the same transaction (an input's claim or
// end with its event). It returns the event's seq, or 0 when nothing can
// be written (the log is fenced or broken).
func (l *Log) Write(ev protocol.EventBody, turn *string, in *store.Input) int64 {
	typ := ev.EventType()
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	if l.fenced || l.Failure() != nil {
		return 0
	}
	l.seq++
	seq := l.seq
	of := l.turn
	switch {
	case turn != nil:
		of = *turn
	case typ == protocol.EventQueueUpdate:
		of = "" // the session's, not the turn's
	}
	body := encodeEvent(l.quotedID, seq, typ, of, ev)
	if in != nil {
		l.st.AppendEventWithInput(l.id, store.Event{Seq: seq, Type: typ, Body: body}, *in, func(err error) { l.Committed(seq, body, err) })
	} else {
		l.st.AppendEventTo(l.id, store.Event{Seq: seq, Type: typ, Body: body}, l)
	}
	return seq
}

// Committed implements store.Committer: an event written (delivered to
// the subscribers) or not (the log is broken).
func (l *Log) Committed(seq int64, body []byte, err error) {
	if err != nil {
		l.Fail(err)
		return
	}
	l.deliver(seq, body)
}

// InTurn makes every event written from now on one of turn's ("": none).
func (l *Log) InTurn(turn string) {
	l.emitMu.Lock()
	l.turn = turn
	l.emitMu.Unlock()
}

// InOrder runs f holding the log's write order (emitMu), with whether
// the log may write now (neither fenced nor broken): a write f queues on
// the store takes its place among the events', and one the log may not
// make is left to Mend's reload from the store.
func (l *Log) InOrder(f func(writable bool)) {
	l.emitMu.Lock()
	defer l.emitMu.Unlock()
	f(!l.fenced && l.Failure() == nil)
}

// deliver runs on the store's writer, in commit order: the event joins
// the recent ones and every subscription is queued on its connection
// (once: a queued one just gets further).
func (l *Log) deliver(seq int64, body []byte) {
	l.subMu.Lock()
	l.delivered = seq
	low := seq
	for _, sb := range l.list {
		low = min(low, sb.written.Load())
	}
	if seq > low { // else every subscriber has it already
		l.recent.push(seq, body)
	}
	l.recent.trim(low)
	for _, sb := range l.list {
		if !sb.queued {
			sb.queued = true
			if sb.c.Push(sb) != nil {
				sb.queued = false
			}
		}
	}
	l.subMu.Unlock()
	l.cmu.Lock()
	l.signalLocked()
	l.cmu.Unlock()
}

func (l *Log) signalLocked() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Fail records the first write failure of the log (a write of the
// session's that is not an event breaks it too) and tells the owner, once,
// with it as the cause.
func (l *Log) Fail(err error) {
	l.cmu.Lock()
	first := l.failed == nil
	if first {
		l.failed = err
	}
	l.signalLocked()
	l.cmu.Unlock()
	if first && l.broken != nil {
		l.broken(err)
	}
}

// Failure is the write failure that broke the log (nil: none, or mended).
func (l *Log) Failure() error {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	return l.failed
}

// Await waits until seq has been delivered, or the log broke (that
// error), or ctx ends.
func (l *Log) Await(ctx context.Context, seq int64) error {
	for {
		l.cmu.Lock()
		if l.failed != nil {
			err := l.failed
			l.cmu.Unlock()
			return err
		}
		l.subMu.Lock()
		done := l.delivered >= seq
		l.subMu.Unlock()
		if done {
			l.cmu.Unlock()
			return nil
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.cmu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// CaughtUp waits until every event written so far is committed, and so
// queued on the connections: a request to a client (a question, a file,
// a command) must not overtake the events before it (its tool_call).
func (l *Log) CaughtUp(ctx context.Context) error {
	l.emitMu.Lock()
	seq := l.seq
	l.emitMu.Unlock()
	return l.Await(ctx, seq)
}

// Mend makes a broken log writable again from what the store holds
// (store.Resume's last, its last committed seq): the seq counter goes
// back to last (no later event was ever delivered), restore brings the
// owner's own state back to the stored one, and only then is the failure
// cleared.
func (l *Log) Mend(last int64, restore func()) {
	l.emitMu.Lock()
	l.seq = last
	l.emitMu.Unlock()
	restore()
	l.cmu.Lock()
	l.failed = nil
	l.signalLocked()
	l.cmu.Unlock()
}

// Fence stops every later write: a turn that outlives its session's close
// (a tool that ignores cancellation) writes nothing.
func (l *Log) Fence() {
	l.emitMu.Lock()
	l.fenced = true
	l.emitMu.Unlock()
}
