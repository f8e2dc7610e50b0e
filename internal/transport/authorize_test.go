//go:build linux

package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// With ZEROCLAW_TEST_DIAL set, the test binary only dials that socket and
// waits for the far end to hang up: the peer process of the tests below.
func TestMain(m *testing.M) {
	if path := os.Getenv("ZEROCLAW_TEST_SERVE"); path != "" {
		// An impostor: listen, say so, and tell by the exit code whether
		// the client sent it anything (4) or hung up silent (0).
		ln, err := net.Listen("unix", path)
		if err != nil {
			os.Exit(3)
		}
		os.Chmod(path, 0o777)
		os.Stdout.WriteString("ready\n")
		c, err := ln.Accept()
		if err != nil {
			os.Exit(3)
		}
		if n, _ := c.Read(make([]byte, 1)); n > 0 {
			os.Exit(4)
		}
		os.Exit(0)
	}
	if path := os.Getenv("ZEROCLAW_TEST_DIAL"); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			os.Exit(3)
		}
		c.Read(make([]byte, 1))
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// acceptFrom starts the test binary as a peer (through prefix, e.g.
// setpriv) and returns what Authorize says about its connection.
func acceptFrom(t *testing.T, dir string, prefix ...string) (Peer, error) {
	t.Helper()
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "peer.test")
	self, _ := os.Executable()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append(prefix, exe)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "ZEROCLAW_TEST_DIAL="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	ln.(*net.UnixListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("peer never connected: %v", err)
	}
	defer c.Close()
	return Authorize(c)
}

func openDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "zc-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestAuthorizeAcceptsOwnUser(t *testing.T) {
	p, err := acceptFrom(t, openDir(t))
	if err != nil {
		t.Fatalf("own peer refused: %v", err)
	}
	want := "unix:pid=" + strconv.Itoa(p.PID) + ",uid=" + strconv.Itoa(os.Geteuid())
	if p.UID != os.Geteuid() || p.PID <= 0 || p.Label != want {
		t.Errorf("peer %+v, want uid %d and label %q", p, os.Geteuid(), want)
	}
}

func TestAuthorizeRefusesOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a peer as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv to run a peer as another user")
	}
	p, err := acceptFrom(t, openDir(t), setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
	if !errors.Is(err, ErrPeerRefused) {
		t.Fatalf("peer %+v: err %v, want ErrPeerRefused", p, err)
	}
	if p.UID != 65534 {
		t.Errorf("refused peer has uid %d, want 65534", p.UID)
	}
}

// A client refuses a socket served by another user before sending it a
// byte (in a shared sticky directory another user can bind the path first).
func TestDialRefusesAnImpostor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a server as another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv to run a server as another user")
	}
	dir := openDir(t)
	os.Chmod(dir, 0o1777)
	path := filepath.Join(dir, "daemon.sock")
	self, _ := os.Executable()
	exe := filepath.Join(dir, "impostor.test")
	data, _ := os.ReadFile(self)
	os.WriteFile(exe, data, 0o755)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", exe)
	cmd.Env = append(os.Environ(), "ZEROCLAW_TEST_SERVE="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatalf("impostor did not start: %v", err)
	}
	_, err = Dial(context.Background(), path)
	var ie *ImpostorError
	if !errors.As(err, &ie) || ie.UID != 65534 {
		t.Fatalf("dial of an impostor: %v, want ImpostorError for uid 65534", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the impostor got data from the client (or failed): %v", err)
	}
}
