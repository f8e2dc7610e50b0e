//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxPathLen is the longest socket path the OS accepts (sun_path less NUL).
var maxPathLen = len(unix.RawSockaddrUnix{}.Path) - 1

// umaskMu serialises the process-wide umask change around bind.
var umaskMu sync.Mutex

// Listener is a listening Unix socket that owns its path: it holds the
// lock file and removes the socket on Close only if it is still its own.
type Listener struct {
	*net.UnixListener
	path      string
	lock      *os.File
	dev, ino  uint64
	closeOnce sync.Once
	closeErr  error
}

// Path returns the socket path.
func (l *Listener) Path() string { return l.path }

// Listen prepares path's directory, takes the socket's lock, clears a
// stale socket and listens, following the protocol's start-up order.
//
// The lock is <socket>.lock beside the socket when the socket's
// directory is private (ours, writable by nobody else: the data
// directory, by default). In a shared directory (sticky and writable by
// others, such as /tmp) another user could create that file first and
// hold it, so there the lock is <socket's name>.lock in lockDir, a
// directory nobody else may write (the daemon's data directory; made
// 0700 when missing). "" refuses a shared directory.
func Listen(path, lockDir string) (*Listener, error) {
	if len(path) > maxPathLen {
		return nil, fmt.Errorf("socket path %s is %d bytes, over the OS limit of %d bytes; set ZEROCLAW_SOCKET to a shorter path", path, len(path), maxPathLen)
	}
	dir := filepath.Dir(path)
	shared, err := secureDir(dir)
	if err != nil {
		return nil, err
	}
	lp := path + ".lock"
	if shared {
		if lockDir == "" {
			return nil, fmt.Errorf("socket directory %s is shared with other users, so the socket's lock cannot live there, and no directory of ours was given for it", dir)
		}
		if err := privateDir(lockDir); err != nil {
			return nil, err
		}
		lp = filepath.Join(lockDir, filepath.Base(path)+".lock")
	}
	lock, err := takeLock(path, lp)
	if err != nil {
		return nil, err
	}
	l, err := listenLocked(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	l.lock = lock
	return l, nil
}

// secureDir creates dir with mode 0700, or checks that an existing one is
// safe: not a symlink, owned by us (or root, for a shared sticky dir such
// as /tmp), and not group/other-writable unless sticky. shared: others
// may create files in it (sticky and writable by others, or root's).
func secureDir(dir string) (shared bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("create socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return false, fmt.Errorf("socket directory: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return false, fmt.Errorf("socket directory %s is a symlink; refusing it", dir)
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("socket directory %s is not a directory", dir)
	}
	st := fi.Sys().(*syscall.Stat_t)
	uid := uint32(os.Geteuid())
	if st.Uid != uid && st.Uid != 0 {
		return false, fmt.Errorf("socket directory %s is owned by uid %d, not by us (uid %d); refusing it", dir, st.Uid, uid)
	}
	perm := fi.Mode()
	if perm.Perm()&0o022 != 0 && perm&os.ModeSticky == 0 {
		return false, fmt.Errorf("socket directory %s is writable by others (mode %04o) without the sticky bit; refusing it", dir, perm.Perm())
	}
	if st.Uid == 0 && uid != 0 && perm&os.ModeSticky == 0 {
		return false, fmt.Errorf("socket directory %s is owned by root and not a sticky shared directory; refusing it", dir)
	}
	return perm.Perm()&0o022 != 0 || st.Uid != uid, nil
}

// privateDir makes dir 0700 when missing and checks that nobody else may
// create or replace a file in it: a directory, not a symlink, ours, not
// writable by group or others.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the lock's directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the lock's directory: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("the lock's directory %s is not a directory (%s); refusing it", dir, fi.Mode().Type())
	case st == nil || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("the lock's directory %s is not ours; refusing it", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("the lock's directory %s is writable by others (mode %04o); refusing it", dir, fi.Mode().Perm())
	}
	return nil
}

// takeLock takes an exclusive flock on lp, the lock of path, and records
// our pid in it. A lock file that is not ours is refused, naming its
// owner: whoever made it could hold it, or read and rewrite it.
func takeLock(path, lp string) (*os.File, error) {
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if fi, lerr := os.Lstat(lp); lerr == nil {
			if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
				return nil, &ForeignError{What: "lock file", Path: lp, UID: int(st.Uid), Our: os.Geteuid()}
			}
		}
		return nil, fmt.Errorf("open lock file %s: %w", lp, err)
	}
	if fi, err := f.Stat(); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat lock file %s: %w", lp, err)
	} else if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
		f.Close()
		return nil, &ForeignError{What: "lock file", Path: lp, UID: int(st.Uid), Our: os.Geteuid()}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &LockedError{Path: path, Lock: lp, PID: readPID(f)}
		}
		return nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("write lock file %s: %w", lp, err)
		}
	}
	return f, nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid
}

func fileID(fi os.FileInfo) (dev, ino uint64) {
	st := fi.Sys().(*syscall.Stat_t)
	return uint64(st.Dev), uint64(st.Ino)
}

// listenLocked clears a stale socket and binds; the caller holds the lock.
func listenLocked(path string) (*Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
			what := "socket"
			if fi.Mode()&os.ModeSocket == 0 {
				what = "file"
			}
			return nil, &ForeignError{What: what, Path: path, UID: int(st.Uid), Our: os.Geteuid()}
		}
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; refusing to remove it", path)
		}
		dev, ino := fileID(fi)
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, fmt.Errorf("%w at %s", ErrAlreadyServing, path)
		}
		// Refused: stale. Remove it only if nobody replaced it meanwhile.
		if fi2, err := os.Lstat(path); err == nil {
			if d2, i2 := fileID(fi2); d2 == dev && i2 == ino {
				if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
				}
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("stat socket %s: %w", path, err)
	}
	umaskMu.Lock()
	old := unix.Umask(0o077)
	nl, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	nl.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		nl.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		nl.Close()
		return nil, fmt.Errorf("stat socket %s: %w", path, err)
	}
	l := &Listener{UnixListener: nl, path: path}
	l.dev, l.ino = fileID(fi)
	return l, nil
}

// Close stops listening, unlinks the socket if it is still ours (same
// dev/inode) and releases the lock.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.UnixListener.Close()
		if fi, err := os.Lstat(l.path); err == nil {
			if dev, ino := fileID(fi); dev == l.dev && ino == l.ino {
				os.Remove(l.path)
			}
		}
		if l.lock != nil {
			l.lock.Close()
		}
	})
	return l.closeErr
}

// Dial connects to the daemon socket at path and, before anything is
// sent, checks that the process behind it runs as our own user: in a
// shared directory another user could have bound the path first.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if err := checkServer(c.(*net.UnixConn), path); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ImpostorError is a socket served by a process of another user.
type ImpostorError struct {
	Path     string
	UID, Our int
}

func (e *ImpostorError) Error() string {
	return fmt.Sprintf("the process serving %s runs as uid %d, not as you (uid %d): refusing to talk to it; remove the socket or set ZEROCLAW_SOCKET", e.Path, e.UID, e.Our)
}

func checkServer(c *net.UnixConn, path string) error {
	p, err := peerCred(c)
	if err != nil {
		return fmt.Errorf("read the credentials of %s: %w", path, err)
	}
	if p.UID >= 0 && p.UID != os.Geteuid() {
		return &ImpostorError{Path: path, UID: p.UID, Our: os.Geteuid()}
	}
	return nil
}

// Authorize reads the peer's credentials and refuses a peer whose uid is
// neither ours nor root's. Connections that are not Unix sockets pass with
// a label naming their address.
func Authorize(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{Label: c.RemoteAddr().Network() + ":" + c.RemoteAddr().String(), UID: -1}, nil
	}
	p, err := peerCred(uc)
	if err != nil {
		return Peer{Label: "unix:unknown", UID: -1}, fmt.Errorf("read peer credentials: %w", err)
	}
	if p.UID != os.Geteuid() && p.UID != 0 {
		return p, ErrPeerRefused
	}
	return p, nil
}
