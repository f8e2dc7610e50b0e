//go:build windows

package transport

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/windows"
)

// LockDir takes dir's daemon lock (dir/daemon.lock, our pid in it): one
// daemon per data directory, whatever pipe each listens on. Held until
// release (or the process's end). Another holder: a *LockedError
// naming its pid.
func LockDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "daemon")
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		defer f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			// The pid is written past the locked byte: readable.
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 1)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &LockedError{Path: dir, PID: pid}
		}
		return nil, err
	}
	f.Truncate(1)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 1)
	return func() { f.Close() }, nil
}

// DirFree says whether no process holds dir's daemon lock (a daemon that
// stopped has let it go only when its process ended, after its pipe
// closed). It takes the lock shared for an instant, never writing it.
func DirFree(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "daemon.lock"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		return false
	}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
	return true
}
