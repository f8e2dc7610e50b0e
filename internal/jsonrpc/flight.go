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
func (f *flight) admit() slot {
	f.mu.Lock()
	for f.running >= f.maxRunning && !f.ended {
		f.room.Wait()
	}
	f.running++
	f.mu.Unlock()
	return slot{f: f}
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
// PreemptAfter (found by the watchdog, which looks every PreemptAfter/2:
// within half that again), and the call finishes on the goroutine it ran
// on.
type Cheap func(ctx context.Context) (any, error)

// errHandedOver ends a reader that the preempter replaced.
var errHandedOver = errors.New("jsonrpc: the read loop went on on another goroutine")

// watch is the preempter's view of the read loop: which reader holds it
// (epoch), whether it runs a Cheap call, and which (calls counts them).
// A Cheap call costs its loop two uncontended locks and no timer nor
// clock: arming a timer per call (as this did) woke the runtime's
// network poller each time, about 4 µs of CPU a call, more than the call.
type watch struct {
	mu      sync.Mutex
	epoch   uint64 // the reader's; the preempter's replacement takes the next
	running bool
	calls   uint64 // Cheap calls begun
	seen    uint64 // calls at the watchdog's last look
	looks   int    // the looks in a row that found that call running
	listed  bool   // the watchdog looks at this loop
	ended   bool   // the connection's read loop is over: nothing to hand on
}

// preemptLooks is how many looks in a row must find the same call
// running before it is preempted: the first may come just after it
// started, so it has run (preemptLooks-1) looks' intervals, PreemptAfter.
const preemptLooks = 3

// runCheap runs f on reader epoch, watched; handedOver reports whether
// the preempter gave the read loop to another goroutine meanwhile (this
// one then stops reading once it has answered).
func (c *Conn) runCheap(epoch uint64, f Cheap) (res any, err error, handedOver bool) {
	w := &c.watch
	w.mu.Lock()
	w.running = true
	w.calls++
	list := !w.listed && !w.ended
	if list {
		w.listed = true
	}
	w.mu.Unlock()
	if list {
		dog.watch(c)
	}
	res, err = f(c.ctx)
	w.mu.Lock()
	if w.epoch != epoch {
		handedOver = true
	} else {
		w.running = false
	}
	w.mu.Unlock()
	return res, err, handedOver
}

// endWatch tells the preempter that the read loop is over (Run, before
// it waits for the calls off the loop: no reader starts after it).
func (c *Conn) endWatch() {
	c.watch.mu.Lock()
	c.watch.ended = true
	c.watch.mu.Unlock()
}

// look is the watchdog's look at c's read loop: a Cheap call found
// running preemptLooks looks in a row is preempted (the loop goes on on
// a new goroutine, as the next reader). It reports whether to look
// again: not once the loop has begun no Cheap call since the last look,
// nor after the end.
func (c *Conn) look() bool {
	w := &c.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	same := w.calls == w.seen
	w.seen = w.calls
	if w.ended || (!w.running && same) {
		w.listed = false
		return false
	}
	if !w.running || !same {
		w.looks = 0
		if !w.running {
			return true
		}
	}
	if w.looks++; w.looks < preemptLooks {
		return true
	}
	w.looks = 0
	w.epoch++
	w.running = false
	epoch := w.epoch
	// Counted with the calls off the read loop: Run waits for them (it
	// sets ended, under this lock, before it waits).
	c.later.Add(1)
	go c.readOn(epoch)
	return true
}

// readOn is the read loop, gone on as reader epoch after a preemption.
func (c *Conn) readOn(epoch uint64) {
	defer c.later.Done()
	c.log.Debug("a call held the read loop; reading on another goroutine", "after", PreemptAfter)
	if err := c.readLoop(epoch); !errors.Is(err, errHandedOver) {
		c.readEnd <- err
	}
}

// The watchdog is the process's one preempter: a goroutine awake only
// while some read loop has run Cheap calls lately, which looks at those
// loops every lookEvery.
type watchdog struct {
	mu    sync.Mutex
	conns []*Conn // the loops to look at
	awake bool
}

var dog watchdog

// lookEvery is the watchdog's interval: a call is preempted once it has
// run PreemptAfter, and before it has run half that again.
const lookEvery = PreemptAfter / (preemptLooks - 1)

// watch adds c's loop to those the watchdog looks at, waking it.
func (d *watchdog) watch(c *Conn) {
	d.mu.Lock()
	d.conns = append(d.conns, c)
	if !d.awake {
		d.awake = true
		go d.run()
	}
	d.mu.Unlock()
}

func (d *watchdog) run() {
	t := time.NewTicker(lookEvery)
	defer t.Stop()
	var keep []*Conn
	for range t.C {
		d.mu.Lock()
		conns := d.conns
		d.conns = nil
		d.mu.Unlock()
		keep = keep[:0]
		for _, c := range conns {
			if c.look() {
				keep = append(keep, c)
			}
		}
		d.mu.Lock()
		d.conns = append(d.conns, keep...)
		if len(d.conns) == 0 {
			d.awake = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
	}
}
