// Package turnslot provides a session's turn slot: one holder at a time
// (a prompt's turn, or a borrower: a compaction, a rewind), a bounded
// queue of prompts behind it, and the running turn's id, cancel, steers,
// waiters and approvals. Its lock is taken last: it is never held while
// another lock is taken, an event emitted or anything else waited on.
//
// The slot knows a session's prompts only as a Job: the session's own
// type, of which it reads what a queue shows and a steer carries, and
// keeps its Ticket (the prompt's place in the queue) with it.
package turnslot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// Errors the slot returns: ErrBusy (wrapped) when the queue is full and
// for a TurnMismatch; ErrClosed once the session closes.
var (
	ErrBusy   = errors.New("session busy")
	ErrClosed = errors.New("session closing")
)

// Client is who sent a prompt or a steer (nil, its zero value: the
// daemon), as session/queue names it.
type Client interface {
	comparable
	ID() string
	Name() string
}

// Job is a prompt as the slot knows it: the session's own type (a
// pointer), sent by a C.
type Job[C Client] interface {
	comparable
	// Ticket is the slot's part of the job, kept with it.
	Ticket() *Ticket
	// AsSteer is what the job says and who sent it: what session/queue
	// shows of it, and what it becomes when it is moved into the running
	// turn.
	AsSteer() Steer[C]
	// ClientMessageID is the id its client sent it under ("": none).
	ClientMessageID() string
	// NoAsk says its turn asks no approval (a scheduled run with
	// approve: rules).
	NoAsk() bool
}

// Ticket is a job's place in the queue (an id for session/queue, the
// time it was queued) and whether its caller gave it up. Its zero value
// is a job never queued; only the slot reads or writes it, under its
// lock.
type Ticket struct {
	id        string
	queued    time.Time
	withdrawn bool
}

// Steer is text (and images) for the running turn, from a client.
type Steer[C Client] struct {
	Text   string
	Images []provider.Image
	Client C
}

// Slot is a session's turn slot; its zero value is free, with nothing
// queued. J is the session's job, C its client.
type Slot[J Job[C], C Client] struct {
	mu sync.Mutex
	// running: the slot is held; done closes when its holder lets go.
	running bool
	done    chan struct{}
	// closing: the session closes: nothing more is queued or started.
	closing  bool
	lastUsed time.Time
	pending  []J

	current J // the prompt whose turn runs
	cancel  context.CancelCauseFunc
	// id names the running turn ("" between turns); steers wait for its
	// next model call; steerClosed: it takes no more (it is ending).
	id          string
	steers      []Steer[C]
	steerClosed bool
	// waiters are the callers of queued prompts moved into the running
	// turn (session/queue/steer): they get its answer.
	waiters   []J
	approvals map[string]*Approval[C]
}

// Enqueue takes a prompt: start says the slot was free and j holds it
// now (its turn is to run); else it waits in the queue (limit long at
// most; past it, ErrBusy).
func (t *Slot[J, C]) Enqueue(j J, limit int) (start bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false, ErrClosed
	}
	t.lastUsed = time.Now()
	if !t.running {
		t.running, t.done = true, make(chan struct{})
		return true, nil
	}
	if len(t.pending) >= limit {
		return false, fmt.Errorf("%w: %d prompts already queued", ErrBusy, len(t.pending))
	}
	tk := j.Ticket()
	tk.id, tk.queued = protocol.NewID("q_", 6), time.Now()
	t.pending = append(t.pending, j)
	return false, nil
}

// Release lets the slot go: its holder's waiters are told, and the next
// prompt takes the slot (returned: its turn is to run), unless none
// waits or the session closes: then the slot is free, and the prompts
// still queued are returned as dropped (to be answered cancelled).
func (t *Slot[J, C]) Release() (next J, waiters []J, dropped []J) {
	t.mu.Lock()
	defer t.mu.Unlock()
	close(t.done)
	waiters, t.waiters = t.waiters, nil
	if len(t.pending) == 0 || t.closing {
		dropped, t.pending = t.pending, nil
		t.running, t.lastUsed = false, time.Now()
		return next, waiters, dropped
	}
	next, t.pending = t.pending[0], t.pending[1:]
	t.done = make(chan struct{})
	return next, waiters, nil
}

// Borrow takes the slot for work between turns (a compaction, a
// rewind): with wait, after the running turn and those queued behind
// it; without, busy when a turn runs. Prompts that come meanwhile queue;
// Release lets the slot go.
func (t *Slot[J, C]) Borrow(ctx context.Context, wait bool, busy error) error {
	t.mu.Lock()
	for t.running && wait {
		done := t.done
		t.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		t.mu.Lock()
	}
	defer t.mu.Unlock()
	if t.closing {
		return ErrClosed
	}
	if t.running {
		return busy
	}
	t.running, t.done = true, make(chan struct{})
	return nil
}

// Begin makes j the running turn (named id, cancelled by cancel); a
// prompt given up before it ran is cancelled at once.
func (t *Slot[J, C]) Begin(j J, id string, cancel context.CancelCauseFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current, t.cancel = j, cancel
	t.id, t.steers, t.steerClosed = id, nil, false
	if j.Ticket().withdrawn {
		cancel(nil)
	}
}

// End closes the running turn: the steers it took but never showed the
// model (it failed or was cancelled first) are not lost: they become
// the next prompt, first in the queue, the job that next makes of them
// (joined: their texts, their images, the first one's client). next is
// called under the slot's lock: it only makes the job.
func (t *Slot[J, C]) End(next func(Steer[C]) J) {
	t.mu.Lock()
	defer t.mu.Unlock()
	left := t.steers
	var none J
	t.current, t.cancel = none, nil
	t.id, t.steers, t.steerClosed = "", nil, true
	if len(left) == 0 || t.closing {
		return
	}
	joined := Steer[C]{Client: left[0].Client}
	var texts []string
	for _, x := range left {
		texts = append(texts, x.Text)
		joined.Images = append(joined.Images, x.Images...)
	}
	joined.Text = strings.Join(texts, "\n\n")
	j := next(joined)
	tk := j.Ticket()
	tk.id, tk.queued = protocol.NewID("q_", 6), time.Now()
	t.pending = append([]J{j}, t.pending...)
}

// CancelTurn cancels the running turn (with cause, nil: a cancel);
// false when none runs.
func (t *Slot[J, C]) CancelTurn(cause error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel == nil {
		return false
	}
	t.cancel(cause)
	return true
}

// Withdraw gives a prompt up: removed from the queue while it waits
// (true: its caller is to be answered cancelled), else its turn is
// cancelled while (or as soon as) it runs.
func (t *Slot[J, C]) Withdraw(j J) (removed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.pending, j); i >= 0 {
		t.pending = slices.Delete(t.pending, i, i+1)
		return true
	}
	j.Ticket().withdrawn = true
	if t.current == j && t.cancel != nil {
		t.cancel(nil)
	}
	return false
}

// Remove takes queued prompts out: the one with queue id qid, or all
// ("").
func (t *Slot[J, C]) Remove(qid string) []J {
	t.mu.Lock()
	defer t.mu.Unlock()
	var kept, gone []J
	for _, j := range t.pending {
		if qid == "" || j.Ticket().id == qid {
			gone = append(gone, j)
		} else {
			kept = append(kept, j)
		}
	}
	t.pending = kept
	return gone
}

// Drain starts the session's close: nothing is queued any more; the
// prompts waiting are returned (to be answered cancelled).
func (t *Slot[J, C]) Drain() []J {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	queued := t.pending
	t.pending = nil
	return queued
}

// Items is the queue as session/queue shows it.
func (t *Slot[J, C]) Items() []protocol.QueueItem {
	t.mu.Lock()
	defer t.mu.Unlock()
	items := []protocol.QueueItem{}
	var daemon C
	for _, j := range t.pending {
		tk, x := j.Ticket(), j.AsSteer()
		it := protocol.QueueItem{ID: tk.id, Text: firstLine(x.Text), QueuedMs: tk.queued.UnixMilli()}
		if x.Client != daemon {
			it.ClientID, it.ClientName = x.Client.ID(), x.Client.Name()
		}
		items = append(items, it)
	}
	return items
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(line) > MaxItemText {
		// A one-line prompt of megabytes: told cut (in session/queue
		// and every queue_update, which are stored).
		n := MaxItemText
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n] + "…"
	}
	return line
}

// MaxItemText bounds a queue item's text (a prompt's first line), in
// bytes; a longer one is cut, ending "…".
const MaxItemText = 1024

// Queued reports whether a prompt waits.
func (t *Slot[J, C]) Queued() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending) > 0
}

// QueuedID is the queue id of the prompt waiting under clientMessageId
// cmid ("": none waits).
func (t *Slot[J, C]) QueuedID(cmid string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, j := range t.pending {
		if j.ClientMessageID() == cmid {
			return j.Ticket().id
		}
	}
	return ""
}

// Current is the prompt whose turn runs (the zero J: none, or a
// borrower's work).
func (t *Slot[J, C]) Current() J {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}

// TurnClient is the client whose prompt the running turn answers.
func (t *Slot[J, C]) TurnClient() (c C) {
	var none J
	if j := t.Current(); j != none {
		c = j.AsSteer().Client
	}
	return c
}

// NoAsk says whether the running turn may ask no approval (a scheduled
// run with approve: rules).
func (t *Slot[J, C]) NoAsk() bool {
	var none J
	j := t.Current()
	return j != none && j.NoAsk()
}

// State says whether the slot is held, and what closes when it is let go.
func (t *Slot[J, C]) State() (running bool, done chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running, t.done
}

// Idle reports whether the slot is free.
func (t *Slot[J, C]) Idle() bool {
	running, _ := t.State()
	return !running
}

// Shutting reports whether the session closes.
func (t *Slot[J, C]) Shutting() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

// Close marks the session closing (nothing more is queued).
func (t *Slot[J, C]) Close() {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
}

// Touch records a use; Used says when the last was.
func (t *Slot[J, C]) Touch() {
	t.mu.Lock()
	t.lastUsed = time.Now()
	t.mu.Unlock()
}

func (t *Slot[J, C]) Used() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastUsed
}
