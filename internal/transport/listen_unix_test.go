//go:build unix

package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The start-up sequence a user meets: a private directory made, a 0600
// socket, a second daemon refused (its lock names the first's pid), a
// stale socket cleared, a file that is not a socket left alone, a
// replaced socket not unlinked by the old listener, a path too long
// refused with a clear error.
func TestListenStartUpSequence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "d.sock")
	l, err := Listen(path, "")
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
	_, err = Listen(path, "")
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
	l, err = Listen(path, "")
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
	if _, err := Listen(path, ""); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Error("the regular file was touched")
	}
	if _, err := Listen(filepath.Join(dir, strings.Repeat("x", 200)+".sock"), ""); err == nil || !strings.Contains(err.Error(), "ZEROCLAW_SOCKET") {
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
	if _, err := Listen(path, ""); !errors.Is(err, ErrAlreadyServing) {
		t.Errorf("over a live socket: %v", err)
	}
	// A directory others may write to, without the sticky bit.
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := Listen(filepath.Join(open, "d.sock"), ""); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("in a world-writable directory: %v", err)
	}
	// A symlink in the socket's place of directory.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	if _, err := Listen(filepath.Join(link, "d.sock"), ""); err == nil || !strings.Contains(err.Error(), "symlink") {
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

// In a shared directory (sticky and writable by all, as /tmp) another
// user can make the socket's lock file first and hold it, which stopped
// the daemon ("another daemon owns ... (pid 0)"). The lock is taken in
// the directory given instead (the daemon's data directory, which only
// its user may write), so the daemon starts, and the other user's file
// is left alone; without such a directory a shared one is refused. A
// file of another user's in the socket's place, or a lock file of
// theirs where ours should be, is refused naming them, never used.
func TestListenInASharedDirectoryPassesAnotherUsersLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files as another user")
	}
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o700)
	os.Chmod(shared, 0o777|os.ModeSticky)
	path := filepath.Join(shared, "d.sock")
	theirs := path + ".lock"
	if err := os.WriteFile(theirs, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chown(theirs, 65534, 65534)
	hold, err := os.Open(theirs)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if err := unix.Flock(int(hold.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path, ""); err == nil || !strings.Contains(err.Error(), "shared with other users") {
		t.Fatalf("a shared directory with no lock directory: %v", err)
	}
	data := filepath.Join(t.TempDir(), "data")
	l, err := Listen(path, data)
	if err != nil {
		t.Fatalf("another user's lock stopped the listener: %v", err)
	}
	defer l.Close()
	if b, err := os.ReadFile(filepath.Join(data, "d.sock.lock")); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("the lock in the data directory: %q %v", b, err)
	}
	var locked *LockedError
	if _, err := Listen(path, data); !errors.As(err, &locked) || locked.PID != os.Getpid() {
		t.Fatalf("a second Listen: %v", err)
	}
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.Close()
	if fi, err := os.Stat(theirs); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 || fi.Size() != 0 {
		t.Fatalf("the other user's lock file was touched: %v", err)
	}
	// A lock directory others may write is no place for the lock.
	loose := filepath.Join(t.TempDir(), "loose")
	os.Mkdir(loose, 0o777)
	os.Chmod(loose, 0o777)
	if _, err := Listen(filepath.Join(shared, "e.sock"), loose); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Fatalf("a loose lock directory: %v", err)
	}
	// Another user's file in the socket's place, or their lock file
	// where ours goes.
	planted := filepath.Join(shared, "f.sock")
	os.WriteFile(planted, nil, 0o666)
	os.Chown(planted, 65534, 65534)
	var foreign *ForeignError
	if _, err := Listen(planted, data); !errors.As(err, &foreign) || foreign.UID != 65534 || !strings.Contains(err.Error(), "the file "+planted+" belongs to ") {
		t.Fatalf("another user's file in the socket's place: %v", err)
	}
	private := t.TempDir()
	os.WriteFile(filepath.Join(private, "g.sock.lock"), nil, 0o666)
	os.Chown(filepath.Join(private, "g.sock.lock"), 65534, 65534)
	if _, err := Listen(filepath.Join(private, "g.sock"), ""); !errors.As(err, &foreign) || !strings.Contains(err.Error(), "the lock file "+filepath.Join(private, "g.sock.lock")) {
		t.Fatalf("another user's lock file: %v", err)
	}
}

// A lock held by a process that wrote no pid in it is said so, naming
// the lock file, never as "pid 0".
func TestALockWithoutAPidIsNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.sock")
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hold, err := os.Open(path + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if err := unix.Flock(int(hold.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	_, err = Listen(path, "")
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != 0 || strings.Contains(err.Error(), "pid 0") || !strings.Contains(err.Error(), path+".lock") {
		t.Fatalf("a lock without a pid: %v", err)
	}
	if who := locked.Who(); strings.Contains(who, "pid 0") || !strings.Contains(who, path+".lock") {
		t.Fatalf("Who: %q", who)
	}
}
