//go:build unix

package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

func TestPromptCtrlCCancels(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	startDaemon(t, env)
	done := make(chan struct{})
	var code int
	var out, errs string
	go func() {
		defer close(done)
		code, out, errs = runCLI(t, env, "", "prompt", "--cwd", testdir.New(t), "/delay 20\n/chunks 1000")
	}()
	// Ctrl-C only once the turn runs (and so the prompt listens for it).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, st, _ := runCLI(t, env, "", "status", "--output-format", "json")
		if strings.Contains(st, `"state": "running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn never started")
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("prompt did not end after Ctrl-C")
	}
	if code != 130 || strings.Trim(out, "ok \n") != "" || !strings.Contains(errs, "cancelling") {
		t.Errorf("exit %d stdout %.40q stderr %q", code, out, errs)
	}
}
