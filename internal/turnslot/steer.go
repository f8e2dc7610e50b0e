package turnslot

import (
	"fmt"
	"slices"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Steering: text for the running turn joins the model's view at its
// next model call; a turn that would end takes the steers waiting
// first, and only when there are none does it stop taking them, under
// the lock a steer is taken under: each steer is taken or refused,
// exactly once.

// TurnMismatch is a steer for a turn that is not the one running.
type TurnMismatch struct{ Expected, Running string }

func (e *TurnMismatch) Error() string {
	if e.Running == "" {
		return fmt.Sprintf("turn %s is not running (no turn is)", e.Expected)
	}
	return fmt.Sprintf("turn %s is not running; turn %s is", e.Expected, e.Running)
}

// Is makes a mismatch a busy session's error.
func (e *TurnMismatch) Is(target error) bool { return target == ErrBusy }

// Steer sends x to the running turn: taken (the turn's id returned),
// or not when none runs that takes steers ("" turn). expected, when
// set, must be the running turn (else a TurnMismatch).
func (t *Slot[J, C]) Steer(x Steer[C], expected string) (turn string, err error) {
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

// TakeSteers takes the steers waiting; final: the turn would end, and
// with none waiting it takes no more.
func (t *Slot[J, C]) TakeSteers(final bool) []Steer[C] {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.steers
	t.steers = nil
	if final && len(st) == 0 {
		t.steerClosed = true
	}
	return st
}

// QueueSteer moves the queued prompt qid into the running turn as a
// steer: its caller gets that turn's answer (Release returns it among
// the waiters). "" turn: none runs that takes steers (the prompt stays
// queued).
func (t *Slot[J, C]) QueueSteer(qid string) (turn string, moved J, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := slices.IndexFunc(t.pending, func(j J) bool { return j.Ticket().id == qid })
	if at < 0 {
		return "", moved, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no queued prompt %s (session/queue lists them)", qid)}
	}
	if t.id == "" || t.steerClosed {
		return "", moved, nil
	}
	j := t.pending[at]
	t.pending = slices.Delete(t.pending, at, at+1)
	t.steers = append(t.steers, j.AsSteer())
	t.waiters = append(t.waiters, j)
	return t.id, j, nil
}

// RunningTurn is the running turn's id while it takes steers ("":
// none).
func (t *Slot[J, C]) RunningTurn() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.steerClosed {
		return ""
	}
	return t.id
}
