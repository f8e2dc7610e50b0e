//go:build windows

package client

import "os/exec"

func detach(cmd *exec.Cmd) {}
