package checkpoint

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// stamp is what a stat says of an entry: enough to tell that it changed
// without reading it (size, modification time, mode).
type stamp struct {
	size  int64
	mtime int64 // ns
	mode  fs.FileMode
}

func stampOf(fi fs.FileInfo) stamp {
	return stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
}

// scanner walks the session's directory as the checkpoints see it: files,
// symbolic links and directories, less what Options.Exclude and the
// .gitignore files (git's rules) leave out.
type scanner struct {
	root    string
	exclude []gitignore.Pattern
}

func newScanner(root string, exclude []string) *scanner {
	s := &scanner{root: root}
	for _, e := range exclude {
		s.exclude = append(s.exclude, gitignore.ParsePattern(e, nil))
	}
	return s
}

// scan stats every entry under the root that is not left out and gives
// it to visit, by its path relative to the root (slashes).
func (sc *scanner) scan(visit func(rel string, st stamp)) {
	sc.walk(".", nil, sc.exclude, visit)
}

// walk scans dir (relative to the root; its names in parts), under the
// patterns that apply to it.
func (sc *scanner) walk(dir string, parts []string, patterns []gitignore.Pattern, visit func(string, stamp)) {
	abs := filepath.Join(sc.root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		return // unreadable: nothing under it is seen
	}
	// This directory's .gitignore applies below it.
	for _, e := range entries {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			patterns = append(patterns[:len(patterns):len(patterns)], readIgnore(filepath.Join(abs, ".gitignore"), parts)...)
			break
		}
	}
	var m gitignore.Matcher
	if len(patterns) > 0 {
		m = gitignore.NewMatcher(patterns)
	}
	child := make([]string, len(parts)+1)
	copy(child, parts)
	for _, e := range entries {
		name := e.Name()
		child[len(parts)] = name
		isDir := e.IsDir()
		if m != nil && m.Match(child, isDir) {
			continue
		}
		rel := name
		if dir != "." {
			rel = dir + "/" + name
		}
		typ := e.Type()
		if !isDir && !typ.IsRegular() && typ&fs.ModeSymlink == 0 {
			continue // devices, pipes, sockets: not files to keep
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone since the directory was read
		}
		visit(rel, stampOf(fi))
		if isDir {
			sc.walk(rel, append([]string(nil), child...), patterns, visit)
		}
	}
}

// excluded says whether rel (a path relative to the root) is left out:
// by Options.Exclude, or by a .gitignore on its way.
func (sc *scanner) excluded(rel string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	patterns := append(sc.exclude[:len(sc.exclude):len(sc.exclude)], readIgnore(filepath.Join(sc.root, ".gitignore"), nil)...)
	for i := range parts {
		last := i == len(parts)-1
		if len(patterns) > 0 && gitignore.NewMatcher(patterns).Match(parts[:i+1], isDir || !last) {
			return true
		}
		if !last {
			dir := filepath.Join(sc.root, filepath.FromSlash(strings.Join(parts[:i+1], "/")))
			patterns = append(patterns, readIgnore(filepath.Join(dir, ".gitignore"), parts[:i+1])...)
		}
	}
	return false
}

// readIgnore reads a .gitignore's patterns (a regular file, at most
// 1 MiB; anything else reads as none), for paths under domain.
func readIgnore(p string, domain []string) []gitignore.Pattern {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []gitignore.Pattern
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, gitignore.ParsePattern(line, append([]string(nil), domain...)))
		}
	}
	return out
}
