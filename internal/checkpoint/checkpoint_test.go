package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// file is what a test sees of a path: its bytes, mode and mtime.
type file struct {
	data  string
	mode  fs.FileMode
	mtime time.Time
}

// snapshot reads every file and directory under root (skipping skip).
func snapshot(t *testing.T, root string, skip ...string) map[string]file {
	t.Helper()
	out := map[string]file{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		fi, _ := d.Info()
		f := file{mode: fi.Mode(), mtime: fi.ModTime()}
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			f.data = string(b)
		}
		if fi.IsDir() {
			f.mtime = time.Time{} // a directory's mtime moves with its entries
		}
		out[filepath.ToSlash(rel)] = f
		return nil
	})
	return out
}

func same(t *testing.T, what string, got, want map[string]file) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: %s is missing", what, p)
		case g.data != w.data || g.mode != w.mode:
			t.Errorf("%s: %s is %q %v, want %q %v", what, p, g.data, g.mode, w.data, w.mode)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not be there", what, p)
		}
	}
}

func write(t *testing.T, root, rel, data string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
}

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if runtime.GOOS == "windows" {
		cmd = exec.Command("cmd", "/d", "/s", "/c", script)
	}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

// tree makes the directory the tests start from.
func tree(t *testing.T) string {
	root := testdir.New(t)
	write(t, root, "a.txt", "alpha\n", 0o644)
	write(t, root, "run.sh", "echo run\n", 0o644)
	write(t, root, "sub/c.txt", "gamma\n", 0o644)
	write(t, root, "d.txt", "delta\n", 0o600)
	write(t, root, "keep.txt", "untouched\n", 0o644)
	write(t, root, ".gitignore", "*.log\n", 0o644)
	write(t, root, "node_modules/m/index.js", "module\n", 0o644)
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	os.Chtimes(filepath.Join(root, "keep.txt"), old, old)
	return root
}

func openStore(t *testing.T, root string) *Store {
	t.Helper()
	s, err := Open(filepath.Join(testdir.New(t), "cp"), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A file tool's write, then a command through sh -c.
func turn(t *testing.T, s *Store, n int, root string, tool map[string]string, script string) *Turn {
	t.Helper()
	s.Begin(n, "turn", int64(n), n, false)
	for rel, data := range tool {
		p := filepath.Join(root, rel)
		s.Changing([]string{p}, false)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
		s.Changed([]string{p}, false)
	}
	if script != "" {
		s.Changing(nil, true)
		sh(t, root, script)
		s.Changed(nil, true)
	}
	tr, err := s.End()
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestRewindUndoesToolsAndCommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh, chmod and mv: a POSIX shell")
	}
	root := tree(t)
	before := snapshot(t, root)
	s := openStore(t, root)
	tr := turn(t, s, 1, root, map[string]string{"a.txt": "ALPHA\n", "made/by/tool.txt": "new\n"},
		"echo created > new.txt && rm sub/c.txt && chmod +x run.sh && mv d.txt e.txt && mkdir -p dir/deep && echo x > dir/deep/f && echo log > x.log && echo m > node_modules/m/index.js")
	kinds := map[string]string{}
	for _, c := range tr.Changes {
		kinds[c.Path] = c.Kind()
	}
	want := map[string]string{"a.txt": "modified", "made/by/tool.txt": "created", "new.txt": "created", "sub/c.txt": "deleted",
		"run.sh": "modified", "d.txt": "deleted", "e.txt": "created", "dir/deep/f": "created"}
	if len(kinds) != len(want) {
		t.Errorf("changes %v, want %v", kinds, want)
	}
	for p, k := range want {
		if kinds[p] != k {
			t.Errorf("%s: %q, want %q (all: %v)", p, kinds[p], k, kinds)
		}
	}
	res, err := s.Rewind(1, RewindOptions{Files: true})
	if err != nil || !res.Rewound || len(res.Conflicts) != 0 {
		t.Fatalf("rewind: %+v %v", res, err)
	}
	after := snapshot(t, root)
	// What the excluded and ignored paths got stays: they are not the
	// checkpoints' (the turn does not say it could not capture them,
	// since a scan never sees them).
	delete(after, "x.log")
	b := before["node_modules/m/index.js"]
	b.data = "m\n"
	before["node_modules/m/index.js"] = b
	same(t, "after the rewind", after, before)
	if got, want := after["keep.txt"].mtime, before["keep.txt"].mtime; !got.Equal(want) {
		t.Errorf("an untouched file's mtime moved: %v, was %v", got, want)
	}
	if turns := s.Turns(); !turns[0].Rewound {
		t.Errorf("turn 1 is not marked rewound: %+v", turns[0])
	}
	// A second rewind to the same point finds nothing to do.
	if res, err := s.Rewind(1, RewindOptions{Files: true}); err != nil || len(res.Restored)+len(res.Removed) != 0 {
		t.Errorf("rewinding again: %+v %v", res, err)
	}
	// The rewind undone: the turn's work is back.
	res, err = s.Undo(false)
	if err != nil || !res.Rewound || !res.Undo {
		t.Fatalf("undo: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "dir/deep/f")); string(b) != "x\n" {
		t.Errorf("after undoing the rewind, dir/deep/f holds %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(root, "run.sh")); fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("after undoing the rewind run.sh is %v", fi.Mode())
	}
}

func TestTurnThatChangesNothing(t *testing.T) {
	root := tree(t)
	s := openStore(t, root)
	tr := turn(t, s, 1, root, nil, "echo nothing")
	if len(tr.Changes) != 0 {
		t.Fatalf("changes %+v", tr.Changes)
	}
	before := snapshot(t, root)
	if res, err := s.Rewind(1, RewindOptions{Files: true}); err != nil || len(res.Restored)+len(res.Removed)+len(res.Conflicts) != 0 {
		t.Fatalf("rewind of nothing: %+v %v", res, err)
	}
	same(t, "after rewinding nothing", snapshot(t, root), before)
}

// The person's own edits between turns are not the agent's: they are not
// undone, and a file they changed after the agent did is a conflict.
func TestConflictsAndForce(t *testing.T) {
	root := tree(t)
	s := openStore(t, root)
	turn(t, s, 1, root, map[string]string{"a.txt": "agent one\n"}, "")
	write(t, root, "keep.txt", "mine\n", 0o644) // the person's, between turns
	turn(t, s, 2, root, map[string]string{"a.txt": "agent two\n"}, "echo two> b.txt")
	write(t, root, "a.txt", "edited by hand\n", 0o644)
	before := snapshot(t, root)
	res, err := s.Rewind(1, RewindOptions{Files: true})
	if err != nil || res.Rewound || len(res.Conflicts) != 1 || res.Conflicts[0].Path != "a.txt" ||
		!strings.Contains(res.Conflicts[0].Reason, "changed since turn 2") {
		t.Fatalf("conflict: %+v %v", res, err)
	}
	same(t, "after a refused rewind", snapshot(t, root), before)
	res, err = s.Rewind(1, RewindOptions{Files: true, Force: true})
	if err != nil || !res.Rewound {
		t.Fatalf("forced: %+v %v", res, err)
	}
	for p, want := range map[string]string{"a.txt": "alpha\n", "keep.txt": "mine\n"} {
		if b, _ := os.ReadFile(filepath.Join(root, p)); string(b) != want {
			t.Errorf("%s holds %q after the forced rewind, want %q", p, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); err == nil {
		t.Error("b.txt, created by turn 2, is still there")
	}
	// Undoing it brings back the hand edit it overwrote.
	if res, err := s.Undo(false); err != nil || !res.Rewound {
		t.Fatalf("undo: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "edited by hand\n" {
		t.Errorf("undo gave back %q", b)
	}
}

// Inside a git repository the user's .git is never touched and git
// sees the same status before and after.
func TestInsideGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := tree(t)
	sh(t, root, "git init -q && git -c user.email=t@t -c user.name=t add -A && git -c user.email=t@t -c user.name=t commit -qm init && echo dirty >> keep.txt")
	status := func() string {
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = root
		out, _ := cmd.Output()
		return string(out)
	}
	gitBefore, statusBefore := snapshot(t, filepath.Join(root, ".git")), status()
	s := openStore(t, root)
	turn(t, s, 1, root, map[string]string{"a.txt": "changed\n"}, "git rm -q --cached d.txt >/dev/null; rm d.txt; echo n > n.txt")
	if res, err := s.Rewind(1, RewindOptions{Files: true}); err != nil || !res.Rewound {
		t.Fatalf("rewind: %+v %v", res, err)
	}
	// git rm changed the index (a command's effect on .git is not the
	// checkpoints'); put it back with git, then compare.
	sh(t, root, "git reset -q d.txt")
	if got := status(); got != statusBefore {
		t.Errorf("git status after the rewind:\n%s\nbefore:\n%s", got, statusBefore)
	}
	gitAfter := snapshot(t, filepath.Join(root, ".git"))
	for p, f := range gitBefore {
		if p == "index" || strings.HasPrefix(p, "logs") {
			continue // git reset rewrote them
		}
		if g, ok := gitAfter[p]; !ok || g.data != f.data {
			t.Errorf(".git/%s changed", p)
		}
	}
}

// A rewind stopped half way (a crash) is finished by the next Store:
// every file is either as it was or as it is meant to be, never torn.
func TestRecoverAnInterruptedRewind(t *testing.T) {
	root := tree(t)
	dir := filepath.Join(testdir.New(t), "cp")
	s, _ := Open(dir, root, Options{})
	before := snapshot(t, root)
	turn(t, s, 1, root, map[string]string{"a.txt": "1\n", "d.txt": "2\n", "sub/c.txt": "3\n", "z.txt": "4\n"}, "")
	crashAfter = 2
	_, err := s.Rewind(1, RewindOptions{Files: true, Extra: []byte(`{"cut":1}`)})
	crashAfter = -1
	if err != errCrash {
		t.Fatalf("the crash: %v", err)
	}
	mid := snapshot(t, root)
	for _, p := range []string{"a.txt", "d.txt", "sub/c.txt", "z.txt"} {
		if g := mid[p].data; g != before[p].data && g != map[string]string{"a.txt": "1\n", "d.txt": "2\n", "sub/c.txt": "3\n", "z.txt": "4\n"}[p] {
			t.Errorf("%s is torn: %q", p, g)
		}
	}
	s2, _ := Open(dir, root, Options{})
	res, err := s2.Recover()
	if err != nil || res == nil || !res.Recovered || string(res.Extra) != `{"cut":1}` || len(res.Turns) != 1 {
		t.Fatalf("recover: %+v %v", res, err)
	}
	same(t, "after recovery", snapshot(t, root), before)
	if res, err := s2.Recover(); res != nil || err != nil {
		t.Errorf("a second recovery: %+v %v", res, err)
	}
}

func TestDiff(t *testing.T) {
	root := tree(t)
	s := openStore(t, root)
	turn(t, s, 1, root, map[string]string{"a.txt": "alpha\nbeta\n", "n.txt": "new\n"}, "")
	d, err := s.Diff(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- a/a.txt\n+++ b/a.txt\n", "+beta\n", "new file mode 100644\n", "--- /dev/null\n+++ b/n.txt\n", "+new\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	turn(t, s, 2, root, map[string]string{"a.txt": "alpha\n"}, "")
	if d, _ := s.Diff(0); strings.Contains(d, "a.txt") || !strings.Contains(d, "n.txt") {
		t.Errorf("the session's diff (a.txt came back as it was):\n%s", d)
	}
	if _, err := s.Diff(9); err == nil {
		t.Error("a diff of no such turn")
	}
}

// The person's edits between turns are not the next turn's, even when
// the directory's index is older than them.
func TestEditsBetweenTurnsAreNotTheTurns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	root := tree(t)
	s := openStore(t, root)
	turn(t, s, 1, root, nil, "echo one > one.txt")
	write(t, root, "keep.txt", "edited by hand\n", 0o644)
	os.Remove(filepath.Join(root, "d.txt"))
	tr := turn(t, s, 2, root, nil, "echo two > two.txt")
	if len(tr.Changes) != 1 || tr.Changes[0].Path != "two.txt" {
		t.Errorf("turn 2's changes %+v", tr.Changes)
	}
	if res, err := s.Rewind(2, RewindOptions{Files: true}); err != nil || len(res.Removed) != 1 || len(res.Restored) != 0 {
		t.Errorf("rewind of turn 2: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "keep.txt")); string(b) != "edited by hand\n" {
		t.Errorf("the hand edit was undone: %q", b)
	}
}

// Past keep_turns the oldest checkpoints go, with their contents; a file
// over max_file_bytes is listed as not kept, and a rewind over it is a
// conflict until forced (which leaves it as it is).
func TestPruningAndUncaptured(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	root := tree(t)
	write(t, root, "big.bin", strings.Repeat("b", 100), 0o644)
	s, err := Open(filepath.Join(testdir.New(t), "cp"), root, Options{MaxFileBytes: 50, KeepTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	turn(t, s, 1, root, map[string]string{"a.txt": "one\n"}, "")
	turn(t, s, 2, root, map[string]string{"a.txt": "two\n"}, "")
	tr := turn(t, s, 3, root, nil, "echo more >> big.bin && echo x > small.txt")
	if len(tr.Uncaptured) != 1 || tr.Uncaptured[0] != "big.bin" {
		t.Errorf("uncaptured %v", tr.Uncaptured)
	}
	if turns := s.Turns(); len(turns) != 2 || turns[0].N != 2 {
		t.Fatalf("kept %+v", turns)
	}
	if _, err := s.Rewind(1, RewindOptions{Files: true}); !errors.Is(err, ErrPruned) {
		t.Errorf("a rewind to a pruned turn: %v", err)
	}
	res, err := s.Rewind(3, RewindOptions{Files: true})
	if err != nil || res.Rewound || len(res.Conflicts) != 1 || res.Conflicts[0].Path != "big.bin" {
		t.Fatalf("a rewind over an uncaptured file: %+v %v", res, err)
	}
	if res, err = s.Rewind(3, RewindOptions{Files: true, Force: true}); err != nil || !res.Rewound || len(res.Removed) != 1 {
		t.Fatalf("forced: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "big.bin")); len(b) != 105 {
		t.Errorf("big.bin holds %d bytes: it should be left as it is", len(b))
	}
	// Turn 1's contents went with it: a.txt's before it is no longer
	// kept (its after is turn 2's before, still kept).
	if s.obj.has(hashOf([]byte("alpha\n"))) || !s.obj.has(hashOf([]byte("one\n"))) {
		t.Error("a pruned turn's content is still kept")
	}
}
