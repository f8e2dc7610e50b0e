package rewind

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zeroclaw/zeroclaw/internal/checkpoint"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// conversationCut is what a rewind keeps of the conversation it cut (in
// its checkpoint record), to give it back if the rewind is undone.
type conversationCut struct {
	From     int    `json:"from"`     // the transcript's length after the cut
	Messages string `json:"messages"` // the object holding the cut messages (a JSON array)
	Count    int    `json:"count"`
}

// Rewind serves session/rewind: the files and (or) the conversation
// back to before a turn, or the last rewind undone.
func (c *Checkpoints) Rewind(ctx context.Context, cl *session.Client, p protocol.SessionRewindParams) (*protocol.SessionRewindResult, error) {
	s, cp, err := c.storeOf(cl, p.SessionID)
	if err != nil {
		return nil, err
	}
	if !p.Undo && p.Turn < 1 {
		return nil, &protocol.ParamsError{Field: "turn", Reason: "give the turn to go back to before (from 1; session/checkpoints lists them), or undo: true"}
	}
	if err := s.LoadTranscript(ctx); err != nil {
		return nil, err
	}
	release, err := s.HoldIdle(fmt.Errorf("%w: a turn is running: wait for it to end (or cancel it with session/cancel), then rewind", session.ErrBusy))
	if err != nil {
		return nil, err
	}
	defer release()
	files := p.Files == nil || *p.Files
	conv := p.Conversation == nil || *p.Conversation
	var res checkpoint.Result
	ev := protocol.RewindEvent{Turn: p.Turn, Undo: p.Undo, Files: files, Conversation: conv}
	done := &protocol.SessionRewindResult{SessionID: s.ID(), Rewound: true, Restored: []string{}, Removed: []string{}, Turns: []int{}}
	if p.Undo {
		res, err = cp.Undo(p.Force)
		if err != nil {
			return nil, checkpointErr(err)
		}
		if res.Rewound {
			ev.Conversation = c.restoreConversation(s, cp, res.Extra, p.Force)
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
		if running := s.ProcessesSince(turn.Seq); len(running) > 0 {
			if !p.Force {
				out := *done
				out.Rewound = false
				out.Processes = running
				return &out, nil
			}
			s.StopProcessesSince(turn.Seq)
		}
		opts := checkpoint.RewindOptions{Files: files, Force: p.Force}
		cut := false
		if conv {
			if tail := s.MessagesFrom(turn.Messages); len(tail) > 0 {
				hash, err := cp.Keep(encode(tail))
				if err != nil {
					return nil, err
				}
				opts.Extra, opts.Objects, cut = encode(conversationCut{From: turn.Messages, Messages: hash, Count: len(tail)}), []string{hash}, true
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
			if err := s.CutConversation(turn.Messages); err != nil {
				return nil, err
			}
		}
		ev.Conversation = cut
		if res.Noop && !cut {
			return done, nil
		}
	}
	out := &protocol.SessionRewindResult{SessionID: s.ID(), Rewound: res.Rewound, Restored: protocol.List(res.Restored), Removed: protocol.List(res.Removed), Turns: protocol.List(res.Turns)}
	for _, k := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, protocol.RewindConflict(k))
	}
	if !res.Rewound {
		return out, nil // nothing done, nothing appended
	}
	ev.Turns, ev.Restored, ev.Removed, ev.Overwritten = res.Turns, out.Restored, out.Removed, out.Conflicts
	if err := s.PublishCommitted(ctx, ev); err != nil {
		return nil, err
	}
	c.log.Info("session rewound", "sessionId", s.ID(), "turn", p.Turn, "undo", p.Undo, "restored", len(res.Restored), "removed", len(res.Removed))
	return out, nil
}

// restoreConversation gives back the messages a rewind cut (extra, its
// record), when the conversation has not gone on since (or force); it
// says whether it did.
func (c *Checkpoints) restoreConversation(s *session.Session, cp *checkpoint.Store, extra json.RawMessage, force bool) bool {
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
		c.log.Warn("a rewind's conversation could not be given back", "sessionId", s.ID(), "err", err)
		return false
	}
	restored, err := s.RestoreConversation(cc.From, msgs, force)
	if err != nil {
		c.log.Warn("a rewind's conversation could not be stored back", "sessionId", s.ID(), "err", err)
	}
	return restored
}

// Recover finishes, at the daemon's start, the rewinds its last run
// left half done: each such session is loaded and its rewind finished
// (and said in its history) before any client sees it.
func (c *Checkpoints) Recover(ctx context.Context) {
	dir := c.m.CheckpointDir()
	if dir == "" {
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "rewind.journal")); err != nil {
			continue
		}
		if _, err := c.store.GetSession(ctx, e.Name()); err != nil {
			c.log.Warn("an interrupted rewind of a session that is gone", "sessionId", e.Name(), "err", err)
			continue
		}
		s, err := c.m.Load(ctx, e.Name())
		if err != nil {
			c.log.Error("an interrupted rewind's session could not be loaded", "sessionId", e.Name(), "err", err)
			continue
		}
		c.recover(ctx, s)
	}
}

// recover finishes s's rewind a crash interrupted, and says so in its
// history.
func (c *Checkpoints) recover(ctx context.Context, s *session.Session) {
	cp := c.open(s)
	if cp == nil {
		return
	}
	res, err := cp.Recover()
	if res == nil {
		if err != nil {
			c.log.Error("an interrupted rewind could not be finished", "sessionId", s.ID(), "err", err)
		}
		return
	}
	if err := s.LoadTranscript(ctx); err != nil {
		c.log.Error("an interrupted rewind's session could not be read", "sessionId", s.ID(), "err", err)
	}
	ev := protocol.RewindEvent{Undo: res.Undo, Turns: res.Turns, Restored: protocol.List(res.Restored), Removed: protocol.List(res.Removed), Recovered: true, Files: true}
	if len(res.Turns) > 0 {
		ev.Turn = res.Turns[0]
	}
	var cc conversationCut
	if json.Unmarshal(res.Extra, &cc) == nil && cc.Messages != "" {
		if res.Undo {
			ev.Conversation = c.restoreConversation(s, cp, res.Extra, false)
		} else {
			ev.Conversation = s.CutConversation(cc.From) == nil
		}
	}
	s.Publish(ev)
	c.log.Warn("a rewind interrupted by the daemon's end was finished", "sessionId", s.ID(), "turns", res.Turns, "err", err)
}
