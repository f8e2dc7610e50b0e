//go:build unix

package attach

import (
	"errors"
	"syscall"
)

const (
	oNonblock = syscall.O_NONBLOCK
	oNofollow = syscall.O_NOFOLLOW
)

// isLoop reports the error of O_NOFOLLOW on a symlink.
func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
