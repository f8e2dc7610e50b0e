package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/checkpoint"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Checkpoints, rewind and diff: each turn of a session records what it
// changed in the session's directory (internal/checkpoint); a rewind
// takes the files and (or) the conversation back to before a turn, and
// appends a rewind event: the history itself stays as it was.

// checkpoints is the session's checkpoint store, opened at first use;
// nil when checkpoints are off.
func (s *Session) checkpoints() *checkpoint.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cp != nil {
		return s.cp
	}
	c := s.m.conf().Config().Checkpoints
	if !c.Enabled || s.m.cpDir == "" {
		return nil
	}
	cp, err := checkpoint.Open(filepath.Join(s.m.cpDir, s.id), s.cwd,
		checkpoint.Options{MaxFileBytes: c.MaxFileBytes, Exclude: c.Exclude, KeepTurns: c.KeepTurns})
	if err != nil {
		s.m.log.Warn("checkpoints could not be opened: this session's turns are not undoable", "sessionId", s.id, "err", err)
		return nil
	}
	s.cp = cp
	return cp
}

// Changing implements agent.Host: the checkpoint captures what the call
// may change.
func (s *Session) Changing(e tool.Effect) {
	if cp := s.openCheckpoints(); cp != nil {
		cp.Changing(e.Paths, e.Anything)
	}
}

// Changed implements agent.Host.
func (s *Session) Changed(e tool.Effect) {
	if cp := s.openCheckpoints(); cp != nil {
		cp.Changed(e.Paths, e.Anything)
	}
}

// openCheckpoints is the store if it is open.
func (s *Session) openCheckpoints() *checkpoint.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cp
}

// beginCheckpoint starts the turn's checkpoint.
func (s *Session) beginCheckpoint(prompt string, seq int64) *checkpoint.Store {
	cp := s.checkpoints()
	if cp == nil {
		return nil
	}
	s.mu.Lock()
	n := len(s.history.Messages)
	s.mu.Unlock()
	// A background process that ran since the last turn: what changed
	// meanwhile is taken for the agent's.
	s.nmu.Lock()
	gap := s.procsEnded
	s.procsEnded = false
	s.nmu.Unlock()
	gap = gap || s.runsProcesses()
	cp.Begin(cp.NextTurn(), title(prompt), seq, n, gap)
	return cp
}

// endCheckpoint keeps the turn's checkpoint.
func (s *Session) endCheckpoint(cp *checkpoint.Store) {
	if cp == nil {
		return
	}
	if _, err := cp.End(); err != nil {
		s.m.log.Warn("a turn's checkpoint could not be kept", "sessionId", s.id, "err", err)
	}
}

// errCheckpointsOff is the answer of the rewind methods when the
// checkpoints are off.
var errCheckpointsOff = errors.New("checkpoints are off ([checkpoints] enabled = false in config.toml): no turn can be rewound")

func wireFiles(cs []checkpoint.Change) []protocol.CheckpointFile {
	out := make([]protocol.CheckpointFile, 0, len(cs))
	for _, c := range cs {
		out = append(out, protocol.CheckpointFile{Path: c.Path, Change: c.Kind(), BytesBefore: c.Before.Size, BytesAfter: c.After.Size})
	}
	return out
}

// Checkpoints lists the session's turns and what each changed.
func (m *Manager) Checkpoints(ctx context.Context, c *Client, id string) (*protocol.SessionCheckpointsResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	cp := s.checkpoints()
	if cp == nil {
		return nil, errCheckpointsOff
	}
	res := &protocol.SessionCheckpointsResult{SessionID: id, Checkpoints: []protocol.Checkpoint{}}
	for _, t := range cp.Turns() {
		res.Checkpoints = append(res.Checkpoints, protocol.Checkpoint{Turn: t.N, Title: t.Title, Seq: t.Seq, StartedMs: t.StartedMs,
			Files: wireFiles(t.Changes), Uncaptured: protocol.List(t.Uncaptured), Rewound: t.Rewound})
	}
	return res, nil
}

// Diff is what a turn (0: the session) changed, as a unified diff.
func (m *Manager) Diff(ctx context.Context, c *Client, p protocol.SessionDiffParams) (*protocol.SessionDiffResult, error) {
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	cp := s.checkpoints()
	if cp == nil {
		return nil, errCheckpointsOff
	}
	changes, err := cp.Changes(p.Turn)
	if err == nil {
		var d string
		if d, err = cp.Diff(p.Turn); err == nil {
			return &protocol.SessionDiffResult{SessionID: p.SessionID, Turn: p.Turn, Diff: d, Files: wireFiles(changes)}, nil
		}
	}
	return nil, checkpointErr(err)
}

// checkpointErr makes a refusal of the checkpoint store a params error.
func checkpointErr(err error) error {
	if errors.Is(err, checkpoint.ErrNoTurn) || errors.Is(err, checkpoint.ErrPruned) || errors.Is(err, checkpoint.ErrNoRewind) {
		return &protocol.ParamsError{Field: "turn", Reason: err.Error()}
	}
	return err
}

// conversationCut is what a rewind keeps of the conversation it cut (in
// its checkpoint record), to give it back if the rewind is undone.
type conversationCut struct {
	From     int    `json:"from"`     // the transcript's length after the cut
	Messages string `json:"messages"` // the object holding the cut messages (a JSON array)
	Count    int    `json:"count"`
}

// Rewind serves session/rewind.
func (m *Manager) Rewind(ctx context.Context, c *Client, p protocol.SessionRewindParams) (*protocol.SessionRewindResult, error) {
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	cp := s.checkpoints()
	if cp == nil {
		return nil, errCheckpointsOff
	}
	if !p.Undo && p.Turn < 1 {
		return nil, &protocol.ParamsError{Field: "turn", Reason: "give the turn to go back to before (from 1; session/checkpoints lists them), or undo: true"}
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	release, err := s.holdIdle()
	if err != nil {
		return nil, err
	}
	defer release()
	files := p.Files == nil || *p.Files
	conv := p.Conversation == nil || *p.Conversation
	var res checkpoint.Result
	ev := protocol.RewindEvent{Turn: p.Turn, Undo: p.Undo, Files: files, Conversation: conv}
	done := &protocol.SessionRewindResult{SessionID: s.id, Rewound: true, Restored: []string{}, Removed: []string{}, Turns: []int{}}
	if p.Undo {
		res, err = cp.Undo(p.Force)
		if err != nil {
			return nil, checkpointErr(err)
		}
		if res.Rewound {
			ev.Conversation = s.restoreConversation(cp, res.Extra, p.Force)
			ev.Files = len(res.Restored)+len(res.Removed) > 0
		}
	} else {
		var turn *checkpoint.Turn
		for _, t := range cp.Turns() {
			if t.N == p.Turn {
				turn = &t
			}
		}
		if turn == nil {
			return nil, checkpointErr(fmt.Errorf("%w: %d", checkpoint.ErrNoTurn, p.Turn))
		}
		// A process a rewound turn started that still runs would go on
		// changing what the rewind restores: it is stopped first, when
		// the caller says so (force).
		if running := s.processesSince(turn.Seq); len(running) > 0 {
			if !p.Force {
				out := *done
				out.Rewound = false
				for _, bp := range running {
					out.Processes = append(out.Processes, wireProcess(bp.Info()))
				}
				return &out, nil
			}
			for _, bp := range running {
				bp.Kill(syscall.SIGTERM, tool.KillGrace)
			}
		}
		opts := checkpoint.RewindOptions{Files: files, Force: p.Force}
		cut := false
		if conv {
			s.mu.Lock()
			tail := append([]provider.Message(nil), s.history.Messages[min(turn.Messages, len(s.history.Messages)):]...)
			s.mu.Unlock()
			if len(tail) > 0 {
				hash, err := cp.Keep(mustJSON(tail))
				if err != nil {
					return nil, err
				}
				opts.Extra, opts.Objects, cut = mustJSON(conversationCut{From: turn.Messages, Messages: hash, Count: len(tail)}), []string{hash}, true
			}
		}
		if !files && !cut {
			return done, nil // the conversation is there already
		}
		res, err = cp.Rewind(p.Turn, opts)
		if err != nil {
			return nil, checkpointErr(err)
		}
		if res.Rewound && cut {
			if err := s.cutConversation(turn.Messages); err != nil {
				return nil, err
			}
		}
		ev.Conversation = cut
		if res.Noop && !cut {
			return done, nil
		}
	}
	out := &protocol.SessionRewindResult{SessionID: s.id, Rewound: res.Rewound, Restored: protocol.List(res.Restored), Removed: protocol.List(res.Removed), Turns: protocol.List(res.Turns)}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, protocol.RewindConflict(c))
	}
	if !res.Rewound {
		return out, nil // nothing done, nothing appended
	}
	ev.Turns, ev.Restored, ev.Removed, ev.Overwritten = res.Turns, out.Restored, out.Removed, out.Conflicts
	last := s.emit(ev)
	if err := s.committed(ctx, last); err != nil {
		return nil, err
	}
	m.log.Info("session rewound", "sessionId", s.id, "turn", p.Turn, "undo", p.Undo, "restored", len(res.Restored), "removed", len(res.Removed))
	return out, nil
}

// processesSince are the session's running background processes that
// started after seq (in the turn whose user_message it is, or later).
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

// cutConversation leaves the transcript's messages from `from` on out of
// it (and the store), so the model no longer sees them.
func (s *Session) cutConversation(from int) error {
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

// restoreConversation gives back the messages a rewind cut (extra, its
// record), when the conversation has not gone on since (or force); it
// says whether it did.
func (s *Session) restoreConversation(cp *checkpoint.Store, extra json.RawMessage, force bool) bool {
	var cc conversationCut
	if len(extra) == 0 || json.Unmarshal(extra, &cc) != nil || cc.Messages == "" {
		return false
	}
	b, err := cp.Kept(cc.Messages)
	var msgs []provider.Message
	if err == nil {
		err = json.Unmarshal(b, &msgs)
	}
	if err != nil {
		s.m.log.Warn("a rewind's conversation could not be given back", "sessionId", s.id, "err", err)
		return false
	}
	s.mu.Lock()
	if len(s.history.Messages) != cc.From && !force {
		s.mu.Unlock()
		return false // the conversation went on since: its new turns stay
	}
	all := append(append([]provider.Message(nil), s.history.Messages[:min(cc.From, len(s.history.Messages))]...), msgs...)
	s.history = provider.NewTranscript(all)
	s.mu.Unlock()
	bodies := make([][]byte, len(msgs))
	for i, m := range msgs {
		bodies[i] = mustJSON(m)
	}
	if err := s.m.store.ReplaceMessages(s.id, int64(cc.From), bodies); err != nil {
		s.m.log.Warn("a rewind's conversation could not be stored back", "sessionId", s.id, "err", err)
	}
	return true
}

// holdIdle takes the session's turn slot while it is idle (a prompt that
// comes meanwhile waits in the queue); ErrBusy while a turn runs.
func (s *Session) holdIdle() (release func(), err error) {
	return s.borrow(context.Background(), false,
		fmt.Errorf("%w: a turn is running: wait for it to end (or cancel it with session/cancel), then rewind", ErrBusy))
}

// recoverRewind finishes a rewind a crash interrupted, and says so in
// the history.
func (s *Session) recoverRewind(ctx context.Context) {
	cp := s.checkpoints()
	if cp == nil {
		return
	}
	res, err := cp.Recover()
	if res == nil {
		if err != nil {
			s.m.log.Error("an interrupted rewind could not be finished", "sessionId", s.id, "err", err)
		}
		return
	}
	if err := s.load(ctx); err != nil {
		s.m.log.Error("an interrupted rewind's session could not be read", "sessionId", s.id, "err", err)
	}
	ev := protocol.RewindEvent{Undo: res.Undo, Turns: res.Turns, Restored: protocol.List(res.Restored), Removed: protocol.List(res.Removed), Recovered: true, Files: true}
	if len(res.Turns) > 0 {
		ev.Turn = res.Turns[0]
	}
	var cc conversationCut
	if json.Unmarshal(res.Extra, &cc) == nil && cc.Messages != "" {
		if res.Undo {
			ev.Conversation = s.restoreConversation(cp, res.Extra, false)
		} else {
			ev.Conversation = s.cutConversation(cc.From) == nil
		}
	}
	s.emit(ev)
	s.m.log.Warn("a rewind interrupted by the daemon's end was finished", "sessionId", s.id, "turns", res.Turns, "err", err)
}

// RecoverRewinds finishes, at the daemon's start, the rewinds its last
// run left half done: each such session is loaded and its rewind
// finished before any client sees it.
func (m *Manager) RecoverRewinds(ctx context.Context) {
	if m.cpDir == "" {
		return
	}
	entries, _ := os.ReadDir(m.cpDir)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(m.cpDir, e.Name(), "rewind.journal")); err != nil {
			continue
		}
		rec, err := m.store.GetSession(ctx, e.Name())
		if err != nil {
			m.log.Warn("an interrupted rewind of a session that is gone", "sessionId", e.Name(), "err", err)
			continue
		}
		s, err := m.resume(ctx, rec)
		if err == nil {
			m.mu.Lock()
			m.live[s.id] = s
			m.mu.Unlock()
		}
		if err != nil {
			m.log.Error("an interrupted rewind's session could not be loaded", "sessionId", e.Name(), "err", err)
			continue
		}
		s.recoverRewind(ctx)
	}
}
