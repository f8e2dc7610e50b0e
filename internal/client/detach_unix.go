//go:build unix

package client

import (
	"os/exec"
	"syscall"
)

// detach puts the daemon in its own session so the terminal's Ctrl-C does
// not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
