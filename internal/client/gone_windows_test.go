package client_test

import "os"

// processGone says whether pid has exited (FindProcess opens a handle to
// a live process only).
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	p.Release()
	return false
}
