package service

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExeError says why an executable is no fit for a service: the
// service would run whatever sits at that path at every login, long
// after the install, so the path must stay what it is now and be
// changeable by nobody but its user (and root).
type ExeError struct {
	Exe string
	// Why is the first reason found, as a phrase ("is a temporary
	// build of go run ...").
	Why string
}

func (e *ExeError) Error() string {
	return fmt.Sprintf("the service would run %s, which %s", e.Exe, e.Why)
}

// CheckExe refuses an executable a service must not run, in this
// order: a build of go run or go test (a go-build directory, deleted
// when it ends); a file, or a directory holding it or any directory
// above, that another user could replace (on Unix: owned by another
// user than this one and root, writable by every user (even sticky: a
// directory in /tmp that goes is made again by whoever comes first), or
// writable by a group that is not this user's own private group); a
// file in the temporary directory (cleaned out). exe is absolute and
// resolved (no symlinks). nil: none of these.
func CheckExe(exe string) error {
	refuse := func(format string, a ...any) error { return &ExeError{Exe: exe, Why: fmt.Sprintf(format, a...)} }
	if !filepath.IsAbs(exe) {
		return refuse("is not an absolute path")
	}
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return refuse("is a temporary build of go run or go test (in its %s directory), deleted when it ends", part)
		}
	}
	fi, err := os.Lstat(exe)
	if err != nil {
		return refuse("cannot be read: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return refuse("is not a regular file (%s)", fi.Mode().Type())
	}
	if why := replaceable(fi); why != "" {
		return refuse("%s: another user could change it", why)
	}
	for dir := filepath.Dir(exe); ; dir = filepath.Dir(dir) {
		di, err := os.Lstat(dir)
		if err != nil {
			return refuse("lies in %s, which cannot be read: %v", dir, err)
		}
		if di.Mode()&os.ModeSymlink != 0 {
			return refuse("lies in %s, a symlink another path could be swapped into", dir)
		}
		if why := replaceable(di); why != "" {
			return refuse("lies in %s, a directory that %s: another user could put another program in its place", dir, why)
		}
		if parent := filepath.Dir(dir); parent == dir {
			break
		}
	}
	if tmp, err := filepath.EvalSymlinks(os.TempDir()); err == nil && within(exe, tmp) {
		return refuse("lies in the temporary directory %s, which is cleaned out", tmp)
	}
	return nil
}

// within says whether path is dir or lies beneath it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
