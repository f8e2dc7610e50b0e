//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"
)

func available() Support {
	return Support{EnforcedBy: "none", Reason: "no sandbox for " + runtime.GOOS + " yet"}
}

func run(p Policy, argv []string) int {
	fmt.Fprintln(os.Stderr, "zeroclaw sandbox: no sandbox for "+runtime.GOOS+" yet")
	return 126
}
