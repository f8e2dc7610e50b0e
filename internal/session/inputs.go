package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Inputs and their fates. Every prompt and steer is an input with an id
// (in_<hex>) and, when its client named it, a clientMessageId seen once
// per session (for store.InputKeep): sent again, nothing runs again. Its
// fate is an input_update event and its row in the store: queued,
// started (the turn's claim, written with its user_message), then its
// end (written with its turn_complete, the prompt's result kept), or
// steered, cancelled, discarded. A refused input (not taken) keeps no
// row: sent again, it is tried again.

// input is one input this daemon took, while it may be asked about
// again from memory (until its end is committed; then the store has it).
type input struct {
	id, cmid, kind string
	// Guarded by the session's imu: the turn it started (or was steered
	// into), its steer's outcome, and its result once ended (ended is
	// closed then).
	turnID, outcome string
	res             *protocol.SessionPromptResult
	ended           chan struct{}
}

// Kinds of input.
const (
	kindPrompt = "prompt"
	kindSteer  = "steer"
)

// input is j's input, made when it has none (a sub-agent's prompt, the
// prompt a turn's unseen steers become).
func (j *job) input() *input {
	if j.in == nil {
		j.in = &input{id: protocol.NewID("in_", 8), kind: kindPrompt, ended: make(chan struct{})}
	}
	return j.in
}

// storedPrompt is what a prompt asked, as its input row keeps it.
type storedPrompt struct {
	Text      string                 `json:"text"`
	Images    []provider.Image       `json:"images,omitempty"`
	Resources []protocol.ResourceRef `json:"resources,omitempty"`
}

// seen is the answer to an input sent again: the first one's.
type seen struct {
	live   *input       // still queued or running here
	stored *store.Input // ended, or left by an earlier daemon
}

// take registers a new input of kind (prompt or steer) named cmid
// (""= unnamed: always new); an input already seen under cmid is
// returned instead (dup), and nothing is registered.
func (s *Session) take(ctx context.Context, kind, cmid string) (in *input, dup *seen, err error) {
	in = &input{id: protocol.NewID("in_", 8), cmid: cmid, kind: kind, ended: make(chan struct{})}
	if cmid == "" {
		return in, nil, nil
	}
	s.imu.Lock()
	defer s.imu.Unlock()
	if old := s.inputs[cmid]; old != nil {
		return nil, &seen{live: old}, nil
	}
	rec, err := s.m.store.InputByClientID(ctx, s.id, cmid)
	switch {
	case err == nil:
		return nil, &seen{stored: rec}, nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, nil, err
	}
	s.rememberLocked(in)
	return in, nil, nil
}

// rememberLocked keeps a named input in memory (s.imu held) until its
// end is in the store.
func (s *Session) rememberLocked(in *input) {
	if s.inputs == nil {
		s.inputs = map[string]*input{}
	}
	s.inputs[in.cmid] = in
}

// forget drops a named input that was not taken after all (refused,
// or a steer that found no turn): sent again, it is tried again.
func (s *Session) forget(in *input) {
	if in == nil || in.cmid == "" {
		return
	}
	s.imu.Lock()
	if s.inputs[in.cmid] == in {
		delete(s.inputs, in.cmid)
	}
	s.imu.Unlock()
}

// finish records in's result for whoever asks from memory, then forgets
// it there: its end is in the store (committed before finish is called).
func (s *Session) finish(in *input, res protocol.SessionPromptResult) {
	if in == nil {
		return
	}
	s.imu.Lock()
	in.res = &res
	if in.cmid != "" && s.inputs[in.cmid] == in {
		delete(s.inputs, in.cmid)
	}
	s.imu.Unlock()
	close(in.ended)
}

// inputUpdate emits in's input_update in state, of turnID (its
// envelope's turnId: the input's turn, "" before it has one, whatever
// turn runs now), writing rec (if not nil) in the same transaction.
func (s *Session) inputUpdate(in *input, state, turnID, reason string, rec *store.Input) int64 {
	return s.write(protocol.InputUpdateEvent{ClientMessageID: in.cmid, InputID: in.id, State: state, Reason: reason}, &turnID, rec)
}

// record is in's store row in state.
func (j *job) record(state, turnID string, attempts int, res *protocol.SessionPromptResult) store.Input {
	in := j.input()
	rec := store.Input{ID: in.id, ClientMessageID: in.cmid, Kind: in.kind, State: state, TurnID: turnID, Attempts: attempts}
	if state == protocol.InputQueued || state == protocol.InputStarted {
		// What it asked, kept to run it again (a later write keeps it).
		rec.Prompt = mustJSON(storedPrompt{Text: j.prompt, Images: j.images, Resources: j.resources})
	}
	if res != nil {
		rec.Result = mustJSON(res)
	}
	return rec
}

// neverRan answers a prompt that never ran (state cancelled or discarded):
// its row and event, then its caller.
func (s *Session) neverRan(j *job, state, reason string) {
	j.waitListed()
	res := protocol.SessionPromptResult{SessionID: s.id, StopReason: protocol.StopCancelled}
	res.InputID = j.input().id
	seq := s.inputUpdate(j.in, state, "", reason, ptr(j.record(state, "", 0, &res)))
	// In memory until the store has its end: sent again meanwhile, it
	// is found here, after that there.
	s.events.Await(context.Background(), seq)
	s.finish(j.in, res)
	j.done <- res
}

// refused says an input was not taken, and why (no row: it may be sent
// again).
func (s *Session) refused(in *input, err error) {
	s.forget(in)
	s.inputUpdate(in, protocol.InputRefused, "", err.Error(), nil)
}

func ptr[T any](v T) *T { return &v }

// promptAnswer is a prompt's answer when its clientMessageId was seen:
// its result once it ended, else {duplicate, turnId} (queued: no turn
// yet). Nothing runs.
func (sn *seen) promptAnswer(sid string, s *Session) protocol.SessionPromptResult {
	if in := sn.live; in != nil {
		s.imu.Lock()
		defer s.imu.Unlock()
		if in.res != nil {
			res := *in.res
			res.Duplicate = true
			return res
		}
		return protocol.SessionPromptResult{SessionID: sid, InputID: in.id, TurnID: in.turnID, Duplicate: true}
	}
	rec := sn.stored
	var res protocol.SessionPromptResult
	if len(rec.Result) > 0 && json.Unmarshal(rec.Result, &res) == nil {
		res.Duplicate = true
		return res
	}
	return protocol.SessionPromptResult{SessionID: sid, InputID: rec.ID, TurnID: rec.TurnID, Duplicate: true}
}

// steerAnswer is a steer's answer when its clientMessageId was seen:
// the first one's outcome, duplicate.
func (sn *seen) steerAnswer(s *Session) *protocol.SessionSteerResult {
	if in := sn.live; in != nil {
		s.imu.Lock()
		defer s.imu.Unlock()
		return &protocol.SessionSteerResult{Outcome: in.outcome, TurnID: in.turnID, InputID: in.id, Duplicate: true}
	}
	rec := sn.stored
	res := protocol.SessionSteerResult{TurnID: rec.TurnID, InputID: rec.ID}
	if rec.Kind == kindSteer && len(rec.Result) > 0 {
		json.Unmarshal(rec.Result, &res)
	}
	if res.Outcome == "" {
		// A steer that started a turn (or a prompt's id reused).
		res.Outcome = protocol.SteerStartedNewTurn
	}
	res.Duplicate = true
	return &res
}

// Await serves session/await: the result of the prompt cmid names, once
// its turn ended (at once when it has).
func (m *Manager) Await(ctx context.Context, c *Client, sid, cmid string) (*protocol.SessionPromptResult, error) {
	if cmid == "" {
		return nil, &protocol.ParamsError{Field: "clientMessageId", Reason: "is required"}
	}
	if err := protocol.CheckClientMessageID(cmid); err != nil {
		return nil, err
	}
	s, err := m.lookup(c, sid)
	if err != nil {
		return nil, err
	}
	s.imu.Lock()
	in := s.inputs[cmid]
	s.imu.Unlock()
	if in != nil {
		select {
		case <-in.ended:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.imu.Lock()
		res := *in.res
		s.imu.Unlock()
		return &res, nil
	}
	rec, err := m.store.InputByClientID(ctx, sid, cmid)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &protocol.ParamsError{Field: "clientMessageId", Reason: fmt.Sprintf("no prompt %q in session %s (within 24 h)", cmid, sid)}
	}
	if err != nil {
		return nil, err
	}
	var res protocol.SessionPromptResult
	if len(rec.Result) == 0 || json.Unmarshal(rec.Result, &res) != nil {
		return nil, &protocol.ParamsError{Field: "clientMessageId", Reason: fmt.Sprintf("%q is a %s, %s: it has no result to wait for", cmid, rec.Kind, rec.State)}
	}
	return &res, nil
}

// interruptInputs ends the inputs a dead daemon left open (queued, or
// started: their turn cut): each answered interrupted, so a caller that
// comes back with its clientMessageId learns what became of it.
func (s *Session) interruptInputs(ctx context.Context) {
	open, err := s.m.store.OpenInputs(ctx, s.id)
	if err != nil {
		return
	}
	for _, rec := range open {
		if rec.State == protocol.InputStarted {
			// Its turn's calls left open are answered first.
			started := s.closeCut(ctx, rec.TurnID, rec.Seq)
			s.mu.Lock()
			s.started = started
			s.mu.Unlock()
		}
		res := protocol.SessionPromptResult{SessionID: s.id, InputID: rec.ID, TurnID: rec.TurnID, StopReason: protocol.StopInterrupted,
			Error: &protocol.ErrorInfo{Message: "interrupted: the daemon stopped before this prompt's turn ended"}}
		rec.Result = mustJSON(res)
		state, reason := protocol.InputCancelled, "the daemon stopped before its turn ended"
		if rec.State == protocol.InputQueued {
			state, reason = protocol.InputDiscarded, "the daemon stopped before it ran"
			res.Error.Message = "discarded: the daemon stopped before this prompt ran"
			rec.Result = mustJSON(res)
		}
		s.write(protocol.InputUpdateEvent{ClientMessageID: rec.ClientMessageID, InputID: rec.ID, State: state,
			Reason: reason}, &rec.TurnID, &store.Input{ID: rec.ID, ClientMessageID: rec.ClientMessageID, Kind: rec.Kind, State: state,
			TurnID: rec.TurnID, Attempts: rec.Attempts, Result: rec.Result, CreatedMs: rec.CreatedMs})
	}
	if len(open) > 0 {
		// Their ends are stored before the session is: a session/await
		// right after this resume reads them.
		s.m.store.Sync()
	}
}

// queuedByClientID finds the queued prompt sent with clientMessageId
// cmid: its queue id, or (res) the answer when it was moved into a turn
// already (the move's outcome, duplicate). A prompt that started its own
// turn, or an unknown id, is an error.
func (s *Session) queuedByClientID(ctx context.Context, cmid string) (qid string, res *protocol.SessionSteerResult, err error) {
	if qid = s.t.QueuedID(cmid); qid != "" {
		return qid, nil, nil
	}
	s.imu.Lock()
	in := s.inputs[cmid]
	var turn, outcome, inID string
	if in != nil {
		turn, outcome, inID = in.turnID, in.outcome, in.id
	}
	s.imu.Unlock()
	if in == nil {
		rec, err := s.m.store.InputByClientID(ctx, s.id, cmid)
		if err != nil {
			return "", nil, &protocol.ParamsError{Field: "clientMessageId", Reason: fmt.Sprintf("no queued prompt was sent with clientMessageId %q", cmid)}
		}
		turn, inID = rec.TurnID, rec.ID
		if rec.State == protocol.InputSteered {
			outcome = protocol.SteerInjected
		}
	}
	if outcome == protocol.SteerInjected {
		return "", &protocol.SessionSteerResult{Outcome: outcome, TurnID: turn, InputID: inID, Duplicate: true}, nil
	}
	why := "it is not queued"
	if turn != "" {
		why = "it started its own turn " + turn
	}
	return "", nil, &protocol.ParamsError{Field: "clientMessageId", Reason: fmt.Sprintf("the prompt sent with clientMessageId %q cannot be moved into the running turn: %s", cmid, why)}
}
