package mcptools

import (
	"os"
	"os/exec"
)

// ownGroup: Windows has no process groups to signal (a server's
// children are not ended with it yet).
func ownGroup(*exec.Cmd) {}

// signalGroup signals the process itself.
func signalGroup(p *os.Process, sig os.Signal) error { return p.Signal(sig) }
