// Package checkpoint keeps what each agent turn changed in a session's
// directory, so any turn can be undone exactly, with or without git.
//
// Before a file tool writes, the file's state is captured (bytes, mode,
// existence); around a command (whose effects nobody can name) the
// directory is compared with an index kept incrementally by stat: a scan
// stats every entry, and only files whose stat changed are read. Contents
// go to a content-addressed object store in the session's checkpoint
// directory (files 0600), never to the user's own .git. A rewind restores
// files through a journal, each file replaced whole by a rename, so a
// crash leaves every file either as it was or as it is meant to be.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/atomicfile"
)

// Options bound what is captured.
type Options struct {
	// MaxFileBytes: larger files are not captured (the turn says so).
	MaxFileBytes int64
	// Exclude are gitignore-style patterns of paths not captured, beside
	// what the directory's .gitignore files ignore.
	Exclude []string
	// KeepTurns is how many turns' checkpoints are kept.
	KeepTurns int
}

// Defaults of Options.
const (
	DefaultMaxFileBytes = 10 << 20
	DefaultKeepTurns    = 100
)

// DefaultExclude is Options.Exclude's default.
var DefaultExclude = []string{".git/", "node_modules/"}

// State is a path's state: absent, or a file (or symbolic link) with its
// mode, size and content. Hash is "" for content not captured.
type State struct {
	Exists bool        `json:"exists"`
	Mode   fs.FileMode `json:"mode,omitempty"`
	Size   int64       `json:"size,omitempty"`
	Hash   string      `json:"hash,omitempty"`
}

// same says whether a and b are the same state.
func (a State) same(b State) bool {
	if a.Exists != b.Exists {
		return false
	}
	return !a.Exists || (a.Mode == b.Mode && a.Size == b.Size && a.Hash == b.Hash)
}

// Change is what a turn did to one path: its state before the turn first
// changed it, and after.
type Change struct {
	Path   string `json:"path"`
	Before State  `json:"before"`
	After  State  `json:"after"`
}

// Kind is the change as the wire names it: created, modified or deleted.
func (c Change) Kind() string {
	switch {
	case !c.Before.Exists:
		return "created"
	case !c.After.Exists:
		return "deleted"
	}
	return "modified"
}

// Turn is one turn's checkpoint.
type Turn struct {
	N     int    `json:"turn"`
	Title string `json:"title"`
	// Seq is the seq of the turn's user_message; Messages the length of
	// the transcript when it started (where a conversation rewind cuts).
	Seq       int64    `json:"seq"`
	Messages  int      `json:"messages"`
	StartedMs int64    `json:"startedMs"`
	Changes   []Change `json:"changes"`
	// Uncaptured are changed paths whose content could not be kept
	// (too big, excluded, outside the directory, unreadable).
	Uncaptured []string `json:"uncaptured,omitempty"`
	// Dirs are the directories the turn created.
	Dirs    []string `json:"dirs,omitempty"`
	Rewound bool     `json:"rewound,omitempty"`
}

// entry is the index's knowledge of a path; gen is the scan that last
// saw it.
type entry struct {
	st    stamp
	state State
	gen   uint32
}

// Store is one session's checkpoints.
type Store struct {
	root string // the session's directory
	dir  string // where the checkpoints live
	obj  *objects
	opt  Options
	sc   *scanner

	mu    sync.Mutex
	index map[string]*entry // nil until the first scan
	gen   uint32
	turns []*Turn
	// rewinds are the rewinds done, the last one undoable.
	rewinds []*Rewind
	cur     *open // the turn being recorded
}

// open is the turn being recorded.
type open struct {
	turn    *Turn
	changes map[string]*Change
	order   []string
	uncap   map[string]bool
	skip    map[string]bool // named by a file tool, but excluded
	dirs    map[string]bool
	fresh   bool // the index was brought up to date since the turn began
	// scanned is closed when the scan the turn began with is done (nil:
	// none was started).
	scanned chan struct{}
}

// Open opens (creating it) the checkpoint directory dir of a session
// working in root.
func Open(dir, root string, opt Options) (*Store, error) {
	if opt.MaxFileBytes <= 0 {
		opt.MaxFileBytes = DefaultMaxFileBytes
	}
	if opt.KeepTurns <= 0 {
		opt.KeepTurns = DefaultKeepTurns
	}
	if opt.Exclude == nil {
		opt.Exclude = DefaultExclude
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	obj := newObjects(filepath.Join(dir, "objects"))
	s := &Store{root: filepath.Clean(root), dir: dir, obj: &obj, opt: opt, sc: newScanner(root, opt.Exclude)}
	if err := readJSON(filepath.Join(dir, "turns.json"), &s.turns); err != nil {
		return nil, err
	}
	if err := readJSON(filepath.Join(dir, "rewinds.json"), &s.rewinds); err != nil {
		return nil, err
	}
	return s, nil
}

// NextTurn is the number the next turn gets.
func (s *Store) NextTurn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) == 0 {
		return 1
	}
	return s.turns[len(s.turns)-1].N + 1
}

// Turns lists the kept turns' checkpoints, oldest first.
func (s *Store) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Turn, len(s.turns))
	for i, t := range s.turns {
		out[i] = *t
	}
	return out
}

// Begin starts recording turn n. When the directory has an index (a
// command ran in an earlier turn), it is brought up to date in the
// background, beside the turn's first model call, so that what changed
// since (the person's own edits) is not the turn's and a command costs
// one scan, after it. With claimGap what changed since is the turn's
// (the agent's background processes ran meanwhile: their changes cannot
// be told from the person's, and are kept so a rewind undoes them).
func (s *Store) Begin(n int, title string, seq int64, messages int, claimGap bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &open{turn: &Turn{N: n, Title: title, Seq: seq, Messages: messages, StartedMs: time.Now().UnixMilli()},
		changes: map[string]*Change{}, uncap: map[string]bool{}, skip: map[string]bool{}, dirs: map[string]bool{}}
	s.cur = o
	if s.index != nil {
		o.scanned = make(chan struct{})
		go func() {
			defer close(o.scanned)
			s.mu.Lock()
			defer s.mu.Unlock()
			if claimGap {
				s.refresh(o)
			} else {
				s.refresh(nil)
			}
			o.fresh = true
		}()
	}
}

// settled waits for the turn's first scan, if one runs.
func (s *Store) settled() *open {
	s.mu.Lock()
	o := s.cur
	s.mu.Unlock()
	if o != nil && o.scanned != nil {
		<-o.scanned
	}
	return o
}

// rel names p (absolute or relative to the root) relative to the root;
// false when it is outside.
func (s *Store) rel(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, p)
	}
	r, err := filepath.Rel(s.root, filepath.Clean(p))
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (s *Store) abs(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

// Changing is called before a tool call that may change paths (the file
// tools name theirs) or anything (commands): their state is captured.
func (s *Store) Changing(paths []string, anything bool) {
	if s.settled() == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.cur
	if o == nil {
		return
	}
	for _, p := range paths {
		rel, ok := s.rel(p)
		if !ok {
			continue // outside: said after the call, if it changed
		}
		if _, seen := o.changes[rel]; seen || o.skip[rel] {
			continue
		}
		if s.sc.excluded(rel, false) {
			o.skip[rel] = true
			continue
		}
		st, _ := s.capture(rel)
		o.changes[rel] = &Change{Path: rel, Before: st}
		o.order = append(o.order, rel)
		// Directories the write will create.
		for d := filepath.ToSlash(filepath.Dir(filepath.FromSlash(rel))); d != "."; d = filepath.ToSlash(filepath.Dir(filepath.FromSlash(d))) {
			if _, err := os.Lstat(s.abs(d)); err == nil {
				break
			}
			o.dirs[d] = true
		}
	}
	if anything && (s.index == nil || !o.fresh) {
		// The directory as it is before the command: what changed since
		// the last scan (the person's own edits) is not the turn's.
		s.refresh(nil)
		o.fresh = true
	}
}

// Changed is called after the call Changing was: what it changed is
// recorded.
func (s *Store) Changed(paths []string, anything bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.cur
	if o == nil {
		return
	}
	for _, p := range paths {
		rel, ok := s.rel(p)
		if !ok {
			if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
				o.uncap[p] = true // outside the directory: not kept
			}
			continue
		}
		if o.skip[rel] {
			o.uncap[rel] = true // excluded: its change is not kept
			continue
		}
		c := o.changes[rel]
		if c == nil {
			continue
		}
		c.After, _ = s.capture(rel)
		s.reindex(rel, c.After)
	}
	if anything {
		s.refresh(o)
	}
}

// refresh scans the directory and brings the index up to date; changes
// found are recorded in o (nil: they are nobody's). Only entries whose
// stat changed are read.
func (s *Store) refresh(o *open) {
	baseline := s.index == nil
	if baseline {
		// The first scan keeps every file: into one pack.
		s.index = make(map[string]*entry, 1024)
		if err := s.obj.batch(); err == nil {
			defer s.obj.done()
		}
		o = nil
	}
	s.gen++
	gen := s.gen
	s.sc.scan(func(rel string, st stamp) {
		e := s.index[rel]
		if e != nil && e.st == st {
			e.gen = gen
			return
		}
		known := e != nil
		if !known {
			e = &entry{}
			s.index[rel] = e
		}
		before := e.state
		if st.mode.IsDir() {
			e.st, e.state, e.gen = st, State{Exists: true, Mode: st.mode}, gen
			if o != nil && !known {
				o.dirs[rel] = true
			}
			return
		}
		state, _ := s.captureStamp(rel, st)
		e.st, e.state, e.gen = st, state, gen
		if o != nil {
			s.note(o, rel, before, state)
		}
	})
	for rel, e := range s.index {
		if e.gen == gen {
			continue
		}
		delete(s.index, rel)
		if o != nil && !e.st.mode.IsDir() {
			s.note(o, rel, e.state, State{})
		}
	}
}

// reindex sets rel's index entry to st, as it is on disk now (a file
// tool wrote it, a rewind restored it).
func (s *Store) reindex(rel string, st State) {
	if s.index == nil {
		return
	}
	fi, err := os.Lstat(s.abs(rel))
	if err != nil {
		delete(s.index, rel)
		return
	}
	s.index[rel] = &entry{st: stampOf(fi), state: st, gen: s.gen}
}

// note records that a scan found rel changed from before to after.
func (s *Store) note(o *open, rel string, before, after State) {
	c := o.changes[rel]
	if c == nil {
		c = &Change{Path: rel, Before: before}
		o.changes[rel] = c
		o.order = append(o.order, rel)
	}
	c.After = after
}

// capture reads rel's state, keeping its content.
func (s *Store) capture(rel string) (State, error) {
	fi, err := os.Lstat(s.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	if fi.IsDir() {
		return State{Exists: true, Mode: fi.Mode()}, nil
	}
	return s.captureStamp(rel, stampOf(fi))
}

// captureStamp keeps rel's content, which stat gave st; a file too big
// (or unreadable) has no hash.
func (s *Store) captureStamp(rel string, st stamp) (State, error) {
	state := State{Exists: true, Mode: st.mode, Size: st.size}
	var b []byte
	switch {
	case st.mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(s.abs(rel))
		if err != nil {
			return state, err
		}
		b = []byte(target)
	case !st.mode.IsRegular() || st.size > s.opt.MaxFileBytes:
		return state, nil
	default:
		var ok bool
		var err error
		b, ok, err = readCapped(s.abs(rel), s.opt.MaxFileBytes)
		if err != nil || !ok {
			return state, err
		}
		state.Size = int64(len(b))
	}
	hash, err := s.obj.put(b)
	if err != nil {
		return state, err
	}
	state.Hash = hash
	return state, nil
}

// End ends the turn being recorded and keeps its checkpoint: the paths
// whose state came back to what it was are left out.
func (s *Store) End() (*Turn, error) {
	s.settled()
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.cur
	s.cur = nil
	if o == nil {
		return nil, nil
	}
	t := o.turn
	for _, rel := range o.order {
		c := o.changes[rel]
		if c.Before.same(c.After) {
			continue
		}
		if (c.Before.Exists && c.Before.Hash == "" && !c.Before.Mode.IsDir()) || (c.After.Exists && c.After.Hash == "" && !c.After.Mode.IsDir()) {
			o.uncap[rel] = true
		}
		if c.Before.Mode.IsDir() || c.After.Mode.IsDir() {
			continue
		}
		t.Changes = append(t.Changes, *c)
	}
	for p := range o.uncap {
		t.Uncaptured = append(t.Uncaptured, p)
	}
	sort.Strings(t.Uncaptured)
	for d := range o.dirs {
		if fi, err := os.Lstat(s.abs(d)); err == nil && fi.IsDir() {
			t.Dirs = append(t.Dirs, d)
		}
	}
	sort.Strings(t.Dirs)
	s.turns = append(s.turns, t)
	if len(s.turns) > s.opt.KeepTurns {
		s.turns = slices.Clone(s.turns[len(s.turns)-s.opt.KeepTurns:])
		s.prune()
	}
	return t, s.saveTurns()
}

// prune removes the objects no kept turn, rewind or index entry names.
func (s *Store) prune() {
	keep := map[string]bool{}
	for _, t := range s.turns {
		for _, c := range t.Changes {
			keep[c.Before.Hash], keep[c.After.Hash] = true, true
		}
	}
	for _, r := range s.rewinds {
		for _, c := range r.Replaced {
			keep[c.Before.Hash], keep[c.After.Hash] = true, true
		}
		for _, h := range r.Objects {
			keep[h] = true
		}
	}
	for _, e := range s.index {
		keep[e.state.Hash] = true
	}
	s.obj.prune(keep)
}

func (s *Store) saveTurns() error { return writeJSON(filepath.Join(s.dir, "turns.json"), s.turns) }

// readJSON reads a JSON file into v; a file that is not there leaves v.
func readJSON(p string, v any) error {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %s: %w", filepath.Base(p), err)
	}
	return nil
}

// writeJSON replaces a file with v's JSON, whole (written aside, synced,
// renamed).
func writeJSON(p string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(p, b, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// hashOf is the name content b is stored under.
func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Remove deletes the checkpoints (the session is deleted).
func (s *Store) Remove() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return os.RemoveAll(s.dir)
}

// Keep stores b with the checkpoints' objects (for a rewind's Extra).
func (s *Store) Keep(b []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.obj.put(b)
}

// Kept reads what Keep stored.
func (s *Store) Kept(hash string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.obj.get(hash)
}
