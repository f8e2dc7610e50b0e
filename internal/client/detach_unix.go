//go:build unix

package client

import (
	"os"
	"os/exec"
	"syscall"
)

// detach puts the daemon in its own session so the terminal's Ctrl-C does
// not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// stopStarted asks a daemon this client started, and no longer needs,
// to stop.
func stopStarted(p *os.Process) { p.Signal(syscall.SIGTERM) }
