package session

import (
	"context"
	"fmt"
	"time"

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

// Elicitor implements agent.Host: questions go to the client that sent
// the prompt, if it advertised elicitation.
func (s *Session) Elicitor() func(context.Context, tool.Elicitation) (tool.Answer, error) {
	c := s.t.TurnClient()
	if c == nil || !c.elicits() {
		return nil
	}
	return func(ctx context.Context, e tool.Elicitation) (tool.Answer, error) {
		// The question must not overtake the events before it (its
		// tool_call above all): once they are committed they are queued
		// on the connection, and the question is queued behind them.
		if err := s.caughtUp(ctx); err != nil {
			return tool.Answer{}, err
		}
		p := protocol.ElicitationParams{SessionID: s.id, Mode: "form", Message: e.Message, RequestedSchema: e.Schema}
		if e.URL != "" {
			if !c.elicitsURL() {
				return tool.Answer{Action: "decline"}, nil // the client cannot send the user anywhere
			}
			p = protocol.ElicitationParams{SessionID: s.id, Mode: "url", Message: e.Message, URL: e.URL, ElicitationID: e.ID}
		}
		var res protocol.ElicitationResult
		err := c.conn.Call(ctx, protocol.MethodElicitationCreate, p, &res)
		if err != nil {
			return tool.Answer{}, err
		}
		if res.Action == "" {
			res.Action = "decline" // "result": null
		}
		return tool.Answer{Action: res.Action, Content: res.Content}, nil
	}
}

// ClientFS implements agent.Host: the file tools read and write through
// the client that sent the prompt, if it said it would (an editor shows
// the writes as diffs and reads its unsaved buffers). Like a question,
// a request waits for the events before it (its tool_call).
func (s *Session) ClientFS() *tool.ClientFS {
	c := s.t.TurnClient()
	if c == nil {
		return nil
	}
	read, write := c.fs()
	if !read && !write {
		return nil
	}
	fs := &tool.ClientFS{}
	if read {
		fs.Read = func(ctx context.Context, path string) (string, error) {
			if err := s.caughtUp(ctx); err != nil {
				return "", err
			}
			var r protocol.FSReadResult
			err := c.conn.Call(ctx, protocol.MethodFSReadTextFile, protocol.FSReadParams{SessionID: s.id, Path: path}, &r)
			return r.Content, err
		}
	}
	if write {
		fs.Write = func(ctx context.Context, path, content string) error {
			if err := s.caughtUp(ctx); err != nil {
				return err
			}
			return c.conn.Call(ctx, protocol.MethodFSWriteTextFile, protocol.FSWriteParams{SessionID: s.id, Path: path, Content: content}, nil)
		}
	}
	return fs
}

// ClientTerminal implements agent.Host: shell commands run in the
// terminal of the client that sent the prompt, if it said it would; a
// cancelled turn tells it to stop the command (terminal/cancel).
func (s *Session) ClientTerminal() func(context.Context, tool.TerminalRun) (tool.TerminalOutcome, error) {
	c := s.t.TurnClient()
	if c == nil || !c.runs() {
		return nil
	}
	return func(ctx context.Context, r tool.TerminalRun) (tool.TerminalOutcome, error) {
		if err := s.caughtUp(ctx); err != nil {
			return tool.TerminalOutcome{}, err
		}
		id := protocol.NewID("run_", 6)
		var res protocol.TerminalRunResult
		// The client enforces the timeout; a little more here, so a
		// client that never answers does not hold the turn.
		cctx, cancel := context.WithTimeout(ctx, time.Duration(r.Timeout+10)*time.Second)
		defer cancel()
		err := c.conn.Call(cctx, protocol.MethodTerminalRun, protocol.TerminalRunParams{SessionID: s.id, RunID: id,
			Program: r.Program, Command: r.Command, Cwd: r.Cwd, TimeoutSecs: r.Timeout, OutputByteLimit: r.OutputLimit}, &res)
		if cctx.Err() != nil {
			c.notify(protocol.MethodTerminalCancel, protocol.TerminalCancelParams{SessionID: s.id, RunID: id})
		}
		if err != nil && ctx.Err() == nil && cctx.Err() != nil {
			return tool.TerminalOutcome{Output: res.Output, TimedOut: true}, nil
		}
		return tool.TerminalOutcome{Output: res.Output, Truncated: res.Truncated, ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut}, err
	}
}
