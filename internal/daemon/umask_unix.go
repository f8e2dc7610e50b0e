//go:build unix

package daemon

import "syscall"

// privateUmask makes every file the daemon creates private (0600 files,
// 0700 directories) and returns the umask it replaced, which commands the
// agent runs get back.
func privateUmask() int { return syscall.Umask(0o077) }
