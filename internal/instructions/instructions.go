// Package instructions composes what the model is told before a session's
// first message: the agent's instructions (its system_prompt, or a
// built-in default for its mode), the environment it works in (directory,
// platform, shell, date, git repository and branch), and the project's
// own instructions (AGENTS.md, else CLAUDE.md, in each directory from the
// repository's root down to the working directory).
package instructions

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Caps on the project instructions read into the prompt.
const (
	FileMax  = 16 << 10 // one file
	TotalMax = 32 << 10 // all of them
	// maxLevels bounds the walk up to the repository root.
	maxLevels = 32
)

// Names of project instruction files, by preference, in one directory.
var Names = []string{"AGENTS.md", "CLAUDE.md"}

// Options say what to compose.
type Options struct {
	// Base is the agent's system_prompt; empty means the built-in
	// default for Mode ("chat" or "code").
	Base string
	Mode string
	// Tools are the tools the agent has, in the order the default
	// prompt speaks of them.
	Tools []Tool
	Cwd   string
	// Shell is what the shell tool runs commands with (said when the
	// agent has it).
	Shell string
	Now   time.Time
}

// Tool is a tool the agent has: its name, and how to use it in one
// sentence that names it (empty: nothing to say).
type Tool struct {
	Name, Guide string
}

// Prompt is a composed system prompt and the instruction files it holds.
type Prompt struct {
	System string
	// Files are the project instruction files read, outermost first.
	Files []string
}

// Compose builds the system prompt. It reads files but never fails: an
// unreadable instruction file is left out.
func Compose(o Options) Prompt {
	var b strings.Builder
	base := strings.TrimSpace(o.Base)
	if base == "" {
		base = Default(o.Mode, o.Tools)
	}
	b.WriteString(base)
	b.WriteString("\n\n<environment>\n")
	fmt.Fprintf(&b, "Working directory: %s\n", o.Cwd)
	fmt.Fprintf(&b, "Platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	if o.Shell != "" && slices.ContainsFunc(o.Tools, func(t Tool) bool { return t.Name == "shell" }) {
		fmt.Fprintf(&b, "Shell (the shell tool): %s\n", o.Shell)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	fmt.Fprintf(&b, "Today's date: %s\n", now.Format("2006-01-02 (Monday)"))
	root, branch := Repository(o.Cwd)
	switch {
	case root == "":
		b.WriteString("Git repository: no\n")
	case branch != "":
		fmt.Fprintf(&b, "Git repository: yes, root %s, branch %s\n", root, branch)
	default:
		fmt.Fprintf(&b, "Git repository: yes, root %s\n", root)
	}
	b.WriteString("</environment>\n")
	p := Prompt{}
	budget := TotalMax
	for _, f := range Find(o.Cwd, root) {
		if budget < 1024 { // a scrap of a file would mislead more than help
			break
		}
		text, err := readCapped(f, min(FileMax, budget))
		if err != nil {
			continue
		}
		budget -= len(text)
		p.Files = append(p.Files, f)
		fmt.Fprintf(&b, "\n<project_instructions path=%q>\n%s\n</project_instructions>\n", f, strings.TrimSpace(text))
	}
	if len(p.Files) > 0 {
		b.WriteString("\nFollow the project instructions above; where they disagree, the one nearer the working directory wins.\n")
	}
	p.System = b.String()
	return p
}

// readCapped reads at most max bytes of a regular file, cut at a line
// end with a marker when it is longer.
func readCapped(path string, max int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path)
	}
	buf := make([]byte, max+1)
	n, _ := f.Read(buf)
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	buf = buf[:n]
	if n <= max {
		return string(buf), nil
	}
	buf = buf[:max]
	if i := bytes.LastIndexByte(buf, '\n'); i > max/2 {
		buf = buf[:i]
	}
	return string(buf) + fmt.Sprintf("\n[... cut: %s is longer than %d bytes]", filepath.Base(path), max), nil
}

// Find lists the instruction files from root (the repository's root; ""
// when cwd is in none, then only cwd is looked at) down to cwd: in each
// directory AGENTS.md, else CLAUDE.md.
func Find(cwd, root string) []string {
	var dirs []string
	d := filepath.Clean(cwd)
	for range maxLevels {
		dirs = append(dirs, d)
		if root == "" || d == root {
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	var out []string
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, n := range Names {
			p := filepath.Join(dirs[i], n)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Repository finds the git repository holding dir: its root and the
// checked-out branch ("" when detached, then the commit's first 12 hex
// digits are given instead). It reads .git itself; no git is run.
func Repository(dir string) (root, branch string) {
	d := filepath.Clean(dir)
	for range 64 {
		gitPath := filepath.Join(d, ".git")
		if fi, err := os.Stat(gitPath); err == nil {
			gitDir := gitPath
			if !fi.IsDir() { // a worktree or submodule: "gitdir: PATH"
				b, err := os.ReadFile(gitPath)
				if err != nil {
					return d, ""
				}
				rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return d, ""
				}
				if !filepath.IsAbs(rest) {
					rest = filepath.Join(d, rest)
				}
				gitDir = rest
			}
			head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
			if err != nil {
				return d, ""
			}
			h := strings.TrimSpace(string(head))
			if ref, ok := strings.CutPrefix(h, "ref: refs/heads/"); ok {
				return d, ref
			}
			if len(h) >= 12 {
				return d, "(detached at " + h[:12] + ")"
			}
			return d, ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
	return "", ""
}
