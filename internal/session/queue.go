package session

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/hook"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// The prompt queue and the turns: one turn at a time, the others wait
// in order; a turn runs the agent with the session as its host.

// enqueue queues a prompt; it fails when the queue is full or the session
// is closing.
func (s *Session) enqueue(j *job) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrNotFound
	}
	s.lastUsed = time.Now()
	if !s.running {
		s.running = true
		s.turnDone = make(chan struct{})
		s.mu.Unlock()
		go s.run(j)
		return nil
	}
	if len(s.pending) >= s.m.conf().cfg.Daemon.PromptQueue {
		n := len(s.pending)
		s.mu.Unlock()
		return fmt.Errorf("%w: %d prompts already queued", ErrBusy, n)
	}
	j.id, j.queued = protocol.NewID("q_", 6), time.Now()
	s.pending = append(s.pending, j)
	s.mu.Unlock()
	s.queueChanged()
	return nil
}

// queueItems is the queue as session/queue shows it; s.mu held.
func (s *Session) queueItems() []protocol.QueueItem {
	items := []protocol.QueueItem{}
	for _, j := range s.pending {
		it := protocol.QueueItem{ID: j.id, Text: firstLine(j.prompt), QueuedMs: j.queued.UnixMilli()}
		if j.client != nil {
			it.ClientID, it.ClientName = j.client.ID(), j.client.Name()
		}
		items = append(items, it)
	}
	return items
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// queueChanged tells every attached client the queue as it is now (a
// queue_update, stored like every event).
func (s *Session) queueChanged() {
	s.qmu.Lock() // one update at a time, each the queue as it stands then
	defer s.qmu.Unlock()
	s.mu.Lock()
	items := s.queueItems()
	s.mu.Unlock()
	s.emit(protocol.QueueUpdateEvent{Items: items})
}

// run runs j and then every queued prompt, one turn at a time.
func (s *Session) run(j *job) {
	for j != nil {
		res := s.turn(j)
		// The session is idle before the prompting client hears the
		// turn ended: a session/new that follows the answer finds it
		// idle (to evict, say), never still running.
		s.mu.Lock()
		close(s.turnDone)
		waiters := s.waiters
		s.waiters = nil
		var next *job
		if len(s.pending) == 0 || s.closing {
			for _, p := range s.pending {
				p.done <- protocol.SessionPromptResult{SessionID: s.id, StopReason: agent.StopCancelled}
			}
			s.pending = nil
			s.running = false
			s.lastUsed = time.Now()
		} else {
			next = s.pending[0]
			s.pending = s.pending[1:]
			s.turnDone = make(chan struct{})
		}
		s.mu.Unlock()
		if next != nil {
			s.queueChanged()
		}
		j.done <- res // buffered
		for _, w := range waiters {
			w <- res // buffered
		}
		j = next
	}
	// The list shows a live session's state from memory: idle only now.
	s.m.changed(s.id)
}

// turn runs one prompt. The prompting client is answered only after the
// turn's turn_complete is committed and queued on its connection, ahead
// of the answer: the same road, so the order holds.
func (s *Session) turn(j *job) protocol.SessionPromptResult {
	ctx, cancel := context.WithCancelCause(s.m.ctx)
	defer cancel(nil)
	res := protocol.SessionPromptResult{SessionID: s.id, Usage: &protocol.Usage{}}
	if err := s.mend(); err != nil {
		// Still not writable (the disk is still full): nothing can run.
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
		return res
	}
	if err := s.load(ctx); err != nil {
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
		return res
	}
	turnID := protocol.NewID("turn_", 8)
	res.TurnID = turnID
	s.mu.Lock()
	s.cancel, s.turnClient, s.current = cancel, j.client, j
	s.turnID, s.steers, s.steerClosed = turnID, nil, false
	fresh := len(s.history.Messages) == 0
	if j.withdrawn {
		cancel(nil) // given up before it ran: it ends at once, cancelled
	}
	s.mu.Unlock()
	// What the prompt names is read now, in the turn (cancelled with it).
	perr := s.prepare(ctx, j)
	s.m.store.SetState(s.id, store.StateRunning, s.m.changedAfter(s.id, s.written))
	if fresh {
		s.m.store.AutoTitle(s.id, title(j.prompt), s.m.changedAfter(s.id, s.written))
	}

	s.inTurn(turnID)
	defer s.inTurn("")
	seq := s.emit(userMessage(j.prompt, j.client, false))
	var out agent.Outcome
	if perr != nil {
		out = agent.Outcome{StopReason: agent.StopError, Err: perr}
		if ctx.Err() != nil {
			out = agent.Outcome{StopReason: agent.StopCancelled}
		}
	} else if v := s.runHooks(ctx, hook.UserPromptSubmit, hook.Input{Prompt: j.prompt}); v.Block {
		// Refused by a hook: the model is not called.
		out = agent.Outcome{StopReason: protocol.StopBlocked, Notice: "a UserPromptSubmit hook refused the prompt: " + v.Reason}
	} else {
		cp := s.beginCheckpoint(j.prompt, seq)
		out = s.turnAgent().Run(ctx, s, s.cwd, j.prompt, j.images...)
		s.endCheckpoint(cp)
	}

	res.StopReason, res.Content, res.Notice = out.StopReason, out.Content, out.Notice
	res.Usage = &protocol.Usage{InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens,
		CacheReadTokens: out.Usage.CacheReadTokens, CacheWriteTokens: out.Usage.CacheWriteTokens}
	if out.Usage.Priced {
		c := out.Usage.CostUSD
		res.Usage.CostUSD = &c
	}
	if err := s.failure(); err != nil {
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
	s.mu.Lock()
	s.cancel, s.turnClient, s.current = nil, nil, nil
	// Steers the turn took but never showed the model (it failed or was
	// cancelled first) are not lost: they are the next turn.
	left := s.steers
	s.turnID, s.steers, s.steerClosed = "", nil, true
	if len(left) > 0 && !s.closing {
		next := &job{id: protocol.NewID("q_", 6), queued: time.Now(), client: left[0].client, done: make(chan protocol.SessionPromptResult, 1)}
		var texts []string
		for _, x := range left {
			texts = append(texts, x.text)
			next.images = append(next.images, x.images...)
		}
		next.prompt = strings.Join(texts, "\n\n")
		s.pending = append([]*job{next}, s.pending...)
	}
	s.mu.Unlock()
	// After a failed write, write what comes next (turn_complete, the
	// idle state) if the store takes writes again.
	if err := s.mend(); err != nil {
		return res
	}
	last := s.emit(protocol.TurnCompleteEvent{Outcome: outcome, StopReason: out.StopReason, Content: out.Content, Error: res.Error, Notice: out.Notice})
	s.m.store.SetState(s.id, store.StateIdle, s.m.changedAfter(s.id, s.written))
	if err := s.committed(context.Background(), last); err != nil && res.Error == nil {
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
	}
	return res
}

// mdLink is a Markdown link or image; title keeps its text.
var mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// cancelTurn cancels the running turn, if any.
func (s *Session) cancelTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	s.cancel(nil)
	return true
}

// Compact leaves all but the last turn out of the model's view
// (session/compact), between turns.
func (s *Session) Compact(ctx context.Context) (int, error) {
	if err := s.load(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	for s.running { // after the running turn (and those queued behind it)
		done := s.turnDone
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		s.mu.Lock()
	}
	if s.closing {
		s.mu.Unlock()
		return 0, ErrNotFound
	}
	s.running = true // no turn starts meanwhile; others wait on done
	done := make(chan struct{})
	s.turnDone = done
	h := s.history
	s.mu.Unlock()
	defer func() {
		// A prompt that came meanwhile was queued: run it now.
		s.mu.Lock()
		close(done)
		if len(s.pending) > 0 && !s.closing {
			j := s.pending[0]
			s.pending = s.pending[1:]
			s.turnDone = make(chan struct{})
			go s.run(j)
		} else {
			s.running = false
		}
		s.mu.Unlock()
	}()
	after := s.turnAgent().Compact(ctx, s, h)
	return after.Cut - h.Cut, nil
}

// Queue lists a session's queued prompts (session/queue).
func (m *Manager) Queue(c *Client, id string) (*protocol.SessionQueueResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &protocol.SessionQueueResult{SessionID: id, Items: s.queueItems()}, nil
}

// QueueRemove removes queued prompts: the one qid names, or all ("");
// each one's caller is answered cancelled.
func (m *Manager) QueueRemove(c *Client, id, qid string) (*protocol.SessionQueueResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var kept, gone []*job
	for _, j := range s.pending {
		if qid == "" || j.id == qid {
			gone = append(gone, j)
		} else {
			kept = append(kept, j)
		}
	}
	s.pending = kept
	s.mu.Unlock()
	if qid != "" && len(gone) == 0 {
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no queued prompt %s (session/queue lists them)", qid)}
	}
	for _, j := range gone {
		j.done <- protocol.SessionPromptResult{SessionID: id, StopReason: agent.StopCancelled}
	}
	if len(gone) > 0 {
		s.queueChanged()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &protocol.SessionQueueResult{SessionID: id, Items: s.queueItems(), Removed: len(gone)}, nil
}

// QueueSteer moves a queued prompt into the running turn as a steer
// (session/queue/steer); its caller gets the running turn's answer.
func (m *Manager) QueueSteer(c *Client, id, qid string) (*protocol.SessionSteerResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	at := -1
	for i, j := range s.pending {
		if j.id == qid {
			at = i
		}
	}
	if at < 0 {
		s.mu.Unlock()
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no queued prompt %s (session/queue lists them)", qid)}
	}
	if s.turnID == "" || s.steerClosed {
		s.mu.Unlock()
		return &protocol.SessionSteerResult{Outcome: protocol.SteerPromptRequired}, nil
	}
	j := s.pending[at]
	s.pending = append(s.pending[:at:at], s.pending[at+1:]...)
	s.steers = append(s.steers, steer{text: j.prompt, images: j.images, client: j.client})
	s.waiters = append(s.waiters, j.done)
	turn := s.turnID
	s.mu.Unlock()
	s.queueChanged()
	return &protocol.SessionSteerResult{Outcome: protocol.SteerInjected, TurnID: turn}, nil
}
