// Package testdir gives tests a temporary directory that is removed when
// the test ends, on every platform the tests run on. It is
// testing.TB.TempDir, except under Windows: there Go's RemoveAll fails
// under Wine ("unlinkat: Invalid function": Wine has no POSIX delete
// semantics), failing every test that used TempDir, so the tree is removed
// file by file, best effort.
package testdir

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// New returns a fresh directory, removed when tb ends.
func New(tb testing.TB) string {
	if runtime.GOOS != "windows" {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp("", "zc-test-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		var paths []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
			paths = append(paths, p)
			return nil
		})
		for i := len(paths) - 1; i >= 0; i-- {
			os.Remove(paths[i])
		}
	})
	return dir
}
