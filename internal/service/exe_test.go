package service

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// exeIn writes a stand-in executable at dir/name (its directories made
// 0700 on the way) and gives dir mode perm.
func exeIn(t *testing.T, dir string, perm os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "zeroclaw")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return exe
}

func refusedFor(t *testing.T, exe, want string) {
	t.Helper()
	err := CheckExe(exe)
	var ee *ExeError
	if !errors.As(err, &ee) || ee.Exe != exe || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckExe(%s) = %v, want a refusal saying %q", exe, err, want)
	}
}

// A service runs what sits at its path at every login: a build of go
// run (deleted when it ends), a file in a directory any user may write
// (even one with the sticky bit: a directory under it that goes away
// is made again by whoever comes first), and a file in the temporary
// directory are refused, each saying why.
func TestCheckExeRefusesWhatOthersCouldReplace(t *testing.T) {
	base := t.TempDir()
	refusedFor(t, exeIn(t, filepath.Join(base, "go-build2861/b001/exe"), 0o700), "temporary build of go run or go test (in its go-build2861 directory)")
	refusedFor(t, "zeroclaw", "not an absolute path")
	refusedFor(t, filepath.Join(base, "none"), "cannot be read")
	refusedFor(t, base, "not a regular file")
	if runtime.GOOS == "windows" {
		refusedFor(t, exeIn(t, filepath.Join(base, "bin"), 0o700), "lies in the temporary directory")
		return
	}
	shared := filepath.Join(base, "shared")
	refusedFor(t, exeIn(t, shared, 0o777), "lies in "+shared+", a directory that every user may write (mode 0777): another user could put another program in its place")
	sticky := filepath.Join(base, "sticky")
	exe := exeIn(t, filepath.Join(sticky, "mine"), 0o700)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	refusedFor(t, exe, "lies in "+sticky+", a directory that every user may write (mode 1777)")
	// Private all the way to the temporary directory, it is refused
	// still: for that directory, or for what may write above it (/tmp).
	os.Chmod(sticky, 0o700)
	if err := CheckExe(exe); err == nil {
		t.Fatalf("a file in the temporary directory is accepted")
	}
	loose := exeIn(t, filepath.Join(base, "loose"), 0o700)
	os.Chmod(loose, 0o757)
	refusedFor(t, loose, loose+", which every user may write (mode 0757): another user could change it")
}

// Run as root: a directory of another user's, or one a group other than
// the user's own may write, is refused, naming them.
func TestCheckExeRefusesOtherUsersDirectories(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() != 0 {
		t.Skip("needs root (on Unix) to give a directory to another user")
	}
	base := t.TempDir()
	theirs := filepath.Join(base, "theirs")
	exe := exeIn(t, theirs, 0o755)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	refusedFor(t, exe, "lies in "+theirs+", a directory that belongs to ")
	refusedFor(t, exe, "(uid 65534)")
	group := filepath.Join(base, "group")
	exe = exeIn(t, group, 0o775)
	if err := os.Chown(group, 0, 65534); err != nil {
		t.Fatal(err)
	}
	refusedFor(t, exe, "lies in "+group+", a directory that the group ")
	refusedFor(t, exe, "(gid 65534) may write (mode 0775), not a group of yours alone")
}

// A file where only its user and root can change it, on a path that
// stays, is accepted: this package's own source, in a checkout that
// nobody else may write (skipped, with the reason, where the checkout
// is not such a place).
func TestCheckExeAcceptsAPrivatePath(t *testing.T) {
	src, err := filepath.Abs("exe.go")
	if err == nil {
		src, err = filepath.EvalSymlinks(src)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckExe(src); err != nil {
		if tmp, _ := filepath.EvalSymlinks(os.TempDir()); strings.HasPrefix(src, tmp) || strings.Contains(err.Error(), "may write") || strings.Contains(err.Error(), "belongs to") {
			t.Skipf("the checkout is no private place: %v", err)
		}
		t.Fatal(err)
	}
}
