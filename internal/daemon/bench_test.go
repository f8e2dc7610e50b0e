package daemon

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

const statusFrame = `{"jsonrpc":"2.0","method":"status","params":{},"id":1}` + "\n"

// BenchmarkEchoFloor is the floor of RoundTrip: a bare NDJSON server over
// the same kind of socket, one line in, and out the daemon's own answer
// to status (so both move the same bytes; it used to echo the request,
// a tenth of the answer's size).
func BenchmarkEchoFloor(b *testing.B) {
	roundTrips(b, answerFloor(b, statusAnswer(b)), false)
}

// statusAnswer is a fresh daemon's answer line to statusFrame.
func statusAnswer(b *testing.B) []byte {
	dirs, _ := config.ResolveDirs(filepath.Join(testdir.New(b), "a"), func(string) string { return "" })
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Dirs: dirs, Config: config.Default(func(string) string { return "" }), Ready: func(string) { close(ready) }})
	}()
	<-ready
	defer func() { cancel(); <-done }()
	c, err := transport.Dial(context.Background(), dirs.Endpoint)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	c.Write([]byte(initFrame + "\n"))
	br.ReadSlice('\n')
	c.Write([]byte(statusFrame))
	line, err := br.ReadBytes('\n')
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// answerFloor serves a bare NDJSON server on the platform's endpoint (a
// Unix socket; a named pipe on Windows, through the same transport as
// the daemon) that answers each line with reply (nil: the line itself),
// and returns its path.
func answerFloor(b *testing.B, reply []byte) string {
	path := config.DefaultEndpoint(runtime.GOOS, filepath.Join(testdir.New(b), "echo"))
	ln, err := transport.Listen(path, "")
	if err != nil {
		b.Fatal(err)
	}
	serveEach(b, ln, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			l, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if reply != nil {
				l = reply
			}
			c.Write(l)
		}
	})
	return path
}

// serveEach serves each connection ln accepts on a goroutine of its own,
// until the benchmark ends and closes ln.
func serveEach(b *testing.B, ln net.Listener, serve func(net.Conn)) {
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
}

// benchDaemon runs a daemon in-process and returns its socket path.
func benchDaemon(b *testing.B, tune ...func(*config.Config)) string {
	dirs, _ := config.ResolveDirs(filepath.Join(testdir.New(b), "c"), func(string) string { return "" })
	cfg := config.Default(func(string) string { return "" })
	for _, f := range tune {
		f(cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Dirs: dirs, Config: cfg, Ready: func(string) { close(ready) }})
	}()
	<-ready
	b.Cleanup(func() { cancel(); <-done })
	return dirs.Endpoint
}

// BenchmarkRoundTrip: sequential status calls over the daemon's socket.
func BenchmarkRoundTrip(b *testing.B) {
	roundTrips(b, benchDaemon(b), true)
}

// The throughput pair: 64 connections, each a sequential caller, sharing
// b.N calls; lines/s is the aggregate. The floor answers each line with
// the daemon's own answer to status, as EchoFloor does.
const throughputConns = 64

func BenchmarkThroughputFloor(b *testing.B) { throughput(b, answerFloor(b, statusAnswer(b)), false) }
func BenchmarkThroughput(b *testing.B)      { throughput(b, benchDaemon(b), true) }

func throughput(b *testing.B, path string, init bool) {
	type peer struct {
		c  net.Conn
		br *bufio.Reader
	}
	peers := make([]peer, throughputConns)
	for i := range peers {
		c, err := transport.Dial(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		peers[i] = peer{c, bufio.NewReader(c)}
		if init {
			c.Write([]byte(initFrame + "\n"))
			peers[i].br.ReadSlice('\n')
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	frame := []byte(statusFrame)
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for _, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := p.c.Write(frame); err != nil {
					b.Error(err)
					return
				}
				if _, err := p.br.ReadSlice('\n'); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "lines/s")
	reportCPU(b, cpu0)
}

// reportCPU reports the process's CPU (client and server, both in it)
// per call since cpu0: less moved than the wall clock by other work on
// a shared machine.
func reportCPU(b *testing.B, cpu0 int64) {
	if cpu0 != 0 {
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/call")
	}
}

// BenchmarkConnectInitialize: dial a warm daemon and complete the
// handshake; p50-ns is the median of the b.N tries.
func BenchmarkConnectInitialize(b *testing.B) {
	path := benchDaemon(b)
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c, err := transport.Dial(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		c.Write([]byte(initFrame + "\n"))
		if _, err := bufio.NewReader(c).ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
		c.Close()
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
}

func roundTrips(b *testing.B, path string, init bool) {
	c, err := transport.Dial(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if init {
		c.Write([]byte(initFrame + "\n"))
		br.ReadSlice('\n')
	}
	frame := []byte(statusFrame)
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}
