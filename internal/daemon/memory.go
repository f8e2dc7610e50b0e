package daemon

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The Go runtime hands memory the heap no longer uses back to the OS
// slowly; after a burst (10,000 connections come and gone) a daemon
// would keep its peak resident size for minutes. Every releaseEvery, if
// more than releaseOver bytes of heap are free but not yet returned, they
// are returned at once.
const (
	releaseEvery = 15 * time.Second
	releaseOver  = 32 << 20
)

// releaseMemory runs until ctx ends.
func releaseMemory(ctx context.Context) {
	t := time.NewTicker(releaseEvery)
	defer t.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > releaseOver {
			debug.FreeOSMemory()
		}
	}
}
