package session

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/hook"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// The prompt queue and the turns: one turn at a time, the others wait
// in order; a turn runs the agent with the session as its host.

// enqueue queues a prompt (or runs it at once when the session is
// idle); it fails when the queue is full or the session is closing.
func (s *Session) enqueue(j *job) error {
	j.input()
	// Its queued row is read now, before another goroutine can take
	// it from the queue (and change it as its turn prepares); what
	// takes it waits until it is said queued (listed), so no client sees
	// it started, cancelled or steered before it was queued.
	rec := j.record(protocol.InputQueued, "", 0, nil)
	j.listed = make(chan struct{})
	// Its place in the queue and its queued row are taken together
	// (qmu): the store numbers rows in the order they are written, and
	// that order is the one a later daemon runs them in.
	s.qmu.Lock()
	start, err := s.t.Enqueue(j, s.m.conf().Config().Daemon.PromptQueue)
	if err != nil {
		s.qmu.Unlock()
		return slotErr(err)
	}
	if start {
		s.qmu.Unlock()
		close(j.listed)
		go s.run(j)
		return nil
	}
	s.inputUpdate(j.in, protocol.InputQueued, "", "", &rec)
	s.qmu.Unlock()
	close(j.listed)
	s.queueChanged()
	return nil
}

// waitListed waits until j was said queued (enqueue), if it was to be.
func (j *job) waitListed() {
	if j.listed != nil {
		<-j.listed
	}
}

// queueChanged tells every attached client the queue as it is now (a
// queue_update, stored like every event).
func (s *Session) queueChanged() {
	s.qmu.Lock() // one update at a time, each the queue as it stands then
	defer s.qmu.Unlock()
	s.emit(protocol.QueueUpdateEvent{Items: s.t.Items()})
}

// run runs j and then every queued prompt, one turn at a time.
func (s *Session) run(j *job) {
	for j != nil {
		res := s.turn(j)
		kind := j.input().kind
		s.m.each(func(p Participant) { p.TurnEnded(s, kind, res) })
		// The session is idle before the prompting client hears the
		// turn ended: a session/new that follows the answer finds it
		// idle (to evict, say), never still running.
		next, waiters, dropped := s.t.Release()
		for _, p := range dropped {
			s.neverRan(p, protocol.InputDiscarded, "the session closed")
		}
		if next != nil {
			s.queueChanged()
		}
		s.finish(j.in, res)
		j.done <- res // buffered
		for _, w := range waiters {
			wres := res
			wres.InputID = w.input().id
			s.finish(w.in, wres)
			w.done <- wres // buffered
		}
		j = next
	}
	// The list shows a live session's state from memory: idle only now.
	s.m.list.Changed(s.id)
	// What participants start when nothing else waits (a goal's turn).
	s.m.each(func(p Participant) { p.Idle(s) })
}

// borrow takes the turn slot for work between turns (a compaction, a
// rewind; see turnslot's Borrow); release hands it to the prompt
// queued meanwhile, if any.
func (s *Session) borrow(ctx context.Context, wait bool, busy error) (release func(), err error) {
	if err := s.t.Borrow(ctx, wait, busy); err != nil {
		return nil, slotErr(err)
	}
	return func() {
		next, _, dropped := s.t.Release()
		for _, p := range dropped {
			s.neverRan(p, protocol.InputDiscarded, "the session closed")
		}
		if next != nil {
			s.queueChanged()
			go s.run(next)
		}
	}, nil
}

// turn runs one prompt. The prompting client is answered only after the
// turn's turn_complete is committed and queued on its connection, ahead
// of the answer: the same road, so the order holds.
func (s *Session) turn(j *job) protocol.SessionPromptResult {
	j.waitListed()
	ctx, cancel := context.WithCancelCause(s.m.ctx)
	defer cancel(nil)
	res := protocol.SessionPromptResult{SessionID: s.id, Usage: &protocol.Usage{}}
	if err := s.mend(); err != nil {
		// Still not writable (the disk is still full): nothing can run.
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
		return res
	}
	if err := s.LoadTranscript(ctx); err != nil {
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
		return res
	}
	turnID := protocol.NewID("turn_", 8)
	if j.cont != nil {
		turnID = j.cont.TurnID // a turn a daemon's end cut goes on
	}
	in := j.input()
	res.TurnID, res.InputID = turnID, in.id
	s.imu.Lock()
	in.turnID = turnID
	s.imu.Unlock()
	s.t.Begin(j, turnID, cancel) // one given up before it ran ends at once, cancelled
	s.mu.Lock()
	fresh := len(s.history.Messages) == 0
	s.mu.Unlock()
	// What the prompt names is read now, in the turn (cancelled with it).
	var perr error
	if j.cont == nil {
		perr = s.prepare(ctx, j)
	}
	s.m.store.SetState(s.id, store.StateRunning, s.m.list.ChangedAfter(s.id, s.written))
	if fresh && j.cont == nil {
		s.m.store.AutoTitle(s.id, title(j.prompt), s.m.list.ChangedAfter(s.id, s.written))
	}

	s.events.InTurn(turnID)
	defer s.events.InTurn("")
	attempt := 1
	var out agent.Outcome
	if j.cont != nil {
		attempt = j.cont.Attempt
		s.resumed.Store(int32(attempt - 1))
		defer s.resumed.Store(0)
		out = s.continueTurn(ctx, j, turnID)
	} else if seq := s.startTurn(j, turnID); perr != nil {
		out = agent.Outcome{StopReason: agent.StopError, Err: perr}
		if ctx.Err() != nil {
			out = agent.Outcome{StopReason: agent.StopCancelled}
		}
	} else if v := s.hook(ctx, HookMoment{Event: hook.UserPromptSubmit, Prompt: j.prompt}); v.Block {
		// Refused by a hook: the model is not called.
		out = agent.Outcome{StopReason: protocol.StopBlocked, Notice: "a UserPromptSubmit hook refused the prompt: " + v.Reason}
	} else {
		ended := s.running(j.prompt, seq)
		out = s.turnAgent().Run(ctx, s, s.cwd, j.prompt, j.images...)
		ended()
	}

	res.StopReason, res.Content, res.Notice = out.StopReason, out.Content, out.Notice
	res.Usage = &protocol.Usage{InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens,
		CacheReadTokens: out.Usage.CacheReadTokens, CacheWriteTokens: out.Usage.CacheWriteTokens}
	if out.Usage.Priced {
		c := out.Usage.CostUSD
		res.Usage.CostUSD = &c
	}
	if err := s.events.Failure(); err != nil {
		// A write failed: the turn ends with that cause, whatever the
		// agent made of its cancelled context.
		out.StopReason, out.Err = agent.StopError, err
		res.StopReason, res.Notice, out.Notice = agent.StopError, "", ""
	}
	metrics.Turn(res.StopReason)
	outcome := protocol.OutcomeCompleted
	switch out.StopReason {
	case agent.StopCancelled:
		outcome = protocol.OutcomeCancelled
	case agent.StopError:
		outcome = protocol.OutcomeFailed
		res.Error = &protocol.ErrorInfo{Message: out.Err.Error()}
	}
	s.t.End(steered)
	// After a failed write, write what comes next (turn_complete, the
	// idle state) if the store takes writes again.
	if err := s.mend(); err != nil {
		return res
	}
	state := protocol.InputCompleted
	if outcome == protocol.OutcomeCancelled {
		state = protocol.InputCancelled
	}
	s.inputUpdate(in, state, turnID, "", nil)
	last := s.write(protocol.TurnCompleteEvent{Outcome: outcome, StopReason: out.StopReason, Content: out.Content, Error: res.Error, Notice: out.Notice},
		nil, ptr(j.record(state, turnID, attempt, &res)))
	s.m.store.SetState(s.id, store.StateIdle, s.m.list.ChangedAfter(s.id, s.written))
	if err := s.events.Await(context.Background(), last); err != nil && res.Error == nil {
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
	}
	return res
}

// mdLink is a Markdown link or image; title keeps its text.
var mdLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`) })

// cancelTurn cancels the running turn, if any.
func (s *Session) cancelTurn() bool { return s.t.CancelTurn(nil) }

// Compact leaves all but the last turn out of the model's view
// (session/compact), between turns.
func (s *Session) Compact(ctx context.Context) (int, error) {
	if err := s.LoadTranscript(ctx); err != nil {
		return 0, err
	}
	// After the running turn (and those queued behind it).
	release, err := s.borrow(ctx, true, nil)
	if err != nil {
		return 0, err
	}
	defer release()
	s.mu.Lock()
	h := s.history
	s.mu.Unlock()
	after := s.turnAgent().Compact(ctx, s, h)
	return after.Cut - h.Cut, nil
}

// Queue lists a session's queued prompts (session/queue).
func (m *Manager) Queue(c *Client, id string) (*protocol.SessionQueueResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	return &protocol.SessionQueueResult{SessionID: id, Items: s.t.Items()}, nil
}

// QueueRemove removes queued prompts: the one qid names, or all ("");
// each one's caller is answered cancelled.
func (m *Manager) QueueRemove(c *Client, id, qid string) (*protocol.SessionQueueResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	gone := s.t.Remove(qid)
	if qid != "" && len(gone) == 0 {
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no queued prompt %s (session/queue lists them)", qid)}
	}
	for _, j := range gone {
		s.neverRan(j, protocol.InputCancelled, "removed from the queue")
	}
	if len(gone) > 0 {
		s.queueChanged()
	}
	return &protocol.SessionQueueResult{SessionID: id, Items: s.t.Items(), Removed: len(gone)}, nil
}

// QueueSteer moves a queued prompt into the running turn as a steer
// (session/queue/steer); its caller gets the running turn's answer. The
// prompt is named by its queue id (qid) or by the clientMessageId it was
// sent with (cmid): named so, a prompt already moved is answered with
// that move's outcome (duplicate), so a retry moves nothing twice.
func (m *Manager) QueueSteer(ctx context.Context, c *Client, id, qid, cmid string) (*protocol.SessionSteerResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	if cmid != "" {
		var res *protocol.SessionSteerResult
		qid, res, err = s.queuedByClientID(ctx, cmid)
		if res != nil || err != nil {
			return res, err
		}
	}
	turn, j, err := s.t.QueueSteer(qid)
	if err != nil {
		return nil, err
	}
	if turn == "" {
		return &protocol.SessionSteerResult{Outcome: protocol.SteerPromptRequired}, nil
	}
	j.waitListed()
	in := j.input()
	s.imu.Lock()
	in.turnID, in.outcome = turn, protocol.SteerInjected
	s.imu.Unlock()
	s.inputUpdate(in, protocol.InputSteered, turn, "", ptr(j.record(protocol.InputSteered, turn, 0, nil)))
	s.queueChanged()
	return &protocol.SessionSteerResult{Outcome: protocol.SteerInjected, TurnID: turn}, nil
}
