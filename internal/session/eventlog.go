package session

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// The event log of a session: every event gets the next seq, is
// written, and is delivered to the attached clients only once its write
// has committed; a failed write breaks the session until mend.

// emit records one event. It returns the event's seq, or 0 when nothing
// can be written (the session is closed or its writes failed).
func (s *Session) emit(ev protocol.EventBody) int64 { return s.emitInput(ev, nil) }

// emitInput emits ev and, when in is not nil, writes in in the same
// transaction (an input's claim or end with its event).
func (s *Session) emitInput(ev protocol.EventBody, in *store.Input) int64 {
	return s.write(ev, nil, in)
}

// write emits ev as one of turn (nil: the turn running now, if any),
// writing in (if not nil) in the same transaction.
func (s *Session) write(ev protocol.EventBody, turn *string, in *store.Input) int64 {
	typ := ev.EventType()
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if s.fenced || s.failure() != nil {
		return 0
	}
	s.seq++
	seq := s.seq
	of := s.emitTurn
	switch {
	case turn != nil:
		of = *turn
	case typ == protocol.EventQueueUpdate:
		of = "" // the session's, not the turn's
	}
	body := encodeEvent(s.quotedID, seq, typ, of, ev)
	if in != nil {
		s.m.store.AppendEventWithInput(s.id, store.Event{Seq: seq, Type: typ, Body: body}, *in, func(err error) { s.Committed(seq, body, err) })
	} else {
		s.m.store.AppendEventTo(s.id, store.Event{Seq: seq, Type: typ, Body: body}, s)
	}
	return seq
}

// Committed implements store.Committer: an event written (delivered to
// the attached clients) or not (the session's writes are broken).
func (s *Session) Committed(seq int64, body []byte, err error) {
	if err != nil {
		s.fail(err)
		return
	}
	s.deliver(seq, body)
}

// inTurn makes every event emitted from now on one of turn's ("":
// none).
func (s *Session) inTurn(turn string) {
	s.emitMu.Lock()
	s.emitTurn = turn
	s.emitMu.Unlock()
}

// deliver runs on the store's writer, in commit order: the event joins
// the recent ones and every attached client's subscription is queued on
// its connection (once: a queued one just gets further).
func (s *Session) deliver(seq int64, body []byte) {
	s.subMu.Lock()
	s.delivered = seq
	low := seq
	for _, sb := range s.subs {
		low = min(low, sb.written.Load())
	}
	if seq > low { // else every client has it already
		s.recent.push(seq, body)
	}
	s.recent.trim(low)
	for _, sb := range s.subs {
		if !sb.queued {
			sb.queued = true
			if sb.c.conn.Push(sb) != nil {
				sb.queued = false
			}
		}
	}
	s.subMu.Unlock()
	s.cmu.Lock()
	s.signalLocked()
	s.cmu.Unlock()
}

func (s *Session) signalLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// fail records the first write failure of the session and cancels its
// turn with it as the cause.
func (s *Session) fail(err error) {
	s.cmu.Lock()
	first := s.failed == nil
	if first {
		s.failed = err
	}
	s.signalLocked()
	s.cmu.Unlock()
	if first {
		s.m.log.Error("session write failed: its turn ends", "sessionId", s.id, "err", err)
		s.t.cancelTurn(err)
	}
}

func (s *Session) failure() error {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.failed
}

// committed waits until seq has been delivered, or the session's writes
// failed (that error), or ctx ends.
func (s *Session) committed(ctx context.Context, seq int64) error {
	for {
		s.cmu.Lock()
		if s.failed != nil {
			err := s.failed
			s.cmu.Unlock()
			return err
		}
		s.subMu.Lock()
		done := s.delivered >= seq
		s.subMu.Unlock()
		if done {
			s.cmu.Unlock()
			return nil
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.cmu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// mend makes a session whose writes failed writable again, from what the
// store holds: the seq counter goes back to the last committed event (no
// later one was ever delivered) and the transcript to the stored one.
func (s *Session) mend() error {
	if s.failure() == nil {
		return nil
	}
	last, msgs, err := s.m.store.Resume(s.id)
	if err != nil {
		return err
	}
	s.emitMu.Lock()
	s.seq = last
	s.emitMu.Unlock()
	s.mu.Lock()
	s.history.Truncate(int(msgs))
	s.mu.Unlock()
	s.cmu.Lock()
	s.failed = nil
	s.signalLocked()
	s.cmu.Unlock()
	if err := s.repairStored(); err != nil {
		s.fail(err)
		return err
	}
	s.m.log.Info("session writable again", "sessionId", s.id, "lastSeq", last)
	return nil
}

// fence stops every later write of the session: a turn that outlives its
// session's close (a tool that ignores cancellation) writes nothing.
func (s *Session) fence() {
	s.emitMu.Lock()
	s.fenced = true
	s.emitMu.Unlock()
}

// written is the error callback of writes whose failure breaks the session.
func (s *Session) written(err error) {
	if err != nil {
		s.fail(err)
	}
}

// attach adds c; it returns the last seq delivered before c joined, so
// c gets every later event live and the earlier ones from history.
func (s *Session) attach(c *Client) (int64, bool) {
	s.subMu.Lock()
	if sb, ok := s.clients[c]; ok {
		s.subMu.Unlock()
		return sb.written.Load(), true
	}
	sb := c.subscribe(s, s.delivered)
	if sb == nil {
		s.subMu.Unlock()
		return 0, false
	}
	s.clients[c] = sb
	s.subs = append(s.subs, sb)
	last := s.delivered
	s.subMu.Unlock()
	s.touch()
	s.m.changed(s.id) // who is attached changed (session/get's attached)
	return last, true
}

func (s *Session) detach(c *Client) {
	s.subMu.Lock()
	sb := s.clients[c]
	if sb != nil {
		sb.detached = true
	}
	delete(s.clients, c)
	s.subs = slices.DeleteFunc(s.subs, func(x *sub) bool { return x == sb })
	s.subMu.Unlock()
	s.touch()
	if sb != nil {
		s.m.changed(s.id)
	}
}

func (s *Session) detachAll() {
	s.subMu.Lock()
	cs := s.clients
	s.clients = map[*Client]*sub{}
	s.subs = nil
	for _, sb := range cs {
		sb.detached = true
	}
	s.recent = ring{}
	s.subMu.Unlock()
	for c := range cs {
		c.unsubscribe(s)
	}
}

// fromMemory appends the frames of the recent events from seq up to
// target (stopping at max bytes of buf) and records each as written; it
// returns how many it appended: 0 when seq is no longer in memory.
func (s *Session) fromMemory(buf []byte, seq, target int64, max, limit int, written *atomic.Int64) ([]byte, int) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	n := 0
	for ; seq <= target; seq++ {
		body, ok := s.recent.get(seq)
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

// caughtUp waits until every event emitted so far is committed, and so
// queued on the connections: a request to a client (a question, a file,
// a command) must not overtake the events before it (its tool_call).
func (s *Session) caughtUp(ctx context.Context) error {
	s.emitMu.Lock()
	seq := s.seq
	s.emitMu.Unlock()
	return s.committed(ctx, seq)
}
