//go:build unix && !linux

package metrics

import "syscall"

// readProcess reads the CPU time from getrusage (the sizes and open files
// are Linux's /proc only).
func readProcess() processStats {
	p := processStats{cpuSeconds: -1, openFDs: -1}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		p.cpuSeconds = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	return p
}
