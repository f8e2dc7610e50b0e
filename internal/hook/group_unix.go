//go:build !windows

package hook

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in its own process group, all of which is killed
// when it must stop (its timeout).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
