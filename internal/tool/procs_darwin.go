package tool

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// startTime is a process's start time in microseconds since the epoch.
func startTime(pid int) (uint64, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return 0, false
	}
	tv := kp.Proc.P_starttime
	return uint64(tv.Sec)*1e6 + uint64(tv.Usec), true
}

func killStale(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
