//go:build unix

package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The start-up sequence a user meets: a private directory made, a 0600
// socket, a second daemon refused (its lock names the first's pid), a
// stale socket cleared, a file that is not a socket left alone, a
// replaced socket not unlinked by the old listener, a path too long
// refused with a clear error.
func TestListenStartUpSequence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "d.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != path {
		t.Errorf("Path() = %q", l.Path())
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + ".lock": 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %04o", p, fi.Mode().Perm(), err, want)
		}
	}
	// A second daemon: the lock is held.
	_, err = Listen(path)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != os.Getpid() || !strings.Contains(err.Error(), path) {
		t.Fatalf("a second Listen: %v", err)
	}
	// A client dials and is who we are.
	accepted := make(chan Peer, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		p, _ := Authorize(c)
		accepted <- p
		c.Close()
	}()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if p := <-accepted; p.UID != os.Geteuid() || p.PID != os.Getpid() || !strings.Contains(p.Label, "uid=") {
		t.Errorf("peer %+v", p)
	}
	l.Close()
	l.Close() // twice is harmless
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket outlived Close: %v", err)
	}
	if _, err := Dial(context.Background(), path); err == nil {
		t.Error("dialled a closed daemon")
	}

	// A stale socket (its daemon died without unlinking it) is cleared.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	l, err = Listen(path)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	// A socket put in its place meanwhile is not the old listener's to
	// remove.
	os.Remove(path)
	other, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	l.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the old listener removed a socket that was not its own: %v", err)
	}
	other.Close()

	// Not a socket: left alone, and said so.
	os.Remove(path)
	os.WriteFile(path, []byte("mine"), 0o600)
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Error("the regular file was touched")
	}
	if _, err := Listen(filepath.Join(dir, strings.Repeat("x", 200)+".sock")); err == nil || !strings.Contains(err.Error(), "ZEROCLAW_SOCKET") {
		t.Errorf("a path too long: %v", err)
	}
}

// A daemon answering at the path: a second Listen says so (it does not
// take the lock from a daemon started by another means either).
func TestListenRefusesALiveSocketAndUnsafeDirectories(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.sock")
	live, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	go func() {
		for {
			c, err := live.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(path); !errors.Is(err, ErrAlreadyServing) {
		t.Errorf("over a live socket: %v", err)
	}
	// A directory others may write to, without the sticky bit.
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := Listen(filepath.Join(open, "d.sock")); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("in a world-writable directory: %v", err)
	}
	// A symlink in the socket's place of directory.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	if _, err := Listen(filepath.Join(link, "d.sock")); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("through a symlinked directory: %v", err)
	}
	// A dial that cannot connect in time honours its context.
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if _, err := Dial(ctx, filepath.Join(dir, "none.sock")); err == nil {
		t.Error("dialled nothing")
	}
}
