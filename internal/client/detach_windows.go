//go:build windows

package client

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// detach starts the daemon without a console of its own and outside the
// caller's console process group, so it outlives the client and a Ctrl-C
// in the client's console does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS, HideWindow: true}
}

// stopStarted stops a daemon this client started and no longer needs
// (it has served nobody: there is nothing to end gracefully).
func stopStarted(p *os.Process) { p.Kill() }
