package session

import (
	"github.com/zeroclaw/zeroclaw/internal/eventlog"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// The session's side of its event log (internal/eventlog, s.events):
// the names the rest of the package writes and waits with, and the
// session's part of the clients' subscriptions.

// emit records one event. It returns the event's seq, or 0 when nothing
// can be written (the session is closed or its writes failed).
func (s *Session) emit(ev protocol.EventBody) int64 { return s.events.Write(ev, nil, nil) }

// write emits ev as one of turn (nil: the turn running now, if any),
// writing in (if not nil) in the same transaction.
func (s *Session) write(ev protocol.EventBody, turn *string, in *store.Input) int64 {
	return s.events.Write(ev, turn, in)
}

// broken is told the first write failure of the session: its turn is
// cancelled with it as the cause.
func (s *Session) broken(err error) {
	s.m.log.Error("session write failed: its turn ends", "sessionId", s.id, "err", err)
	s.t.CancelTurn(err)
}

// mend makes a session whose writes failed writable again, from what the
// store holds: the seq counter goes back to the last committed event (no
// later one was ever delivered) and the transcript to the stored one.
func (s *Session) mend() error {
	if s.events.Failure() == nil {
		return nil
	}
	last, msgs, err := s.m.store.Resume(s.id)
	if err != nil {
		return err
	}
	s.events.Mend(last, func() {
		s.mu.Lock()
		s.history.Truncate(int(msgs))
		s.mu.Unlock()
	})
	if err := s.repairStored(); err != nil {
		s.events.Fail(err)
		return err
	}
	s.m.log.Info("session writable again", "sessionId", s.id, "lastSeq", last)
	return nil
}

// written is the error callback of writes whose failure breaks the session.
func (s *Session) written(err error) {
	if err != nil {
		s.events.Fail(err)
	}
}

// subscriber is a Client as its sessions' event logs see it
// (eventlog.Subscriber): the same object, converted, so that Client
// shows no Push of its own.
type subscriber Client

func (c *subscriber) Push(src eventlog.Source) error { return c.conn.Push(src) }
func (c *subscriber) MaxFrame() int                  { return (*Client)(c).MaxFrame() }

func clientOf(sub eventlog.Subscriber) *Client { return (*Client)(sub.(*subscriber)) }

// attach adds c; it returns the last seq delivered before c joined, so
// c gets every later event live and the earlier ones from history.
func (s *Session) attach(c *Client) (int64, bool) {
	last, added, ok := s.events.Attach((*subscriber)(c), func(sb *eventlog.Sub) *eventlog.Sub { return c.subscribe(s, sb) })
	if added {
		s.touch()
		s.m.list.Changed(s.id) // who is attached changed (session/get's attached)
	}
	return last, ok
}

func (s *Session) detach(c *Client) {
	was := s.events.Detach((*subscriber)(c))
	s.touch()
	if was {
		s.m.list.Changed(s.id)
	}
}

func (s *Session) detachAll() {
	s.events.DetachAll(func(sub eventlog.Subscriber) { clientOf(sub).unsubscribe(s) })
}

// clients are the clients attached now, in no order.
func (s *Session) clients() []*Client {
	subs := s.events.Subscribers()
	cs := make([]*Client, len(subs))
	for i, sub := range subs {
		cs[i] = clientOf(sub)
	}
	return cs
}

// mustJSON is eventlog.MustJSON: what the session stores besides its
// events (its messages, its inputs) is encoded as they are.
func mustJSON(v any) []byte { return eventlog.MustJSON(v) }
