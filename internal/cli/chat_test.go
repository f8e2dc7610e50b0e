package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
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
		"/reasoning medium",
		"/reasoning max",
		"/new",
		"second session",
		"/nope",
		"/quit",
		"never sent",
	}, "\n") + "\n"
	code, out, errs := runCLI(t, env, in, "chat", "--cwd", testdir.New(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"echo: hello\n",
		"provider echo · ", // then the clients: a probe connection may not be gone yet
		" client(s) · 1 live session(s)",
		"tool shell returned: from-shell\n",
		"tool ask_user returned: the user answered: one\n",
		"echo: second session\n",
		"reasoning: medium\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never sent") {
		t.Error("a line after /quit was sent")
	}
	if strings.Count(errs, "new session ses_") != 2 || !strings.Contains(errs, "Allow shell? Run: echo from-shell") || !strings.Contains(errs, "unknown command /nope") ||
		!strings.Contains(errs, `"max": must be one of off, low, medium, high`) {
		t.Errorf("stderr:\n%s", errs)
	}
	// /sessions (sent before /new) lists the one session, marked current.
	if strings.Count(out, "  idle  ") != 1 || !strings.Contains(out, "* ses_") {
		t.Errorf("/sessions output:\n%s", out)
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
	go func() {
		done <- Main(context.Background(), []string{"chat", "--cwd", testdir.New(t), "--no-start"}, env)
	}()
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

// /undo shows what it restores and asks; y does it. /diff, /rewind,
// /export and /fork work from the chat.
func TestChatUndoRewindDiffForkExport(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	startDaemon(t, env)
	cwd := testdir.New(t)
	export := filepath.Join(testdir.New(t), "out.json")
	in := strings.Join([]string{
		`//tool write_file {"path":"made.txt","content":"made\n"}`,
		"/diff 1",
		"/rewind",
		"/undo",
		"no",
		"/undo",
		"y",
		"/export " + export,
		"/steer nobody is running",
		"/queue",
		"/fork",
		"/quit",
	}, "\n") + "\n"
	code, out, errs := runCLI(t, env, in, "chat", "--cwd", cwd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"+++ b/made.txt\n",
		"  1  /tool write_file",
		"created made.txt (turn 1)",
		"do it? y / anything else: no",
		"back to before turn 1: 0 file(s) restored, 1 removed",
		"wrote " + export + " (json, ",
		"forked: this is ses_",
		"(no turn is running: send it as a prompt)",
		"the queue is empty",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "(not done)") {
		t.Errorf("stderr lacks the refusal:\n%s", errs)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); err == nil {
		t.Error("made.txt is still there after /undo y")
	}
	if b, err := os.ReadFile(export); err != nil || !strings.Contains(string(b), `"turns"`) {
		t.Errorf("the export: %v %.200s", err, b)
	}
}
