package tool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ShellProgram runs the shell tool's commands: cmd /d /s /c "CMD".
const ShellProgram = "cmd"

// shellCommand runs script with shell. cmd.exe's command line is given
// whole: it does not parse arguments as Go's quoting expects, and with /s
// it takes everything between the first and the last quote as is.
func shellCommand(ctx context.Context, shell, script string) *exec.Cmd {
	attr := &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	var cmd *exec.Cmd
	if shell == "cmd" {
		cmd = exec.CommandContext(ctx, shell)
		attr.CmdLine = `cmd /d /s /c "` + script + `"`
	} else {
		cmd = exec.CommandContext(ctx, shell, ShellArgs(shell, script)...)
	}
	cmd.SysProcAttr = attr
	return cmd
}

// jobs holds the Job Object of each running command, by pid: the whole
// process tree a command starts is in it, and ends with it.
var jobs sync.Map

// ownGroup makes a cancel end the command's whole tree (its job).
func ownGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		if cmd.Process != nil {
			killGroup(cmd.Process.Pid)
		}
		return nil
	}
}

// started puts the command in a Job Object that kills every process in
// it when its last handle closes. (A child started before the assignment
// escapes it: cmd.exe has barely begun then.)
func started(cmd *exec.Cmd) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return
	}
	defer windows.CloseHandle(p)
	if windows.AssignProcessToJobObject(job, p) != nil {
		windows.CloseHandle(job)
		return
	}
	jobs.Store(cmd.Process.Pid, job)
}

// killGroup ends what is left of the command's tree.
func killGroup(pid int) {
	if j, ok := jobs.LoadAndDelete(pid); ok {
		job := j.(windows.Handle)
		windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
	}
}

// gateable: no extra descriptors for children here.
const gateable = false

// signalGroup: Windows has no signals to send a tree; its Job Object is
// ended.
func signalGroup(pid int, _ os.Signal) error {
	killGroup(pid)
	return nil
}

// SignalNamed: every signal ends the process tree here (nil: no grace).
func SignalNamed(name string) (os.Signal, error) {
	switch strings.TrimPrefix(strings.ToUpper(name), "SIG") {
	case "", "TERM", "KILL", "INT", "HUP":
		return nil, nil
	}
	return nil, fmt.Errorf("signal %q: TERM, KILL, INT or HUP", name)
}
