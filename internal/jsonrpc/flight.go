package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A connection's calls in flight are bounded, so that what one peer sends
// cannot grow the process whatever it sends: calls run off the read loop
// would otherwise pile up (a goroutine and an answer each) as fast as the
// peer writes, however slowly it reads. Each request takes a place before
// it is handled and gives it back once its answer is queued; past the
// bound the read loop waits for one, as it waits for room in the outbox.
// A call that only waits for an outcome (a prompt's turn) says so with
// Waits and moves to a second, larger bound, so that calls waiting long
// do not stop the peer's next calls from being read.

// Defaults of the bounds.
const (
	DefaultMaxCalls   = 64
	DefaultMaxWaiting = 1024
	// PreemptAfter is how long a Cheap call may hold the read loop before
	// the loop goes on on another goroutine.
	PreemptAfter = time.Millisecond
)

type flight struct {
	mu                     sync.Mutex
	room                   *sync.Cond
	running, waiting       int
	maxRunning, maxWaiting int
	ended                  bool
}

// slot is one call's place in the bounds.
type slot struct {
	f       *flight
	waiting bool
}

func (f *flight) init(maxRunning, maxWaiting int) {
	f.room = sync.NewCond(&f.mu)
	f.maxRunning, f.maxWaiting = maxRunning, maxWaiting
}

// admit takes a running place, waiting while there is none (the read
// loop: the peer's next frames stay unread meanwhile).
func (f *flight) admit() *slot {
	f.mu.Lock()
	for f.running >= f.maxRunning && !f.ended {
		f.room.Wait()
	}
	f.running++
	f.mu.Unlock()
	return &slot{f: f}
}

// wait moves s from the running bound to the waiting bound, waiting for
// a waiting place while there is none.
func (s *slot) wait() {
	f := s.f
	f.mu.Lock()
	if !s.waiting {
		for f.waiting >= f.maxWaiting && !f.ended {
			f.room.Wait()
		}
		s.waiting = true
		f.running--
		f.waiting++
		f.room.Broadcast()
	}
	f.mu.Unlock()
}

// release gives s's place back.
func (s *slot) release() {
	f := s.f
	f.mu.Lock()
	if s.waiting {
		f.waiting--
	} else {
		f.running--
	}
	f.room.Broadcast()
	f.mu.Unlock()
}

// end wakes every waiter for good: the connection is over.
func (f *flight) end() {
	f.mu.Lock()
	f.ended = true
	f.room.Broadcast()
	f.mu.Unlock()
}

// callCtx is a Later call's context: it carries the call's place, for
// Waits.
type callCtx struct {
	context.Context
	s *slot
}

type slotKey struct{}

func (c *callCtx) Value(k any) any {
	if k == (slotKey{}) {
		return c.s
	}
	return c.Context.Value(k)
}

// Waits says that the Later call running with ctx only waits from now on
// (for a turn to end, for output to come): it leaves the connection's
// bound of running calls for the larger one of waiting calls, waiting
// for a place there while there is none. Outside a Later call it does
// nothing.
func Waits(ctx context.Context) {
	if s, ok := ctx.Value(slotKey{}).(*slot); ok {
		s.wait()
	}
}

// Cheap is a result that runs its function on the read loop, with no
// hand-off to another goroutine, and is answered like any result. It is
// for calls that never wait in the normal course and need no order with
// the calls read after them (status): should one wait all the same (a
// lock held long elsewhere, a read the first call of a day makes), the
// preempter hands the read loop over to a new goroutine once it has run
// PreemptAfter, and the call finishes on the goroutine it ran on.
type Cheap func(ctx context.Context) (any, error)

// errHandedOver ends a reader that the preempter replaced.
var errHandedOver = errors.New("jsonrpc: the read loop went on on another goroutine")

// watch is the preempter's view of the read loop: which reader holds it
// (epoch) and whether it runs a Cheap call, since when.
type watch struct {
	mu      sync.Mutex
	epoch   uint64 // the reader's; the preempter's replacement takes the next
	running bool
	since   time.Time
	t       *time.Timer
}

// runCheap runs f on reader epoch, watched; handedOver reports whether
// the preempter gave the read loop to another goroutine meanwhile (this
// one then stops reading once it has answered).
func (c *Conn) runCheap(epoch uint64, f Cheap) (res any, err error, handedOver bool) {
	w := &c.watch
	w.mu.Lock()
	w.running, w.since = true, time.Now()
	if w.t == nil {
		w.t = time.AfterFunc(PreemptAfter, c.preempt)
	} else {
		w.t.Reset(PreemptAfter)
	}
	w.mu.Unlock()
	res, err = f(c.ctx)
	w.mu.Lock()
	if w.epoch != epoch {
		handedOver = true
	} else {
		w.running = false
		w.t.Stop()
	}
	w.mu.Unlock()
	return res, err, handedOver
}

// preempt runs when a Cheap call's time is up: if it still runs, the
// read loop goes on here, as the next reader.
func (c *Conn) preempt() {
	w := &c.watch
	w.mu.Lock()
	if !w.running {
		w.mu.Unlock()
		return
	}
	if left := PreemptAfter - time.Since(w.since); left > 0 {
		// A late firing meant for an earlier call: this one has time left.
		w.t.Reset(left)
		w.mu.Unlock()
		return
	}
	w.epoch++
	w.running = false
	epoch := w.epoch
	// Counted with the calls off the read loop: Run waits for them.
	c.later.Add(1)
	w.mu.Unlock()
	defer c.later.Done()
	c.log.Debug("a call held the read loop; reading on another goroutine", "after", PreemptAfter)
	if err := c.readLoop(epoch); !errors.Is(err, errHandedOver) {
		c.readEnd <- err
	}
}
