//go:build unix

package transport

import (
	"os"
	"path/filepath"
)

// LockDir takes dir's daemon lock (dir/daemon.lock, our pid in it): one
// daemon per data directory, whatever socket each listens on. Held
// until release (or the process's end). Another holder: a *LockedError
// naming its pid.
func LockDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := takeLock(filepath.Join(dir, "daemon"))
	if le, ok := err.(*LockedError); ok {
		le.Path = dir
	}
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
