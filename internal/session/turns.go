package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// turns owns a session's turn slot and everything about the turn: who
// holds the slot (a prompt's turn, or a borrower: a compaction, a
// rewind), the prompts waiting for it, the running turn's id, client and
// cancel, the steers sent to it, the callers waiting on its answer and
// the approvals it asks. Its lock is its own, and taken last: it is
// never held while another lock is taken, an event emitted or anybody
// waited on. No other code changes these.
type turns struct {
	mu sync.Mutex
	// running: the slot is held; done closes when its holder lets go.
	running bool
	done    chan struct{}
	// closing: the session closes: nothing more is queued or started.
	closing  bool
	lastUsed time.Time
	pending  []*job

	current *job // the prompt whose turn runs
	cancel  context.CancelCauseFunc
	client  *Client // who sent it
	// id names the running turn ("" between turns); steers wait for its
	// next model call; steerClosed: it takes no more (it is ending).
	id          string
	steers      []steer
	steerClosed bool
	// waiters are the callers of queued prompts moved into the running
	// turn (session/queue/steer): they get its answer.
	waiters   []*job
	approvals map[string]*approval
}

// cancelled is the answer of a prompt that never ran.
func cancelled(sid string) protocol.SessionPromptResult {
	return protocol.SessionPromptResult{SessionID: sid, StopReason: protocol.StopCancelled}
}

// enqueue takes a prompt: start says the slot was free and j holds it
// now (its turn is to run); else it waits in the queue (limit long at
// most).
func (t *turns) enqueue(j *job, limit int) (start bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return false, ErrNotFound
	}
	t.lastUsed = time.Now()
	if !t.running {
		t.running, t.done = true, make(chan struct{})
		return true, nil
	}
	if len(t.pending) >= limit {
		return false, fmt.Errorf("%w: %d prompts already queued", ErrBusy, len(t.pending))
	}
	j.id, j.queued = protocol.NewID("q_", 6), time.Now()
	t.pending = append(t.pending, j)
	return false, nil
}

// release lets the slot go: its holder's waiters are told, and the next
// prompt takes the slot (returned: its turn is to run), unless none
// waits or the session closes: then the slot is free, and the prompts
// still queued are returned as dropped (to be answered cancelled).
func (t *turns) release() (next *job, waiters []*job, dropped []*job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	close(t.done)
	waiters, t.waiters = t.waiters, nil
	if len(t.pending) == 0 || t.closing {
		dropped, t.pending = t.pending, nil
		t.running, t.lastUsed = false, time.Now()
		return nil, waiters, dropped
	}
	next, t.pending = t.pending[0], t.pending[1:]
	t.done = make(chan struct{})
	return next, waiters, nil
}

// borrow takes the slot for work between turns (a compaction, a
// rewind): with wait, after the running turn and those queued behind
// it; without, busy when a turn runs. Prompts that come meanwhile queue;
// release lets the slot go.
func (t *turns) borrow(ctx context.Context, wait bool, busy error) error {
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
		return ErrNotFound
	}
	if t.running {
		return busy
	}
	t.running, t.done = true, make(chan struct{})
	return nil
}

// begin makes j the running turn; a prompt given up before it ran is
// cancelled at once.
func (t *turns) begin(j *job, id string, cancel context.CancelCauseFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current, t.client, t.cancel = j, j.client, cancel
	t.id, t.steers, t.steerClosed = id, nil, false
	if j.withdrawn {
		cancel(nil)
	}
}

// end closes the running turn: the steers it took but never showed the
// model (it failed or was cancelled first) are not lost: they become
// the next prompt, first in the queue.
func (t *turns) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	left := t.steers
	t.current, t.client, t.cancel = nil, nil, nil
	t.id, t.steers, t.steerClosed = "", nil, true
	if len(left) == 0 || t.closing {
		return
	}
	next := &job{id: protocol.NewID("q_", 6), queued: time.Now(), client: left[0].client, done: make(chan protocol.SessionPromptResult, 1)}
	var texts []string
	for _, x := range left {
		texts = append(texts, x.text)
		next.images = append(next.images, x.images...)
	}
	next.prompt = strings.Join(texts, "\n\n")
	t.pending = append([]*job{next}, t.pending...)
}

// cancelTurn cancels the running turn (with cause, nil: a cancel);
// false when none runs.
func (t *turns) cancelTurn(cause error) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel == nil {
		return false
	}
	t.cancel(cause)
	return true
}

// withdraw gives a prompt up: removed from the queue while it waits
// (true: its caller is to be answered cancelled), else its turn is
// cancelled while (or as soon as) it runs.
func (t *turns) withdraw(j *job) (removed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.pending, j); i >= 0 {
		t.pending = slices.Delete(t.pending, i, i+1)
		return true
	}
	j.withdrawn = true
	if t.current == j && t.cancel != nil {
		t.cancel(nil)
	}
	return false
}

// remove takes queued prompts out: the one with id qid, or all ("").
func (t *turns) remove(qid string) []*job {
	t.mu.Lock()
	defer t.mu.Unlock()
	var kept, gone []*job
	for _, j := range t.pending {
		if qid == "" || j.id == qid {
			gone = append(gone, j)
		} else {
			kept = append(kept, j)
		}
	}
	t.pending = kept
	return gone
}

// drain starts the session's close: nothing is queued any more; the
// prompts waiting are returned (to be answered cancelled).
func (t *turns) drain() []*job {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closing = true
	queued := t.pending
	t.pending = nil
	return queued
}

// items is the queue as session/queue shows it.
func (t *turns) items() []protocol.QueueItem {
	t.mu.Lock()
	defer t.mu.Unlock()
	items := []protocol.QueueItem{}
	for _, j := range t.pending {
		it := protocol.QueueItem{ID: j.id, Text: firstLine(j.prompt), QueuedMs: j.queued.UnixMilli()}
		if j.client != nil {
			it.ClientID, it.ClientName = j.client.ID(), j.client.Name()
		}
		items = append(items, it)
	}
	return items
}

// queued reports whether a prompt waits.
func (t *turns) queued() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending) > 0
}

// steer sends text to the running turn: injected (with the turn's id),
// or not when none runs that takes steers ("" turn). expected, when
// set, must be the running turn.
func (t *turns) steer(x steer, expected string) (turn string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	running := t.id != "" && !t.steerClosed
	if expected != "" && (!running || t.id != expected) {
		cur := ""
		if running {
			cur = t.id
		}
		return "", &TurnMismatch{Expected: expected, Running: cur}
	}
	if !running {
		return "", nil
	}
	t.steers = append(t.steers, x)
	return t.id, nil
}

// takeSteers takes the steers waiting; final: the turn would end, and
// with none waiting it takes no more.
func (t *turns) takeSteers(final bool) []steer {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.steers
	t.steers = nil
	if final && len(st) == 0 {
		t.steerClosed = true
	}
	return st
}

// queueSteer moves the queued prompt qid into the running turn as a
// steer: its caller gets that turn's answer. "" turn: none runs that
// takes steers (the prompt stays queued).
func (t *turns) queueSteer(qid string) (turn string, moved *job, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := slices.IndexFunc(t.pending, func(j *job) bool { return j.id == qid })
	if at < 0 {
		return "", nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no queued prompt %s (session/queue lists them)", qid)}
	}
	if t.id == "" || t.steerClosed {
		return "", nil, nil
	}
	j := t.pending[at]
	t.pending = slices.Delete(t.pending, at, at+1)
	t.steers = append(t.steers, steer{text: j.prompt, images: j.images, client: j.client})
	t.waiters = append(t.waiters, j)
	return t.id, j, nil
}

// queuedID is the queue id of the prompt waiting under clientMessageId
// cmid ("": none waits).
func (t *turns) queuedID(cmid string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, j := range t.pending {
		if j.in != nil && j.in.cmid == cmid {
			return j.id
		}
	}
	return ""
}

// runningTurn is the running turn's id while it takes steers ("": none).
func (t *turns) runningTurn() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.steerClosed {
		return ""
	}
	return t.id
}

// turnClient is the client whose prompt the running turn answers.
func (t *turns) turnClient() *Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.client
}

// state says whether the slot is held, and what closes when it is let go.
func (t *turns) state() (running bool, done chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.running, t.done
}

// idle reports whether the slot is free.
func (t *turns) idle() bool {
	running, _ := t.state()
	return !running
}

// shutting reports whether the session closes.
func (t *turns) shutting() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

// close marks the session closing (nothing more is queued).
func (t *turns) close() {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
}

// touch records a use; used says when the last was.
func (t *turns) touch() {
	t.mu.Lock()
	t.lastUsed = time.Now()
	t.mu.Unlock()
}

func (t *turns) used() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastUsed
}

// ask opens an approval; answer takes it (false: unknown, or answered
// already: the first answer wins).
func (t *turns) ask(id string, a *approval) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.approvals == nil {
		t.approvals = map[string]*approval{}
	}
	t.approvals[id] = a
}

func (t *turns) answer(id string) (*approval, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.approvals[id]
	delete(t.approvals, id)
	return a, ok
}

// asking is an approval the running turn waits for ("": none), the
// first by id.
func (t *turns) asking() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := ""
	for id := range t.approvals {
		if first == "" || id < first {
			first = id
		}
	}
	return first
}

// noAsk says whether the running turn may ask no approval (a scheduled
// run with approve: rules).
func (t *turns) noAsk() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current != nil && t.current.noAsk
}

// approvalOptions are the answers open approval id takes (nil: none open).
func (t *turns) approvalOptions(id string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.approvals[id]; a != nil {
		return a.options
	}
	return nil
}
