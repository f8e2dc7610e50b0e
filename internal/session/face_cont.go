package session

import (
	"context"
	"encoding/json"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// What a daemon's start needs to go on with the inputs a dead daemon
// left open (internal/continuation decides which, in which order, and
// with which parent): each session's open inputs as Pending prompts,
// queued again by Reopen.

// Cut is a turn a dead daemon cut, to go on with another attempt.
type Cut struct {
	TurnID string
	// Attempt is this run's attempt (2 for the first continuation).
	Attempt int
	// Since is the seq the cut attempt began at (its user_message or
	// turn_resumed).
	Since int64
	// Partial is the reply the model was streaming when it was cut
	// (not in the transcript: it is kept as what the model had said).
	Partial string
	// Calls are the cut attempt's tool calls that had started and not
	// ended (by id: their tool's name).
	Calls map[string]string
	// Started are all the cut attempt's tool calls that had started,
	// ended or not (by id; nil: not known). A call of the cut reply not
	// among them never ran: its result says so, not "interrupted".
	Started map[string]bool
	// Asked are the tool calls that waited for an approval no one had
	// given (by id): the transcript's repair leaves them open, to be
	// asked again.
	Asked map[string]bool
}

// Open is an input a dead daemon left open: its turn was cut (Cut set:
// TurnID, Attempt and Since; the rest is for the caller to fill in
// before Reopen) or it waited in the queue.
type Open struct {
	*Pending
	Cut *Cut
}

// OpenInputs are the session's open inputs, its cut turn first, then
// what was queued, in order. Nothing is queued until Reopen.
func (s *Session) OpenInputs(ctx context.Context) ([]Open, error) {
	recs, err := s.m.store.OpenInputs(ctx, s.id)
	if err != nil {
		return nil, err
	}
	var out []Open
	for _, rec := range recs {
		var sp storedPrompt
		json.Unmarshal(rec.Prompt, &sp)
		in := &input{id: rec.ID, cmid: rec.ClientMessageID, kind: rec.Kind, turnID: rec.TurnID, ended: make(chan struct{})}
		j := &job{prompt: sp.Text, images: sp.Images, resources: sp.Resources,
			done: make(chan protocol.SessionPromptResult, 1), in: in}
		o := Open{Pending: &Pending{Done: j.done, s: s, j: j}}
		if rec.State == protocol.InputStarted {
			j.cont = &Cut{TurnID: rec.TurnID, Attempt: rec.Attempts + 1, Since: rec.Seq}
			o.Cut = j.cont
			out = append([]Open{o}, out...)
		} else {
			out = append(out, o)
		}
	}
	return out, nil
}

// Reopen queues the session's open inputs again, in order (a cut
// turn's Asked are left open by its transcript's repair, which runs
// when its turn starts). One that cannot be queued is ended discarded.
func (s *Session) Reopen(opens []Open) {
	for _, o := range opens {
		if o.Cut != nil {
			s.mu.Lock()
			s.asked, s.started = o.Cut.Asked, o.Cut.Started
			s.mu.Unlock()
		}
	}
	for _, o := range opens {
		j := o.j
		if j.in.cmid != "" {
			// Sent again meanwhile, it is this one.
			s.imu.Lock()
			s.rememberLocked(j.in)
			s.imu.Unlock()
		}
		if err := s.enqueue(j); err != nil {
			s.m.log.Warn("an interrupted input could not be queued again", "sessionId", s.id, "inputId", j.in.id, "err", err)
			s.neverRan(j, protocol.InputDiscarded, err.Error())
		}
	}
	if len(opens) > 0 {
		s.m.log.Info("interrupted inputs go on", "sessionId", s.id, "inputs", len(opens))
	}
}

// Continuing tells the participants that child's cut turn (p answers
// when it ends) goes on with its parent's, whose cut turn waits for it
// unless background.
func (m *Manager) Continuing(parent, child *Session, p *Pending, background bool) {
	m.each(func(part Participant) { part.Continuing(parent, child, p, background) })
}
