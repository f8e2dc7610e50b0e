//go:build !windows

package client_test

import (
	"errors"
	"syscall"
)

// processGone says whether pid has exited and been reaped.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
