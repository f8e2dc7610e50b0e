package session

import (
	"context"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/clientcalls"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The session as the agent's Host: where a turn's events, transcript
// and requests to the prompting client go.

// Emit implements agent.Host: the agent's events are the wire's; the
// session adds what it alone knows (the cost so far).
func (s *Session) Emit(e protocol.EventBody) {
	if u, ok := e.(protocol.ContextUsageEvent); ok {
		u.SessionCostUSD = s.spentCost()
		e = u
	}
	s.emit(e)
	for _, p := range s.m.participants() {
		p.Emitted(s, e)
	}
}

// Record implements agent.Host: the transcript grows in place (appended
// to, never copied: only the turn's goroutine writes it) and the model is
// sent it as it is.
func (s *Session) Record(m provider.Message) provider.Transcript {
	s.keepImages(&m)
	var h provider.Transcript
	s.events.InOrder(func(writable bool) {
		s.mu.Lock()
		s.history.Append(m)
		h = s.history
		s.mu.Unlock()
		if writable { // else mend brings it back to the stored one
			s.m.store.AppendMessage(s.id, int64(len(h.Messages)-1), mustJSON(m), s.written)
		}
	})
	return h
}

// keepImages stores the images a tool gave (their bytes) as files, as
// attachments are: the transcript keeps their paths. One that cannot be
// kept is left out, and the text says so.
func (s *Session) keepImages(m *provider.Message) {
	var kept []provider.Image
	for _, im := range m.Images {
		if im.Path != "" || im.Data == nil {
			kept = append(kept, im)
			continue
		}
		if s.m.uploads == nil {
			m.Text += fmt.Sprintf("\n[an image (%s) was left out: no place to keep it]", im.MimeType)
			continue
		}
		f, err := s.m.uploads.Put(im.Data, im.MimeType)
		if err != nil {
			m.Text += fmt.Sprintf("\n[an image (%s) was left out: %v]", im.MimeType, err)
			continue
		}
		kept = append(kept, provider.Image{MimeType: f.MimeType, Path: f.Path})
	}
	m.Images = kept
}

// Trimmed implements agent.Host: the model's view of the transcript
// starts later from now on; the transcript (and the store) keep all.
func (s *Session) Trimmed(t provider.Transcript, dropped int, reason string) {
	s.mu.Lock()
	if t.Cut <= len(s.history.Messages) {
		s.history.Cut, s.history.CutTokens, s.history.Summary = t.Cut, t.CutTokens, t.Summary
	}
	s.mu.Unlock()
	s.m.log.Info("model view trimmed", "sessionId", s.id, "dropped", dropped, "reason", reason)
}

// Elicitor, ClientFS and ClientTerminal implement agent.Host: a turn's
// questions, file reads and writes and commands go to the client that
// sent its prompt, when it said it would answer them
// (internal/clientcalls).

func (s *Session) Elicitor() func(context.Context, tool.Elicitation) (tool.Answer, error) {
	c := s.t.TurnClient()
	if c == nil || !c.elicits() {
		return nil
	}
	return s.to(c).Elicitor(c.elicitsURL())
}

func (s *Session) ClientFS() *tool.ClientFS {
	c := s.t.TurnClient()
	if c == nil {
		return nil
	}
	return s.to(c).FS(c.fs())
}

func (s *Session) ClientTerminal() func(context.Context, tool.TerminalRun) (tool.TerminalOutcome, error) {
	c := s.t.TurnClient()
	if c == nil || !c.runs() {
		return nil
	}
	return s.to(c).Terminal()
}

// to is what the turn asks of client c.
func (s *Session) to(c *Client) clientcalls.To {
	return clientcalls.To{Conn: c.conn, SessionID: s.id, CaughtUp: s.events.CaughtUp}
}
