//go:build !windows

package background

import (
	"os/exec"
	"syscall"
)

func signalOf(ee *exec.ExitError) string {
	if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return st.Signal().String()
	}
	return ""
}
