//go:build unix

package transport

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// LockDir takes dir's daemon lock (dir/daemon.lock, our pid in it): one
// daemon per data directory, whatever socket each listens on. Held
// until release (or the process's end). Another holder: a *LockedError
// naming its pid.
func LockDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := takeLock(dir, filepath.Join(dir, "daemon.lock"))
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// DirFree says whether no process holds dir's daemon lock (a daemon that
// stopped has let it go only when its process ended, after its socket
// closed). It takes the lock shared for an instant, never writing it.
func DirFree(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, "daemon.lock"), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return false
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return true
}
