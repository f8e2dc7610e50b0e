// Package rewind keeps each turn's checkpoint of what it changed in
// its session's directory (internal/checkpoint), and serves the
// methods that read and use them: session/checkpoints, session/diff
// and session/rewind (to before a turn, or the last rewind undone). A
// rewind takes the files and (or) the conversation back and appends a
// rewind event: the history itself stays as it was. A rewind a crash
// cut is finished at the daemon's start (Recover), before any client
// sees its session.
//
// It takes part in every session's turns as a session.Participant
// (RunStarting: the turn's checkpoint begun and kept; Changing, Changed:
// what each tool call may change captured), keeps each session's
// checkpoint store with the session (Session.Keep), and drives sessions
// through their public face.
package rewind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/checkpoint"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Checkpoints are the checkpoints of one daemon's sessions.
type Checkpoints struct {
	session.Moments
	m     *session.Manager
	store *store.Store
	log   *slog.Logger
}

// New makes the checkpoints of m's sessions (kept under
// m.CheckpointDir(), none when it is ""), whose rows are in st, and
// joins them to every session's turns.
func New(m *session.Manager, st *store.Store, log *slog.Logger) *Checkpoints {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Checkpoints{m: m, store: st, log: log}
	m.Join(c)
	return c
}

// box is a session's checkpoint store as kept with the session: its
// lock (taken before any of the session's) and the store (nil: not
// opened yet).
type box struct {
	mu sync.Mutex
	cp *checkpoint.Store
}

type boxKey struct{}

func boxOf(s *session.Session) *box {
	return s.Keep(boxKey{}, func() any { return &box{} }).(*box)
}

// open is s's checkpoint store, opened at first use; nil when the
// checkpoints are off.
func (c *Checkpoints) open(s *session.Session) *checkpoint.Store {
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cp != nil {
		return b.cp
	}
	conf, dir := c.m.Config().Checkpoints, c.m.CheckpointDir()
	if !conf.Enabled || dir == "" {
		return nil
	}
	cp, err := checkpoint.Open(filepath.Join(dir, s.ID()), s.Cwd(),
		checkpoint.Options{MaxFileBytes: conf.MaxFileBytes, Exclude: conf.Exclude, KeepTurns: conf.KeepTurns})
	if err != nil {
		c.log.Warn("checkpoints could not be opened: this session's turns are not undoable", "sessionId", s.ID(), "err", err)
		return nil
	}
	b.cp = cp
	return cp
}

// opened is s's checkpoint store if it is open.
func opened(s *session.Session) *checkpoint.Store {
	b := boxOf(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cp
}

// RunStarting begins the turn's checkpoint; ended keeps it.
func (c *Checkpoints) RunStarting(s *session.Session, r session.Run) (ended func()) {
	cp := c.open(s)
	if cp == nil {
		return nil
	}
	cp.Begin(cp.NextTurn(), session.Title(r.Prompt), r.Seq, r.Messages, r.Gap)
	return func() {
		if _, err := cp.End(); err != nil {
			c.log.Warn("a turn's checkpoint could not be kept", "sessionId", s.ID(), "err", err)
		}
	}
}

// Changing captures what the call may change.
func (c *Checkpoints) Changing(s *session.Session, e tool.Effect) {
	if cp := opened(s); cp != nil {
		cp.Changing(e.Paths, e.Anything)
	}
}

// Changed records what the call changed.
func (c *Checkpoints) Changed(s *session.Session, e tool.Effect) {
	if cp := opened(s); cp != nil {
		cp.Changed(e.Paths, e.Anything)
	}
}

// errOff is the answer of the methods when the checkpoints are off.
var errOff = errors.New("checkpoints are off ([checkpoints] enabled = false in config.toml): no turn can be rewound")

// storeOf is session id, as cl may use it, and its checkpoint store.
func (c *Checkpoints) storeOf(cl *session.Client, id string) (*session.Session, *checkpoint.Store, error) {
	s, err := c.m.Lookup(cl, id)
	if err != nil {
		return nil, nil, err
	}
	cp := c.open(s)
	if cp == nil {
		return nil, nil, errOff
	}
	return s, cp, nil
}

func wireFiles(cs []checkpoint.Change) []protocol.CheckpointFile {
	out := make([]protocol.CheckpointFile, 0, len(cs))
	for _, c := range cs {
		out = append(out, protocol.CheckpointFile{Path: c.Path, Change: c.Kind(), BytesBefore: c.Before.Size, BytesAfter: c.After.Size})
	}
	return out
}

// listMaxFiles bounds the files (and the uncaptured paths) a checkpoint
// is listed with; listMaxBytes bounds session/checkpoints' checkpoints,
// as JSON: far below any client's frame limit, whatever the turns did.
var (
	listMaxFiles = 1000
	listMaxBytes = 2 << 20
)

// List serves session/checkpoints: the session's turns and what each
// changed, bounded: a checkpoint lists its first listMaxFiles files
// (FilesOmitted counts the rest; session/diff has them all), and past
// listMaxBytes the oldest checkpoints are left out (Omitted), never the
// newest.
func (c *Checkpoints) List(ctx context.Context, cl *session.Client, id string) (*protocol.SessionCheckpointsResult, error) {
	_, cp, err := c.storeOf(cl, id)
	if err != nil {
		return nil, err
	}
	res := &protocol.SessionCheckpointsResult{SessionID: id, Checkpoints: []protocol.Checkpoint{}}
	var sizes []int
	size := 0
	for _, t := range cp.Turns() {
		files, uncap := t.Changes, t.Uncaptured
		k := protocol.Checkpoint{Turn: t.N, Title: t.Title, Seq: t.Seq, StartedMs: t.StartedMs, Rewound: t.Rewound}
		if n := len(files) + len(uncap); n > listMaxFiles {
			files = files[:min(len(files), listMaxFiles)]
			uncap = uncap[:min(len(uncap), listMaxFiles-len(files))]
			k.FilesOmitted = n - len(files) - len(uncap)
		}
		k.Files, k.Uncaptured = wireFiles(files), protocol.List(uncap)
		b, _ := json.Marshal(k)
		sizes = append(sizes, len(b)+1)
		size += len(b) + 1
		res.Checkpoints = append(res.Checkpoints, k)
	}
	for len(res.Checkpoints) > 1 && size > listMaxBytes {
		size -= sizes[res.Omitted]
		res.Checkpoints = res.Checkpoints[1:]
		res.Omitted++
	}
	return res, nil
}

// Diff serves session/diff: what a turn (0: the session) changed, as a
// unified diff.
func (c *Checkpoints) Diff(ctx context.Context, cl *session.Client, p protocol.SessionDiffParams) (*protocol.SessionDiffResult, error) {
	_, cp, err := c.storeOf(cl, p.SessionID)
	if err != nil {
		return nil, err
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

// encode encodes v as the session stores messages: as encoding/json
// does, less its HTML escaping.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("rewind: cannot encode: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
