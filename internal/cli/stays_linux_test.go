package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With no daemon running, a prompt that starts a dev server in the
// background exits; the daemon it started stays while the server runs
// (zeroclaw status says why), and leaves by itself once it ended.
func TestEphemeralDaemonStaysForABackgroundProcess(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	writeConfig(t, dir, "[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n")
	cwd := t.TempDir()
	fifo := filepath.Join(cwd, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", cwd, `/tool shell {"command":"cat gate","background":true}`)
	if code != 0 || !strings.Contains(out, "started p_") {
		t.Fatalf("the prompt that starts a server: %d %q %q", code, out, errs)
	}
	// The prompt's client is gone; the daemon stays for the process.
	code, out, errs = runCLI(t, env, "", "status")
	if code != 0 || !strings.Contains(out, "staying for 1 process") {
		t.Fatalf("status while the server runs: %d %q %q", code, out, errs)
	}
	// Its last client gone for the grace period, it stays (the old
	// daemon left then, and ended the server).
	waitLogSays(t, dir, "last client gone, staying for its work")
	if _, err := os.Lstat(endpointOf(dir)); err != nil {
		t.Fatalf("the daemon left while the server ran: %v", err)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for cat's open
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // the server ends
	waitEphemeralGone(t, dir)
}

// waitLogSays waits until the log of the daemon of dir holds text,
// without connecting (a connection would change what it does).
func waitLogSays(t *testing.T, dir, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if log, _ := os.ReadFile(filepath.Join(dir, "data", "daemon.log")); strings.Contains(string(log), text) {
			return
		}
	}
	t.Fatalf("the daemon's log does not say %q in 10s", text)
}
