package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

const (
	maxRead    = 256 << 10 // bytes of a file read_file returns
	maxMatches = 200       // lines search returns
	maxEntries = 1000      // entries list_dir returns
)

// resolve turns a tool's path argument into an absolute path; with confine
// it must stay inside cwd, symlinks followed.
func resolve(env *Env, p string) (string, error) {
	if p == "" {
		p = "."
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(env.Cwd, p)
	}
	abs = filepath.Clean(abs)
	if !env.Confine {
		return abs, nil
	}
	root, err := filepath.EvalSymlinks(env.Cwd)
	if err != nil {
		return "", fmt.Errorf("session directory: %v", err)
	}
	// Follow symlinks of the longest part of the path that exists.
	real, rest := abs, ""
	for {
		r, err := filepath.EvalSymlinks(real)
		if err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(real)
		if parent == real {
			break
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = parent
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is outside the session directory %s", p, env.Cwd)
	}
	return abs, nil
}

func pathArg(input json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	json.Unmarshal(input, &a)
	return a.Path
}

type readFile struct{}

func (readFile) Spec() Spec {
	return Spec{Name: "read_file", Description: "Read a text file (path relative to the session directory). Returns at most 256 KiB.",
		Schema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"file path, relative to the session directory"}},"required":["path"]}`)}
}
func (readFile) Asks() bool                           { return false }
func (readFile) Summary(input json.RawMessage) string { return "Read " + pathArg(input) }
func (readFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Path string `json:"path"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	if a.Path == "" {
		return errorf("path is required")
	}
	p, err := resolve(env, a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	f, err := os.Open(p)
	if err != nil {
		return errorf("%v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return errorf("%s is a directory: use list_dir", a.Path)
	}
	buf := make([]byte, maxRead+1)
	n, _ := fullRead(f, buf)
	out := string(buf[:min(n, maxRead)])
	if n > maxRead {
		out += fmt.Sprintf("\n[truncated: only the first %d bytes are shown]", maxRead)
	}
	return Result{Output: out}
}

func fullRead(f *os.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

type listDir struct{}

func (listDir) Spec() Spec {
	return Spec{Name: "list_dir", Description: "List a directory (default: the session directory). Directories end in /.",
		Schema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"directory, relative to the session directory"}}}`)}
}
func (listDir) Asks() bool                           { return false }
func (listDir) Summary(input json.RawMessage) string { return "List " + pathArg(input) }
func (listDir) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Path string `json:"path"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	p, err := resolve(env, a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return errorf("%v", err)
	}
	var b strings.Builder
	for i, e := range ents {
		if i == maxEntries {
			fmt.Fprintf(&b, "[%d more entries not shown]\n", len(ents)-maxEntries)
			break
		}
		b.WriteString(e.Name())
		if e.IsDir() {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	if len(ents) == 0 {
		return Result{Output: "(empty directory)"}
	}
	return Result{Output: strings.TrimSuffix(b.String(), "\n")}
}

type search struct{}

func (search) Spec() Spec {
	return Spec{Name: "search", Description: "Search files for a regular expression (Go syntax); prints file:line: text for each match, at most 200.",
		Schema: schema(`{"type":"object","properties":{"pattern":{"type":"string","description":"regular expression"},"path":{"type":"string","description":"file or directory to search, relative to the session directory"}},"required":["pattern"]}`)}
}
func (search) Asks() bool { return false }
func (search) Summary(input json.RawMessage) string {
	var a struct{ Pattern string }
	json.Unmarshal(input, &a)
	return "Search for " + a.Pattern
}
func (search) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil || a.Pattern == "" {
		return errorf("pattern: %v", err)
	}
	root, err := resolve(env, a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	var out []string
	full := false
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", ".hg", ".svn":
				if p != root {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return nil // unreadable or binary
		}
		rel, _ := filepath.Rel(env.Cwd, p)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if re.Match(sc.Bytes()) {
				if len(out) == maxMatches {
					full = true
					return filepath.SkipAll
				}
				line := sc.Text()
				if len(line) > 300 {
					line = line[:300] + "..."
				}
				out = append(out, fmt.Sprintf("%s:%d: %s", rel, n, line))
			}
		}
		return nil
	})
	if walkErr != nil && !errors.Is(walkErr, filepath.SkipAll) {
		return errorf("%v", walkErr)
	}
	if len(out) == 0 {
		return Result{Output: "no matches"}
	}
	s := strings.Join(out, "\n")
	if full {
		s += fmt.Sprintf("\n[stopped after %d matches]", maxMatches)
	}
	return Result{Output: s}
}

type writeFile struct{}

func (writeFile) Spec() Spec {
	return Spec{Name: "write_file", Description: "Write a file (creating it and its directories, replacing it if it exists).",
		Schema: schema(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)}
}
func (writeFile) Asks() bool { return true }
func (writeFile) Summary(input json.RawMessage) string {
	var a struct{ Path, Content string }
	json.Unmarshal(input, &a)
	return fmt.Sprintf("Write %s (%d bytes)", a.Path, len(a.Content))
}
func (writeFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Path    *string `json:"path"`
		Content *string `json:"content"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	if a.Path == nil || *a.Path == "" || a.Content == nil {
		return errorf("path and content are required")
	}
	p, err := resolve(env, *a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return errorf("%v", err)
	}
	if err := atomicWrite(p, []byte(*a.Content)); err != nil {
		return errorf("%v", err)
	}
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", len(*a.Content), *a.Path)}
}

// atomicWrite replaces p through a temporary file, keeping p's mode.
func atomicWrite(p string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

type editFile struct{}

func (editFile) Spec() Spec {
	return Spec{Name: "edit_file", Description: "Replace the one exact occurrence of old with new in a file.",
		Schema: schema(`{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string","description":"exact text to replace; must occur exactly once"},"new":{"type":"string"}},"required":["path","old","new"]}`)}
}
func (editFile) Asks() bool                           { return true }
func (editFile) Summary(input json.RawMessage) string { return "Edit " + pathArg(input) }
func (editFile) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Path string  `json:"path"`
		Old  string  `json:"old"`
		New  *string `json:"new"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	if a.Path == "" || a.Old == "" || a.New == nil {
		return errorf("path, old and new are required (old must not be empty)")
	}
	p, err := resolve(env, a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return errorf("%v", err)
	}
	switch n := strings.Count(string(data), a.Old); n {
	case 1:
	case 0:
		return errorf("old text not found in %s", a.Path)
	default:
		return errorf("old text occurs %d times in %s; give more context so it is unique", n, a.Path)
	}
	if err := atomicWrite(p, []byte(strings.Replace(string(data), a.Old, *a.New, 1))); err != nil {
		return errorf("%v", err)
	}
	return Result{Output: "edited " + a.Path}
}

func init() {
	for _, t := range []Tool{readFile{}, listDir{}, search{}, writeFile{}, editFile{}} {
		register(t)
	}
}
