package session

import (
	"context"
	"syscall"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// What the turns' checkpoints (internal/rewind) and the command hooks
// (internal/hooks) need of the sessions, besides their moments: the
// turn slot between turns, the conversation cut and given back, the
// processes a rewound turn started, an event waited for until it is on
// disk, and how the session's commands run.

// CheckpointDir is where each session's checkpoints live, in a
// directory named for its id ("": none are kept).
func (m *Manager) CheckpointDir() string { return m.cpDir }

// Environ is the environment commands run with: the daemon's, without
// the variables that hold provider keys.
func (m *Manager) Environ() []string { return m.conf().Environ() }

// HoldIdle takes the session's turn slot while no turn runs, for work
// between turns (a prompt that comes meanwhile waits in the queue);
// while a turn runs it fails with busy. release hands the slot on.
func (s *Session) HoldIdle(busy error) (release func(), err error) {
	return s.borrow(context.Background(), false, busy)
}

// MessagesFrom is a copy of the transcript's messages from the n-th on.
func (s *Session) MessagesFrom(n int) []provider.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provider.Message(nil), s.history.Messages[min(n, len(s.history.Messages)):]...)
}

// CutConversation leaves the transcript's messages from the from-th on
// out of it (and the store), so the model no longer sees them.
func (s *Session) CutConversation(from int) error {
	s.mu.Lock()
	if from >= len(s.history.Messages) {
		s.mu.Unlock()
		return nil
	}
	kept := append([]provider.Message(nil), s.history.Messages[:from]...)
	cut, cutTokens, summary := s.history.Cut, s.history.CutTokens, s.history.Summary
	s.history = provider.NewTranscript(kept)
	if cut <= from {
		s.history.Cut, s.history.CutTokens, s.history.Summary = cut, cutTokens, summary
	}
	s.mu.Unlock()
	return s.m.store.ReplaceMessages(s.id, int64(from), nil)
}

// RestoreConversation gives msgs back to the transcript after its first
// from messages, when it is from long (the conversation has not gone on
// since) or force; restored says whether it did, err whether the store
// could not keep them (the transcript has them all the same).
func (s *Session) RestoreConversation(from int, msgs []provider.Message, force bool) (restored bool, err error) {
	s.mu.Lock()
	if len(s.history.Messages) != from && !force {
		s.mu.Unlock()
		return false, nil // the conversation went on since: its new turns stay
	}
	all := append(append([]provider.Message(nil), s.history.Messages[:min(from, len(s.history.Messages))]...), msgs...)
	s.history = provider.NewTranscript(all)
	s.mu.Unlock()
	bodies := make([][]byte, len(msgs))
	for i, m := range msgs {
		bodies[i] = mustJSON(m)
	}
	return true, s.m.store.ReplaceMessages(s.id, int64(from), bodies)
}

// ProcessesSince are the session's background processes that run and
// started after seq (in the turn whose user_message it is, or later).
func (s *Session) ProcessesSince(seq int64) []protocol.ProcessInfo {
	var out []protocol.ProcessInfo
	for _, p := range s.processesSince(seq) {
		out = append(out, wireProcess(p.Info()))
	}
	return out
}

// StopProcessesSince stops those processes: TERM, then KILL after the
// shell tool's grace.
func (s *Session) StopProcessesSince(seq int64) {
	for _, p := range s.processesSince(seq) {
		p.Kill(syscall.SIGTERM, tool.KillGrace)
	}
}

// processesSince are the running processes ProcessesSince says.
func (s *Session) processesSince(seq int64) []*background.Process {
	s.mu.Lock()
	t := s.procs
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	var out []*background.Process
	for _, p := range t.RunningProcesses() {
		if p.Seq() > seq {
			out = append(out, p)
		}
	}
	return out
}

// PublishCommitted is Publish, then waits until ev is on disk (and
// handed to the clients).
func (s *Session) PublishCommitted(ctx context.Context, ev protocol.EventBody) error {
	return s.events.Await(ctx, s.emit(ev))
}

// Title is the title a prompt gives a turn, or a fresh session: its
// first line of words.
func Title(prompt string) string { return title(prompt) }
