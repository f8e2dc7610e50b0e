//go:build unix

// Unix only: under Wine a test's temporary directory cannot be removed
// once LockDir has locked a file in it (even after the lock's release),
// so the test would fail on its cleanup, not on the lock; on Windows,
// DirFree is exercised by the command line's daemon restart test, which
// runs under Wine.

package transport

import (
	"errors"
	"path/filepath"
	"testing"
)

// A data directory is free until a daemon locks it, not free while it
// holds the lock (a second locker is refused, naming it), and free again
// once it lets go; looking leaves the lock takeable.
func TestDirFreeFollowsTheLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if !DirFree(dir) {
		t.Fatal("a directory never locked is not free")
	}
	release, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if DirFree(dir) {
		t.Fatal("a locked directory is free")
	}
	var le *LockedError
	if _, err := LockDir(dir); !errors.As(err, &le) {
		t.Fatalf("a second lock: %v", err)
	}
	release()
	if !DirFree(dir) {
		t.Fatal("a released directory is not free")
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("the lock after a look: %v", err)
	}
	again()
}
