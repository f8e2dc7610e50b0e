//go:build linux

package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// terminalQueries are what a program writes to ask its terminal for the
// background colour (OSC 11) and the cursor's place (DSR 6).
var terminalQueries = []string{"\x1b]11;?", "\x1b[6n"}

// asksTheTerminal says which of terminalQueries out holds.
func asksTheTerminal(out string) []string {
	var asked []string
	for _, q := range terminalQueries {
		if strings.Contains(out, q) {
			asked = append(asked, q)
		}
	}
	return asked
}

// zeroclaw in a terminal that never answers (a pty nobody reads for
// answers, as a pre-commit runner or a relayed ssh gives): `version`
// prints its version and nothing else, so it writes no query and waits
// for no answer. Before, every process of the binary asked the
// terminal's background at start (Bubble Tea's init) and waited 5 s.
func TestVersionAsksTheTerminalNothing(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "version")
	// A terminal that would be asked: an xterm, not a CI run (termenv
	// asks nothing with CI set, nor under screen or tmux).
	for _, kv := range env.Environ {
		if k, _, _ := strings.Cut(kv, "="); k != "CI" && k != "TERM" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	ptmx, err := pty.Start(cmd) // its stdin, stdout, stderr and controlling terminal
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	// Read to the end: the pty reads EIO once the last holder of its
	// other side is gone.
	out, err := io.ReadAll(ptmx)
	if err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("version: %v (%q)", err, out)
	}
	if got, want := string(out), "zeroclaw "+Version+"\r\n"; got != want {
		t.Fatalf("version in a terminal that never answers: %q, want %q (terminal queries: %q)", got, want, asksTheTerminal(got))
	}
}

// A command run under a terminal (shell tty) starts at once: the sandbox's
// shim (this binary) asks the terminal nothing, so no query lands in the
// command's output and what is typed as soon as it started reaches the
// command (before, the shim's wait for the answers took it: `bash -i`
// lost its first command).
func TestTTYCommandGetsItsFirstInput(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	code, out, errs := runCLI(t, env, "", "prompt", "--approve", "all", "--session", "tty", "--cwd", cwd,
		`/tool shell {"command":"read -r line; echo got:$line","background":true,"tty":true}`)
	if code != 0 || !strings.Contains(out, "in the background") {
		t.Fatalf("starting the command: %d %q %q", code, out, errs)
	}
	// A watchdog, not a measure: a command that never gets its line
	// fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, filepath.Join(dir, "data", "daemon.sock"), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: "tty", Cwd: cwd}, nil); err != nil {
		t.Fatal(err)
	}
	var list protocol.ProcessListResult
	if err := c.Call(ctx, protocol.MethodProcessList, protocol.SessionRef{SessionID: "tty"}, &list); err != nil || len(list.Processes) != 1 {
		t.Fatalf("the session's processes: %v %v", list.Processes, err)
	}
	id := list.Processes[0].ID
	// Typed at once, before the command may have read anything.
	if err := c.Call(ctx, protocol.MethodProcessWrite, protocol.ProcessWriteParams{SessionID: "tty", ID: id, Input: "hello\r"}, nil); err != nil {
		t.Fatal(err)
	}
	// Its output until it echoes the line or ends; a query seen ends the
	// test (the command would wait for the line the shim took).
	var all strings.Builder
	for since := int64(0); ; {
		var o protocol.ProcessOutputResult
		if err := c.Call(ctx, protocol.MethodProcessOutput, protocol.ProcessOutputParams{SessionID: "tty", ID: id, Since: since, WaitMs: 30000}, &o); err != nil {
			t.Fatalf("%v (the output so far: %q)", err, all.String())
		}
		all.WriteString(o.Output)
		since = o.Next
		if asked := asksTheTerminal(all.String()); len(asked) > 0 {
			t.Fatalf("the terminal was asked %q: %q", asked, all.String())
		}
		if strings.Contains(all.String(), "got:") || o.State != "running" {
			break
		}
	}
	if got := all.String(); !strings.Contains(got, "got:hello\r\n") {
		t.Errorf("the first input did not reach the command: %q", got)
	}
}
