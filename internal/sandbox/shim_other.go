//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

func available() Support {
	if runtime.GOOS == "windows" {
		// What is enforced, exactly: the commands' Job Objects (see
		// internal/tool) end them with the daemon; nothing confines
		// their writes or their network.
		return Support{EnforcedBy: "none", Reason: "no sandbox for windows yet: writes and the network are not confined (a Job Object only ends each command's processes when it ends or the daemon does)"}
	}
	return Support{EnforcedBy: "none", Reason: "no sandbox for " + runtime.GOOS + " yet"}
}

func run(p Policy, argv []string) int {
	fmt.Fprintln(os.Stderr, "zeroclaw sandbox: no sandbox for "+runtime.GOOS+" yet")
	return 126
}

// Supervises says whether the shim can supervise an unconfined command
// (Supervise): not here yet.
func Supervises() bool { return false }

func isolation() string { return "no namespaces on " + runtime.GOOS }

// Confines says whether process pid runs under a sandbox shim: never
// known here (no shim confines commands).
func Confines(pid int) bool { return false }
