package metrics

import (
	"bytes"
	"os"
	"strconv"
)

// readProcess reads /proc/self/stat (CPU ticks, virtual and resident
// size) and counts /proc/self/fd.
func readProcess() processStats {
	p := processStats{cpuSeconds: -1, openFDs: -1}
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command's closing parenthesis, from
		// field 3 (state): utime is 14, stime 15, vsize 23, rss 24.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			f := bytes.Fields(b[i+1:])
			field := func(n int) uint64 {
				if n-3 >= len(f) {
					return 0
				}
				v, _ := strconv.ParseUint(string(f[n-3]), 10, 64)
				return v
			}
			const ticks = 100 // USER_HZ, 100 on every Linux the daemon runs on
			p.cpuSeconds = float64(field(14)+field(15)) / ticks
			p.vsize = field(23)
			p.rss = field(24) * uint64(os.Getpagesize())
		}
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if _, rest, ok := bytes.Cut(b, []byte("\nThreads:")); ok {
			line, _, _ := bytes.Cut(rest, []byte("\n"))
			p.threads, _ = strconv.Atoi(string(bytes.TrimSpace(line)))
		}
	}
	if es, err := os.ReadDir("/proc/self/fd"); err == nil {
		p.openFDs = len(es)
	}
	return p
}
