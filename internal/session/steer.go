package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// Steering (session/steer): text for the running turn joins the model's
// view at its next model call; a turn that would end takes the steers
// waiting first, and only when there are none does it stop taking them,
// under the same lock a steer is taken under: each steer is injected or
// answered promptRequired, exactly once.

// Steers implements agent.Host: the steers waiting, each said in the
// history as a user_message with steered: true where it joins. final:
// the turn would end: with none waiting, it takes no more.
func (s *Session) Steers(final bool) []provider.Message {
	st := s.t.TakeSteers(final)
	var out []provider.Message
	for _, x := range st {
		s.emit(userMessage(x.Text, x.Client, true))
		out = append(out, provider.Message{Role: provider.RoleUser, Text: x.Text, Images: x.Images})
	}
	return out
}

// userMessage is a prompt's user_message, naming the client that sent
// it.
func userMessage(text string, c *Client, steered bool) protocol.UserMessageEvent {
	ev := protocol.UserMessageEvent{Text: text, Steered: steered}
	if c != nil {
		ev.ClientID, ev.ClientName = c.ID(), c.Name()
	}
	return ev
}

// Steer serves session/steer: p.Prompt is the text with its
// attachments' markers, images the images among them.
func (m *Manager) Steer(ctx context.Context, c *Client, p protocol.SessionSteerParams, images ...Image) (*protocol.SessionSteerResult, error) {
	if p.Prompt == nil || strings.TrimSpace(*p.Prompt) == "" {
		return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
	}
	switch p.IdleBehavior {
	case "", "promptRequired", "start":
	default:
		return nil, &protocol.ParamsError{Field: "idleBehavior", Reason: fmt.Sprintf("%q: promptRequired or start", p.IdleBehavior)}
	}
	if err := protocol.CheckClientMessageID(p.ClientMessageID); err != nil {
		return nil, err
	}
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	in, dup, err := s.take(ctx, kindSteer, p.ClientMessageID)
	if err != nil {
		return nil, err
	}
	if dup != nil {
		return dup.steerAnswer(s), nil // seen before: not steered twice
	}
	pi := providerImages(images)
	j := &job{prompt: *p.Prompt, images: pi, client: c, done: make(chan protocol.SessionPromptResult, 1), in: in}
	turn, err := s.t.Steer(steer{Text: *p.Prompt, Images: pi, Client: c}, p.ExpectedTurnID)
	if err != nil {
		s.forget(in)
		return nil, err
	}
	if turn != "" {
		res := &protocol.SessionSteerResult{Outcome: protocol.SteerInjected, TurnID: turn, InputID: in.id}
		s.imu.Lock()
		in.turnID, in.outcome = turn, res.Outcome
		s.imu.Unlock()
		rec := j.record(protocol.InputSteered, turn, 0, nil)
		rec.Result = mustJSON(res)
		seq := s.inputUpdate(in, protocol.InputSteered, turn, "", &rec)
		// Remembered until the store has it: a steer sent again
		// meanwhile finds it here, after that there.
		s.events.Await(ctx, seq)
		s.forget(in)
		return res, nil
	}
	if p.IdleBehavior != "start" {
		s.forget(in) // not taken: sent again, it is tried again
		return &protocol.SessionSteerResult{Outcome: protocol.SteerPromptRequired}, nil
	}
	s.imu.Lock()
	in.outcome = protocol.SteerStartedNewTurn
	s.imu.Unlock()
	if err := s.enqueue(j); err != nil {
		s.refused(in, err)
		return nil, err
	}
	return &protocol.SessionSteerResult{Outcome: protocol.SteerStartedNewTurn, InputID: in.id}, nil
}

// runningTurn is the turn running now ("": none).
func (s *Session) runningTurn() string { return s.t.RunningTurn() }

// attached lists the clients attached, in clientId order.
func (s *Session) attached() []protocol.AttachedClient {
	cs := s.clients()
	out := make([]protocol.AttachedClient, 0, len(cs))
	for _, c := range cs {
		out = append(out, protocol.AttachedClient{ClientID: c.ID(), ClientName: c.Name()})
	}
	slices.SortFunc(out, func(a, b protocol.AttachedClient) int { return strings.Compare(a.ClientID, b.ClientID) })
	return out
}
