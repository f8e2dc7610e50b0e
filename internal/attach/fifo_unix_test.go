//go:build unix

package attach

import (
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path and returns path.
func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
