package mcptools

import (
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ownGroup: Windows has no process groups to signal; the server's tree
// is held by a Job Object instead (joinJob).
func ownGroup(*exec.Cmd) {}

// signalGroup signals the process itself.
func signalGroup(p *os.Process, sig os.Signal) error { return p.Signal(sig) }

// joinJob puts a started server in a Job Object that kills every process
// in it when its last handle closes: the daemon's, when it ends or dies.
// The func it returns ends what is left of the tree, once the server is
// done with (a child started before the assignment escapes it).
func joinJob(cmd *exec.Cmd) (end func()) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return func() {}
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return func() {}
	}
	defer windows.CloseHandle(p)
	if windows.AssignProcessToJobObject(job, p) != nil {
		windows.CloseHandle(job)
		return func() {}
	}
	return func() {
		windows.TerminateJobObject(job, 1)
		windows.CloseHandle(job)
	}
}
