package tool

import "os/exec"

// ownGroup: on Windows the default cancel kills the process itself.
func ownGroup(cmd *exec.Cmd) { cmd.WaitDelay = KillGrace }
