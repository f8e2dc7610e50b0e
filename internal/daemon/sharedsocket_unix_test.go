//go:build unix

package daemon

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Another local user makes the lock file beside a socket in a shared
// directory (ZEROCLAW_SOCKET=/tmp/...) before the owner's daemon starts,
// and holds it: the daemon starts all the same, its lock being in its
// data directory, and answers. Before, it stopped with "another daemon
// owns ... (pid 0)".
func TestAnotherUsersLockBesideASharedSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv to run a process as another user")
	}
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("needs flock(1) for the other user to hold the lock")
	}
	shared, err := os.MkdirTemp("", "zc-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	os.Chmod(shared, 0o777|os.ModeSticky)
	dirs := testDirs(t)
	dirs.Endpoint = filepath.Join(shared, "zc.sock")

	// The other user: creates the lock file (0666), holds it, and says
	// so; it lets go when its stdin closes.
	other := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		"sh", "-c", `umask 0; exec "$0" "$1" sh -c 'echo ready; exec cat'`, flock, dirs.Endpoint+".lock")
	stdin, _ := other.StdinPipe()
	stdout, _ := other.StdoutPipe()
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); other.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the other user's lock: %q %v", line, err)
	}
	if fi, err := os.Stat(dirs.Endpoint + ".lock"); err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("the other user's lock file: %v", err)
	}

	r := start(t, dirs, false)
	if m := dial(t, r.dirs.Endpoint).call(t, initFrame); m["result"] == nil {
		t.Fatalf("the daemon beside another user's lock: %v", m)
	}
}
