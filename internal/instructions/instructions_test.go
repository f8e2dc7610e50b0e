package instructions

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestComposeInARepository(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/feature-x\n")
	write(t, filepath.Join(root, "AGENTS.md"), "Run go test before you finish.")
	write(t, filepath.Join(root, "CLAUDE.md"), "ignored: AGENTS.md comes first")
	write(t, filepath.Join(root, "svc", "CLAUDE.md"), "This service speaks gRPC.")
	cwd := filepath.Join(root, "svc", "api")
	os.MkdirAll(cwd, 0o755)
	// Above the repository: not read.
	write(t, filepath.Join(filepath.Dir(root), "AGENTS.md"), "outside the repository")
	defer os.Remove(filepath.Join(filepath.Dir(root), "AGENTS.md"))

	p := Compose(Options{Mode: "code", Tools: []Tool{{"shell", "Run commands with shell."}, {"edit_file", "Edit with edit_file."}, {"ask_user", "Ask with ask_user."}}, Cwd: cwd, Shell: "bash",
		Now: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)})
	want := []string{filepath.Join(root, "AGENTS.md"), filepath.Join(root, "svc", "CLAUDE.md")}
	if strings.Join(p.Files, ",") != strings.Join(want, ",") {
		t.Fatalf("files %v, want %v", p.Files, want)
	}
	for _, s := range []string{
		"software engineering agent", "ask_user", "Working directory: " + cwd,
		"Platform: " + runtime.GOOS + "/" + runtime.GOARCH, "Shell (the shell tool): bash",
		"Today's date: 2026-12-03 (Thursday)", "Git repository: yes, root " + root + ", branch feature-x",
		"Run go test before you finish.", "This service speaks gRPC.",
	} {
		if !strings.Contains(p.System, s) {
			t.Errorf("system prompt lacks %q:\n%s", s, p.System)
		}
	}
	for _, s := range []string{"ignored:", "outside the repository"} {
		if strings.Contains(p.System, s) {
			t.Errorf("system prompt has %q", s)
		}
	}
	// The outer file comes first, the nearer one after it.
	if strings.Index(p.System, "go test") > strings.Index(p.System, "gRPC") {
		t.Error("instructions out of order")
	}
	// The agent's own system_prompt replaces the default, not the rest.
	p = Compose(Options{Base: "Be terse.", Mode: "code", Cwd: cwd})
	if !strings.HasPrefix(p.System, "Be terse.") || strings.Contains(p.System, "software engineering agent") || !strings.Contains(p.System, "gRPC") {
		t.Errorf("with a system_prompt:\n%s", p.System)
	}
}

func TestOutsideARepositoryOnlyTheWorkingDirectory(t *testing.T) {
	parent := t.TempDir()
	write(t, filepath.Join(parent, "AGENTS.md"), "parent's")
	cwd := filepath.Join(parent, "work")
	write(t, filepath.Join(cwd, "CLAUDE.md"), "here's")
	p := Compose(Options{Mode: "chat", Cwd: cwd})
	if len(p.Files) != 1 || p.Files[0] != filepath.Join(cwd, "CLAUDE.md") || !strings.Contains(p.System, "Git repository: no") ||
		!strings.Contains(p.System, "helpful assistant") {
		t.Fatalf("files %v\n%s", p.Files, p.System)
	}
}

func TestInstructionsAreCapped(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git", "HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
	line := strings.Repeat("x", 99) + "\n"
	write(t, filepath.Join(root, "AGENTS.md"), strings.Repeat(line, 300)) // 30 kB
	write(t, filepath.Join(root, "a", "AGENTS.md"), strings.Repeat(line, 300))
	write(t, filepath.Join(root, "a", "b", "AGENTS.md"), strings.Repeat(line, 300))
	cwd := filepath.Join(root, "a", "b")
	p := Compose(Options{Cwd: cwd})
	if len(p.System) > TotalMax+4096 {
		t.Fatalf("system prompt of %d bytes, the cap is %d", len(p.System), TotalMax)
	}
	if !strings.Contains(p.System, "[... cut: AGENTS.md is longer than") || !strings.Contains(p.System, "detached at 0123456789ab") {
		t.Fatalf("no cut marker or detached head:\n%.300s", p.System)
	}
	if len(p.Files) != 2 { // the third finds no budget left
		t.Fatalf("files %v", p.Files)
	}
}

// A worktree's .git is a file naming the git directory.
func TestWorktreeBranch(t *testing.T) {
	root := t.TempDir()
	gitDir := filepath.Join(t.TempDir(), "wt")
	write(t, filepath.Join(gitDir, "HEAD"), "ref: refs/heads/wt-branch\n")
	write(t, filepath.Join(root, ".git"), "gitdir: "+gitDir+"\n")
	if r, b := Repository(filepath.Join(root, "x", "y")); r != root || b != "wt-branch" {
		t.Fatalf("repository %q branch %q", r, b)
	}
}
