package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// The Go runtime hands memory the heap no longer uses back to the OS
// slowly; after a burst (10,000 connections come and gone) a daemon
// would keep its peak resident size for minutes. Every releaseEvery, if
// more than releaseOver bytes of heap are free but not yet returned, they
// are returned at once (a forced collection of a heap that is mostly
// free: cheap, and at most once a releaseEvery).
const (
	releaseEvery = 15 * time.Second
	releaseOver  = 4 << 20
)

// releaseMemory runs until ctx ends.
func releaseMemory(ctx context.Context) {
	t := time.NewTicker(releaseEvery)
	defer t.Stop()
	var ms runtime.MemStats
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// ReadMemStats rather than runtime/metrics: the same figure, and
		// runtime/metrics' package initialisation is paid by every
		// process of this binary (the ACP bridge, the CLI) at start.
		runtime.ReadMemStats(&ms)
		if ms.HeapIdle-ms.HeapReleased > releaseOver {
			debug.FreeOSMemory()
		}
	}
}
