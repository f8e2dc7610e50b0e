//go:build !windows

package tool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ShellProgram runs the shell tool's commands (as ShellProgram -c CMD).
const ShellProgram = "bash"

func shellCommand(ctx context.Context, shell, script string) *exec.Cmd {
	return exec.CommandContext(ctx, shell, ShellArgs(shell, script)...)
}

// started: the group exists from the start (Setpgid).
func started(cmd *exec.Cmd) {}

// ownGroup runs cmd in its own process group; on cancel the whole group
// gets SIGTERM, then SIGKILL after KillGrace.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		time.AfterFunc(KillGrace, func() { syscall.Kill(-pgid, syscall.SIGKILL) })
		return nil
	}
}

// killGroup kills what is left of a finished command's process group.
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }

// gateable: a command can be held at its start by a pipe on fd 3.
const gateable = true

// signalGroup sends sig to a background process's group.
func signalGroup(pgid int, sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return syscall.Kill(-pgid, syscall.SIGTERM)
	}
	return syscall.Kill(-pgid, s)
}

// SignalNamed is the signal process_kill names ("": TERM).
func SignalNamed(name string) (os.Signal, error) {
	switch strings.TrimPrefix(strings.ToUpper(name), "SIG") {
	case "", "TERM":
		return syscall.SIGTERM, nil
	case "KILL":
		return syscall.SIGKILL, nil
	case "INT":
		return syscall.SIGINT, nil
	case "HUP":
		return syscall.SIGHUP, nil
	}
	return nil, fmt.Errorf("signal %q: TERM, KILL, INT or HUP", name)
}
