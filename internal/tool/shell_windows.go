package tool

import "os/exec"

// ownGroup: on Windows the default cancel kills the process itself.
func ownGroup(cmd *exec.Cmd) {}

// killGroup: no process groups here; the process has exited.
func killGroup(pid int) {}

// gateable: no extra descriptors for children here.
const gateable = false
