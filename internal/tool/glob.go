package tool

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// maxIgnoreFile bounds the bytes of a .gitignore glob reads.
const maxIgnoreFile = 1 << 20

// globArgs are glob's arguments.
type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"pattern, relative to path: *, ?, [abc], {a,b}, ** for any directories"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search from, relative to the session directory (default: the session directory)"`
}

type glob struct{ takes[globArgs] }

func (t glob) Spec() Spec {
	return Spec{Name: "glob", Guide: "Find files by name with glob (**/*.go).",
		Description: "Find files by name pattern (** matches any number of directories, e.g. **/*.go); prints paths relative to the session directory, newest first, at most 1000. Skips what .gitignore ignores, and .git and node_modules.",
		Schema:      t.schema()}
}
func (glob) Asks() bool   { return false }
func (glob) Kind() string { return protocol.KindSearch }
func (t glob) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Find " + a.Pattern
}
func (t glob) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	pattern := strings.TrimPrefix(filepath.ToSlash(a.Pattern), "./")
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return errorf("pattern %q is not a valid glob pattern", a.Pattern)
	}
	pl, start, fi, err := placeAt(env, a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer pl.close()
	if !fi.IsDir() {
		return errorf("%s is not a directory", a.Path)
	}
	type found struct {
		rel   string
		mtime time.Time
	}
	var out []found
	walkErr := walkFiles(ctx, env, pl, start, func(name, rel, under string, d fs.DirEntry) error {
		if ok, _ := doublestar.Match(pattern, under); !ok {
			return nil
		}
		var mtime time.Time
		if fi, err := d.Info(); err == nil {
			mtime = fi.ModTime()
		}
		out = append(out, found{rel, mtime})
		return nil
	})
	if walkErr != nil {
		return errorf("%v", walkErr)
	}
	if len(out) == 0 {
		return Result{Output: "no files match " + a.Pattern}
	}
	slices.SortFunc(out, func(x, y found) int {
		return cmp.Or(y.mtime.Compare(x.mtime), strings.Compare(x.rel, y.rel))
	})
	var b strings.Builder
	for i, f := range out {
		if i == maxEntries {
			fmt.Fprintf(&b, "[%d more not shown: narrow the pattern or the path]\n", len(out)-maxEntries)
			break
		}
		b.WriteString(f.rel + "\n")
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}
}

// placeAt opens the session's place and names arg (a path argument) in
// it, which must exist: where the walking tools start. The caller closes
// the place.
func placeAt(env *Env, arg string) (*place, string, fs.FileInfo, error) {
	pl, err := openPlace(env)
	if err != nil {
		return nil, "", nil, err
	}
	start, err := pl.name(arg)
	if err != nil {
		pl.close()
		return nil, "", nil, err
	}
	fi, err := pl.stat(start)
	if err != nil {
		err = pl.explain(arg, err)
		pl.close()
		return nil, "", nil, err
	}
	return pl, start, fi, nil
}

// parts splits a slash path into its names ("." is none).
func parts(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// readIgnoreFile reads the patterns of a .gitignore (a regular file, at
// most maxIgnoreFile bytes; anything else reads as none).
func readIgnoreFile(pl *place, name string) []string {
	f, _, err := pl.openRegular(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreFile))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line != "" && !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	return lines // a line over the scanner's 64 KiB ends the file
}

// walkFiles walks what is under start (a name in pl; a file is walked
// as itself) and calls visit for each file: its name in pl, its path
// relative to the session directory and to start (slashes on every
// platform). It skips what .gitignore files ignore (the session
// directory's down to start, and those met on the way, with git's
// rules), .git, node_modules, .hg and .svn. An unreadable entry is
// skipped; visit returning filepath.SkipAll ends the walk early.
func walkFiles(ctx context.Context, env *Env, pl *place, start string, visit func(name, rel, under string, d fs.DirEntry) error) error {
	fsys, root := pl.fsys(start)
	// Patterns for paths relative to the walk's root: "." (unconfined:
	// the start) or the session directory (confined).
	var ignores []gitignore.Pattern
	addIgnores := func(dir string) {
		name := pl.join(start, path.Join(dir, ".gitignore"))
		for _, line := range readIgnoreFile(pl, name) {
			ignores = append(ignores, gitignore.ParsePattern(line, parts(dir)))
		}
	}
	if pl.root != nil && root != "." {
		for d, dirs := ".", parts(path.Dir(root)); ; d, dirs = path.Join(d, dirs[0]), dirs[1:] {
			addIgnores(d)
			if len(dirs) == 0 {
				break
			}
		}
	}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p != root && gitignore.NewMatcher(ignores).Match(parts(p), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".hg", ".svn":
				if p != root {
					return filepath.SkipDir
				}
			}
			addIgnores(p)
			return nil
		}
		under := p
		if root != "." {
			under = strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		}
		name := pl.join(start, p)
		rel := name
		if pl.root == nil {
			rel, _ = filepath.Rel(env.Cwd, name)
		}
		return visit(name, filepath.ToSlash(rel), under, d)
	})
	if errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}
