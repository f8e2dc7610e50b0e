//go:build unix

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestShell(t *testing.T) {
	env := fixture(t)
	if r := run(t, env, "shell", `{"command":"pwd; echo err >&2"}`); r.IsError || r.Output != env.Cwd+"\nerr\n" {
		t.Errorf("pwd: %+v", r)
	}
	if r := run(t, env, "shell", `{"command":"echo out; exit 3"}`); !r.IsError || r.Output != "out\n\n[exit code 3]" {
		t.Errorf("exit 3: %q", r.Output)
	}
	r := run(t, env, "shell", `{"command":"head -c 100000 /dev/zero | tr '\\0' a; echo END"}`)
	if len(r.Output) > shellOutputCap+200 || !strings.HasSuffix(r.Output, "aEND\n") || !strings.HasPrefix(r.Output, "[34468 bytes of output dropped") {
		t.Errorf("capped output: len %d, head %q", len(r.Output), r.Output[:min(80, len(r.Output))])
	}
	if r := run(t, env, "shell", `{"command":"sleep 5","timeout_secs":1}`); !r.IsError || !strings.Contains(r.Output, "timed out after 1 s") {
		t.Errorf("timeout: %+v", r)
	}
}

// Cancelling a command kills its whole process group, children included,
// even one that ignores SIGTERM (after the grace).
func TestShellCancelKillsProcessGroup(t *testing.T) {
	env := fixture(t)
	pidFile := filepath.Join(env.Cwd, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	tl, _ := Lookup("shell")
	go func() {
		done <- tl.Run(ctx, env, json.RawMessage(`{"command":"(trap '' TERM; sleep 60) & echo $! > child.pid; wait"}`))
	}()
	var pid int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
	}
	if pid == 0 {
		t.Fatal("child never started")
	}
	start := time.Now()
	cancel()
	var r Result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not return after cancel")
	}
	if !r.IsError || !strings.Contains(r.Output, "[cancelled]") {
		t.Errorf("result %+v", r)
	}
	for time.Since(start) < KillGrace+3*time.Second {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("child %d still alive %s after cancel", pid, time.Since(start))
}

// [daemon] shell picks the shell: sh runs the command, and the user's
// umask still applies.
func TestShellConfigured(t *testing.T) {
	env := &Env{Cwd: t.TempDir(), Commands: Commands{Shell: "sh", Umask: "0027"}}
	r := run(t, env, "shell", `{"command":"echo \"$0\"; umask"}`)
	if r.IsError || !strings.Contains(r.Output, "sh\n") || !strings.Contains(r.Output, "0027") {
		t.Fatalf("sh: %+v", r)
	}
}
