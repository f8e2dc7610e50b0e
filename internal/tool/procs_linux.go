package tool

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// startTime is a process's start time (clock ticks since boot, field 22
// of /proc/<pid>/stat).
func startTime(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	return n, err == nil
}

func killStale(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
