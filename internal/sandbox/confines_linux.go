package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Confines says whether process pid runs under a sandbox shim: it, or
// one of its ancestors, is a shim (this binary run with ShimArg). The
// daemon asks it of every local connection's peer: what the agent's
// commands start holds no authority over the daemon. A command cannot
// change what its ancestors' command lines say; where the shim gives
// it namespaces of its own (Isolation) it cannot leave its tree either,
// and cannot reach the socket at all (Policy.Hide).
func Confines(pid int) bool {
	for range 128 {
		if pid <= 1 {
			return false
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return false
		}
		if args := bytes.Split(b, []byte{0}); len(args) > 1 && string(args[1]) == ShimArg {
			return true
		}
		if pid = parentOf(pid); pid == 0 {
			return false
		}
	}
	return false
}

// parentOf is pid's parent (0: unknown).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
