//go:build !windows

package mcptools

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup runs a stdio server in its own process group: a stop signal
// reaches all of it (the shim that supervises it, the server, what the
// server started in its group).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group p leads.
func signalGroup(p *os.Process, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return p.Signal(sig)
	}
	return syscall.Kill(-p.Pid, s)
}

// joinJob: the process group and the shim's supervision hold the tree
// here; nothing is left to end once the server is done with.
func joinJob(*exec.Cmd) (end func()) { return func() {} }
