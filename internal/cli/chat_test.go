package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestChatWithPipedLines(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	startDaemon(t, env)
	in := strings.Join([]string{
		"hello",
		"/status",
		`//tool shell {"command":"echo from-shell"}`,
		"y",
		`//tool ask_user {"question":"Pick","choices":["one","two"]}`,
		"1",
		"/sessions",
		"/new",
		"second session",
		"/nope",
		"/quit",
		"never sent",
	}, "\n") + "\n"
	code, out, errs := runCLI(t, env, in, "chat", "--cwd", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"echo: hello\n",
		"provider echo · 1 client(s) · 1 live session(s)",
		"tool shell returned: from-shell\n",
		"tool ask_user returned: the user answered: one\n",
		"echo: second session\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never sent") {
		t.Error("a line after /quit was sent")
	}
	if strings.Count(errs, "new session ses_") != 2 || !strings.Contains(errs, "Allow shell? Run: echo from-shell") || !strings.Contains(errs, "unknown command /nope") {
		t.Errorf("stderr:\n%s", errs)
	}
	// /sessions (sent before /new) lists the one session, marked current.
	if strings.Count(out, "  idle  ") != 1 || !strings.Contains(out, "* ses_") {
		t.Errorf("/sessions output:\n%s", out)
	}
}

// The terminal experience, in a real pty: tmux runs `zeroclaw chat`, we
// type into it and read the screen.
func TestChatInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	exe, _ := os.Executable()
	name := fmt.Sprintf("zc-chat-%d", os.Getpid())
	// Under umask 000, as a careless shell may have: the history file must
	// still be private.
	cmdline := fmt.Sprintf("sh -c 'umask 000; exec env ZEROCLAW_TEST_MAIN=1 ZEROCLAW_CONFIG_DIR=%s TERM=xterm %s chat --cwd %s'", dir, exe, t.TempDir())
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("-L", name, "new-session", "-d", "-s", name, "-x", "120", "-y", "30", cmdline)
	t.Cleanup(func() { exec.Command("tmux", "-L", name, "kill-server").Run() })
	screenN := func(want string, n int) {
		t.Helper()
		var s string
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			s = tmux("-L", name, "capture-pane", "-p", "-t", name)
			if strings.Count(s, want) >= n {
				return
			}
		}
		t.Fatalf("screen never showed %q %d times:\n%s", want, n, s)
	}
	screen := func(want string) { t.Helper(); screenN(want, 1) }
	screen("type /help for commands")
	tmux("-L", name, "send-keys", "-t", name, "hello from tmux", "Enter")
	screen("echo: hello from tmux")
	// Line editing: type, erase a word with Ctrl-W, retype.
	tmux("-L", name, "send-keys", "-t", name, "//tool shell {\"command\":\"echo typed-", "C-w", "edited\"}", "Enter")
	screen("Allow shell? Run: echo edited")
	tmux("-L", name, "send-keys", "-t", name, "a", "Enter")
	screen("tool shell returned: edited")
	// History: Up brings the last prompt back (not the "a" answer); with
	// allow_always given, it runs without asking.
	tmux("-L", name, "send-keys", "-t", name, "Up", "Enter")
	screenN("tool shell returned: edited", 2)
	if s := tmux("-L", name, "capture-pane", "-p", "-t", name); strings.Count(s, "Allow shell?") != 1 {
		t.Fatalf("asked again after allow_always:\n%s", s)
	}
	tmux("-L", name, "send-keys", "-t", name, "/quit", "Enter")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("tmux", "-L", name, "has-session", "-t", name).Run() != nil {
			break // chat exited, and tmux with it
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat did not exit on /quit:\n%s", tmux("-L", name, "capture-pane", "-p", "-t", name))
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "data", "chat_history"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("chat history: %v %v, want mode 0600", fi.Mode(), err)
	}
}

// A daemon restarted between two turns: the next prompt reaches the new
// daemon, once, and chat goes on (it used to wait forever).
func TestChatPromptAfterDaemonRestart(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	d, _ := startDaemon(t, env)
	inR, inW := io.Pipe()
	out := &lockedBuffer{changed: make(chan struct{}, 1)}
	var errb lockedBuffer
	env.Stdin, env.Stdout, env.Stderr = inR, out, &errb
	done := make(chan int, 1)
	go func() { done <- Main(context.Background(), []string{"chat", "--cwd", t.TempDir(), "--no-start"}, env) }()
	wait := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !strings.Contains(out.String(), want) {
			select {
			case <-out.changed:
			case <-deadline:
				t.Fatalf("no %q in the output:\n%s\nstderr:\n%s", want, out.String(), errb.String())
			}
		}
	}
	io.WriteString(inW, "before the restart\n")
	wait("echo: before the restart\n")
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	startDaemon(t, env)
	io.WriteString(inW, "after the restart\n")
	wait("echo: after the restart\n")
	io.WriteString(inW, "/quit\n")
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("chat exit %d: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("chat did not end")
	}
	if n := strings.Count(out.String(), "echo: after the restart\n"); n != 1 {
		t.Fatalf("the prompt was answered %d times", n)
	}
}
