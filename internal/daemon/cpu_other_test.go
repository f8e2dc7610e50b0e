//go:build !unix

package daemon

// cpuTime is unknown here (stream_bench_test.go reads it on Unix): 0,
// and the benchmarks leave their CPU metric out.
func cpuTime() int64 { return 0 }
