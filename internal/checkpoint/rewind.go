package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Rewind is a rewind done: the turns it undid and, for each path it
// changed, the state it found (Before) and the one it made (After), so it
// can itself be undone.
type Rewind struct {
	To       int      `json:"to"`
	Turns    []int    `json:"turns"`
	Replaced []Change `json:"replaced"`
	// Dirs are the directories it removed (created by the turns, empty).
	Dirs   []string `json:"dirs,omitempty"`
	Undone bool     `json:"undone,omitempty"`
	// Files: the directory was rewound (else only Extra's part was).
	Files bool `json:"files"`
	// Extra is the caller's own record of it (the conversation cut), and
	// Objects the objects it names (kept while the rewind is).
	Extra   json.RawMessage `json:"extra,omitempty"`
	Objects []string        `json:"objects,omitempty"`
}

// RewindOptions say what a rewind does besides choosing the turn.
type RewindOptions struct {
	// Files restores the directory; without it the rewind is only
	// recorded (with Extra), for the caller's own part.
	Files bool
	// Force overwrites paths changed since by someone else.
	Force bool
	// Extra and Objects: see Rewind.
	Extra   json.RawMessage
	Objects []string
}

// Conflict is a path a rewind will not overwrite without force.
type Conflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Result is what a rewind (or its undoing) did, or would not do.
type Result struct {
	Rewound   bool
	Restored  []string // written back
	Removed   []string // removed (files the turns created)
	Conflicts []Conflict
	Turns     []int // the turns undone (redone, for an undo)
	Undo      bool
	Recovered bool // finished at start after a crash
	Noop      bool // nothing was left to rewind: nothing done or recorded
	// Extra is the rewind's caller record (see Rewind.Extra).
	Extra json.RawMessage
}

// ErrRunning and the others are a rewind refused.
var (
	ErrNoTurn   = errors.New("no such turn")
	ErrPruned   = errors.New("that turn's checkpoint is no longer kept")
	ErrNoRewind = errors.New("no rewind to undo")
)

// crashAfter, in tests, stops a rewind after that many files as a crash
// would (-1: never).
var (
	crashAfter = -1
	errCrash   = errors.New("checkpoint: stopped as by a crash (test)")
)

// journal is a rewind in progress, on disk before any file is touched.
type journal struct {
	Undo   bool     `json:"undo"`
	Index  int      `json:"index"` // the rewind an undo undoes
	Record *Rewind  `json:"record,omitempty"`
	Ops    []Change `json:"ops"` // Path → After
}

func (s *Store) journalPath() string { return filepath.Join(s.dir, "rewind.journal") }

// Rewind brings the directory back to its state before turn `to`: every
// path a turn from `to` on (not rewound already) changed goes back to its
// state before the first of them. A path changed since by someone else is
// a conflict: nothing is done unless force. extra is kept with the rewind
// (and given back by Undo and by a recovery).
func (s *Store) Rewind(to int, o RewindOptions) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.rewindable(to); err != nil {
		return Result{}, err
	}
	rec := &Rewind{To: to, Files: o.Files, Extra: o.Extra, Objects: o.Objects}
	var p *rewindPlan
	rec.Turns, p = s.undone(to, o.Files)
	if !o.Files {
		res, err := s.apply(&journal{Record: rec})
		return res, err
	}
	if len(rec.Turns) == 0 {
		// Every turn from there on is rewound already: the directory is
		// at that point.
		return Result{Rewound: true, Noop: true}, nil
	}
	ops, conflicts := s.rewindOps(p, o.Force)
	if len(conflicts) > 0 && !o.Force {
		return Result{Conflicts: conflicts}, nil
	}
	rec.Replaced = ops
	rec.Dirs = s.existingDirs(p.dirs)
	if len(ops) == 0 && len(rec.Dirs) == 0 && o.Extra == nil {
		// The directory is at that point already.
		return Result{Rewound: true, Noop: true, Conflicts: conflicts}, nil
	}
	res, err := s.apply(&journal{Record: rec, Ops: ops})
	res.Conflicts = conflicts
	return res, err
}

// rewindable refuses a rewind to a turn there is no checkpoint of: one
// not taken yet, or pruned.
func (s *Store) rewindable(to int) error {
	if len(s.turns) == 0 || to > s.turns[len(s.turns)-1].N || to < 1 {
		return fmt.Errorf("%w: %d", ErrNoTurn, to)
	}
	if to < s.turns[0].N {
		return fmt.Errorf("%w: turn %d (the oldest kept is %d)", ErrPruned, to, s.turns[0].N)
	}
	return nil
}

// rewindPlan is what the turns a rewind undoes changed: for each path,
// the state before the first of them (target), the state the last of
// them left (expect) and which turn that was; and the directories they
// created.
type rewindPlan struct {
	target, expect map[string]State
	last           map[string]int
	order          []string // the paths, sorted
	dirs           map[string]bool
}

// undone is the turns a rewind to `to` undoes (with files, those not
// rewound already) and, with files, what they changed.
func (s *Store) undone(to int, files bool) ([]int, *rewindPlan) {
	var turns []int
	p := &rewindPlan{target: map[string]State{}, expect: map[string]State{}, last: map[string]int{}, dirs: map[string]bool{}}
	for _, t := range s.turns {
		if t.N < to || (t.Rewound && files) {
			continue
		}
		turns = append(turns, t.N)
		if !files {
			continue
		}
		for _, c := range t.Changes {
			if _, seen := p.target[c.Path]; !seen {
				p.target[c.Path] = c.Before
				p.order = append(p.order, c.Path)
			}
			p.expect[c.Path], p.last[c.Path] = c.After, t.N
		}
		for _, d := range t.Dirs {
			p.dirs[d] = true
		}
	}
	sort.Strings(p.order)
	return turns, p
}

// rewindOps is what a rewind by p writes, each path from its present
// state to its target, and the conflicts found on the way: a path that
// cannot be read, whose target or present content was not or cannot be
// kept, or that was changed since the turns (written all the same with
// force).
func (s *Store) rewindOps(p *rewindPlan, force bool) ([]Change, []Conflict) {
	var ops []Change
	var conflicts []Conflict
	for _, rel := range p.order {
		cur, err := s.capture(rel)
		if err != nil {
			conflicts = append(conflicts, Conflict{rel, "unreadable: " + err.Error()})
			continue
		}
		want := p.target[rel]
		if want.Exists && want.Hash == "" {
			conflicts = append(conflicts, Conflict{rel, "its earlier content was not kept (larger than max_file_bytes, or unreadable)"})
			continue
		}
		if !cur.same(p.expect[rel]) {
			conflicts = append(conflicts, Conflict{rel, changedSince(cur, p.expect[rel], p.last[rel])})
			if !force {
				continue
			}
		}
		if cur.same(want) {
			continue
		}
		if cur.Exists && cur.Hash == "" {
			conflicts = append(conflicts, Conflict{rel, "its present content cannot be kept to undo the rewind (larger than max_file_bytes, or not a file)"})
			continue
		}
		ops = append(ops, Change{Path: rel, Before: cur, After: want})
	}
	return ops, conflicts
}

// existingDirs is those of dirs that are still directories, for the
// rewind to remove.
func (s *Store) existingDirs(dirs map[string]bool) []string {
	var out []string
	for d := range dirs {
		if fi, err := os.Lstat(s.abs(d)); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// changedSince says how cur differs from what the agent left.
func changedSince(cur, left State, turn int) string {
	switch {
	case !cur.Exists:
		return fmt.Sprintf("deleted since turn %d changed it", turn)
	case !left.Exists:
		return fmt.Sprintf("created since turn %d deleted it", turn)
	}
	return fmt.Sprintf("changed since turn %d changed it", turn)
}

// Undo undoes the last rewind not undone: every path it changed goes back
// to the state it found, unless changed since (then a conflict, as for a
// rewind).
func (s *Store) Undo(force bool) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.rewinds) - 1
	for i >= 0 && s.rewinds[i].Undone {
		i--
	}
	if i < 0 {
		return Result{}, ErrNoRewind
	}
	r := s.rewinds[i]
	var ops []Change
	var conflicts []Conflict
	for _, c := range r.Replaced {
		cur, err := s.capture(c.Path)
		if err != nil {
			conflicts = append(conflicts, Conflict{c.Path, "unreadable: " + err.Error()})
			continue
		}
		if !cur.same(c.After) {
			conflicts = append(conflicts, Conflict{c.Path, "changed since the rewind"})
			if !force {
				continue
			}
		}
		if !cur.same(c.Before) {
			ops = append(ops, Change{Path: c.Path, Before: cur, After: c.Before})
		}
	}
	if len(conflicts) > 0 && !force {
		return Result{Conflicts: conflicts, Undo: true}, nil
	}
	res, err := s.apply(&journal{Undo: true, Index: i, Ops: ops})
	res.Conflicts = conflicts
	return res, err
}

// apply carries out j: journal first, then each file, then the records.
func (s *Store) apply(j *journal) (Result, error) {
	if err := writeJSON(s.journalPath(), j); err != nil {
		return Result{}, err
	}
	return s.finish(j)
}

// finish does j's file operations (each one idempotent: a path already
// in its state is left alone) and records it.
func (s *Store) finish(j *journal) (Result, error) {
	res := Result{Rewound: true, Undo: j.Undo}
	for i, op := range j.Ops {
		if i == crashAfter {
			return res, errCrash
		}
		if err := s.put(op.Path, op.After); err != nil {
			return res, fmt.Errorf("checkpoint: restore %s: %w (the rewind is finished at the next start)", op.Path, err)
		}
		if op.After.Exists {
			res.Restored = append(res.Restored, op.Path)
		} else {
			res.Removed = append(res.Removed, op.Path)
		}
		s.reindex(op.Path, op.After)
	}
	var r *Rewind
	if j.Undo {
		r = s.rewinds[j.Index]
		r.Undone = true
		res.Turns, res.Extra = r.Turns, r.Extra
		if r.Files {
			s.setRewound(r.Turns, false)
		}
	} else {
		r = j.Record
		// The turns' directories, deepest first, when empty.
		sort.Slice(r.Dirs, func(a, b int) bool { return strings.Count(r.Dirs[a], "/") > strings.Count(r.Dirs[b], "/") })
		var removed []string
		for _, d := range r.Dirs {
			if os.Remove(s.abs(d)) == nil {
				removed = append(removed, d)
				delete(s.index, d)
			}
		}
		r.Dirs = removed
		res.Turns, res.Extra = r.Turns, r.Extra
		if r.Files {
			s.setRewound(r.Turns, true)
		}
		s.rewinds = append(s.rewinds, r)
	}
	if err := s.saveTurns(); err != nil {
		return res, err
	}
	if err := writeJSON(filepath.Join(s.dir, "rewinds.json"), s.rewinds); err != nil {
		return res, err
	}
	if err := os.Remove(s.journalPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	return res, nil
}

func (s *Store) setRewound(turns []int, v bool) {
	for _, t := range s.turns {
		for _, n := range turns {
			if t.N == n {
				t.Rewound = v
			}
		}
	}
}

// Recover finishes a rewind a crash interrupted, if there is one: nil
// when there is none.
func (s *Store) Recover() (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var j journal
	b, err := os.ReadFile(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the interrupted rewind's journal: %w", err)
	}
	if j.Undo && (j.Index < 0 || j.Index >= len(s.rewinds)) || !j.Undo && j.Record == nil {
		return nil, fmt.Errorf("checkpoint: the interrupted rewind's journal names no rewind")
	}
	res, err := s.finish(&j)
	res.Recovered = true
	return &res, err
}

// put brings rel to state st: removed, or written whole beside it and
// renamed over it (a crash leaves the old file or the new one, and at
// worst the side file, which the next put removes).
func (s *Store) put(rel string, st State) error {
	p := s.abs(rel)
	side := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".zeroclaw-rewind")
	os.Remove(side)
	if cur, err := s.capture(rel); err == nil && cur.same(st) {
		return nil
	}
	if !st.Exists {
		err := os.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	data, err := s.obj.get(st.Hash)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if st.Mode&fs.ModeSymlink != 0 {
		if err := os.Symlink(string(data), side); err != nil {
			return err
		}
		return os.Rename(side, p)
	}
	f, err := os.OpenFile(side, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(st.Mode.Perm())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(side, p)
	}
	if err != nil {
		os.Remove(side)
	}
	return err
}
