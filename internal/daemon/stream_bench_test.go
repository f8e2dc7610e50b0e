//go:build unix

package daemon

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// rawClient is a benchmark client: it writes frames and reads lines
// without decoding them.
type rawClient struct {
	c  net.Conn
	br *bufio.Reader
}

func rawDial(b *testing.B, path string) *rawClient {
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	r := &rawClient{c: c, br: bufio.NewReaderSize(c, 1<<20)}
	r.send(initFrame)
	r.line()
	return r
}

func (r *rawClient) send(frame string) { r.c.Write([]byte(frame + "\n")) }

func (r *rawClient) line() []byte {
	l, err := r.br.ReadSlice('\n')
	if err != nil {
		panic(err)
	}
	return l
}

// untilLine reads until a line containing marker, returning how many
// lines it read.
func (r *rawClient) untilLine(marker []byte) int {
	n := 0
	for {
		n++
		if bytes.Contains(r.line(), marker) {
			return n
		}
	}
}

const streamChunks = 100000

// streamReader is the client side of the streaming benchmarks: the
// project's own client code (internal/client on jsonrpc.Conn, as the CLI
// and the ACP bridge read), counting session/update frames and telling
// when a turn_complete arrived.
type streamReader struct {
	c        *client.Client
	n        atomic.Int64
	complete chan struct{}
}

func (r *streamReader) handler() jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == protocol.MethodSessionUpdate {
			r.n.Add(1)
			if bytes.Contains(req.Params, []byte(`"turn_complete"`)) {
				r.complete <- struct{}{}
			}
		}
		return nil, nil
	})
}

// BenchmarkEventStream: one echo turn of 100,000 chunks per op, events
// persisted, delivered to 1 or 8 attached clients; events/s counts what
// the clients received together, events/s/client what each did.
func BenchmarkEventStream(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			path := benchDaemon(b)
			ctx := context.Background()
			rs := make([]*streamReader, clients)
			for i := range rs {
				r := &streamReader{complete: make(chan struct{}, 1)}
				c, err := client.Dial(ctx, path, client.Options{Handler: r.handler()})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { c.Close() })
				r.c = c
				rs[i] = r
				if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: "bench", Cwd: "/", KeepSiblings: true}, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				text := fmt.Sprintf("/chunks %d", streamChunks)
				if err := rs[0].c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: "bench", Prompt: &text}, nil); err != nil {
					b.Fatal(err)
				}
				for _, r := range rs {
					<-r.complete
				}
			}
			total := int64(0)
			for _, r := range rs {
				total += r.n.Load()
			}
			reportStream(b, total, clients, start, cpu0)
		})
	}
}

// BenchmarkEmptyTurn: prompt → turn_complete → result for an empty echo
// turn, persistence on; p50-ns is the median.
func BenchmarkEmptyTurn(b *testing.B) {
	c := rawDial(b, benchDaemon(b))
	c.send(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"empty","cwd":"/"},"id":1}`)
	c.line()
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c.send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"empty","prompt":""},"id":2}`)
		c.untilLine([]byte(`"id":2`))
		took = append(took, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkIdleSessions: 1,000 live sessions held by one client; reports
// the daemon's heap growth per session (the daemon runs in this process).
func BenchmarkIdleSessions(b *testing.B) {
	const n = 1000
	for i := 0; i < b.N; i++ {
		path := benchDaemon(b, func(c *config.Config) { c.Daemon.MaxSessions = n })
		c := rawDial(b, path)
		before := heap()
		for j := 0; j < n; j++ {
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"idle-%d-%d","cwd":"/","keep_siblings":true},"id":1}`, i, j))
			if l := c.line(); !bytes.Contains(l, []byte(`"result"`)) {
				b.Fatalf("session %d: %s", j, l)
			}
		}
		after := heap()
		c.send(`{"jsonrpc":"2.0","method":"status","id":3}`)
		if l := c.line(); !bytes.Contains(l, []byte(fmt.Sprintf(`"activeSessions":%d`, n))) {
			b.Fatalf("status: %.200s", l)
		}
		b.ReportMetric(float64(after-before)/n, "heap-B/session")
	}
}

func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkStreamFloor is the floor for BenchmarkEventStream: a bare
// server on the same kind of socket that writes the same session/update
// lines (seq counting up, then a turn_complete) through a 64 KiB buffered
// writer, the best way to write them, to 1 or 8 clients, read by the same
// client code. It persists nothing: the daemon's ratio to it is the cost
// of everything else (the store, commit before delivery, fan-out).
func BenchmarkStreamFloor(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			path := floorListen(b)
			rs := make([]*streamReader, clients)
			for i := range rs {
				nc, err := net.Dial("unix", path)
				if err != nil {
					b.Fatal(err)
				}
				r := &streamReader{complete: make(chan struct{}, 1)}
				r.c = client.New(nc, r.handler())
				defer r.c.Close()
				rs[i] = r
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				for _, r := range rs {
					r.c.Notify("turn", nil)
				}
				for _, r := range rs {
					<-r.complete
				}
			}
			total := int64(0)
			for _, r := range rs {
				total += r.n.Load()
			}
			reportStream(b, total, clients, start, cpu0)
		})
	}
}

// floorListen serves floorServe on a Unix socket until the benchmark
// ends; it returns the socket's path.
func floorListen(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "floor.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	serveEach(b, ln, floorServe)
	return path
}

// floorServe writes a turn's lines for each request line it reads.
func floorServe(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	bw := bufio.NewWriterSize(c, 64<<10)
	seq := 0
	for {
		if _, err := br.ReadSlice('\n'); err != nil {
			return
		}
		for j := 0; j < streamChunks; j++ {
			seq++
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","seq":%d,"type":"agent_message_chunk","turnId":"turn_0123456789abcdef","text":"ok "}}`+"\n", seq)
		}
		seq++
		fmt.Fprintf(bw, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","seq":%d,"type":"turn_complete","turnId":"turn_0123456789abcdef","outcome":"completed"}}`+"\n", seq)
		if bw.Flush() != nil {
			return
		}
	}
}

// reportStream reports a streaming run: events/s in all and per client,
// and the process's CPU per event.
func reportStream(b *testing.B, total int64, clients int, start time.Time, cpu0 int64) {
	took := time.Since(start).Seconds()
	b.ReportMetric(float64(total)/took, "events/s")
	b.ReportMetric(float64(total)/float64(clients)/took, "events/s/client")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(total), "cpu-ns/event")
}

// cpuTime is the process's CPU time (user and system) in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkEmptyTurnGrowth: an empty echo turn in a session of 10,000
// turns against one in a fresh session, interleaved; reports both medians
// and their ratio (the work of a turn must not grow with the session).
func BenchmarkEmptyTurnGrowth(b *testing.B) {
	const longTurns = 10000
	c := rawDial(b, benchDaemon(b))
	c.send(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"long","cwd":"/","keep_siblings":true},"id":1}`)
	c.line()
	for i := 0; i < longTurns; i++ {
		c.send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"long","prompt":"a few words of a turn"},"id":2}`)
		c.untilLine([]byte(`"id":2`))
	}
	c.send(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"fresh","cwd":"/","keep_siblings":true},"id":1}`)
	c.line()
	turn := func(sid string) time.Duration {
		t0 := time.Now()
		c.send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":""},"id":3}`)
		c.untilLine([]byte(`"id":3`))
		return time.Since(t0)
	}
	var long, fresh []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		long = append(long, turn("long"))
		fresh = append(fresh, turn("fresh"))
	}
	b.StopTimer()
	slices.Sort(long)
	slices.Sort(fresh)
	pl, pf := long[len(long)/2], fresh[len(fresh)/2]
	b.ReportMetric(float64(pl.Nanoseconds()), "long-p50-ns")
	b.ReportMetric(float64(pf.Nanoseconds()), "fresh-p50-ns")
	b.ReportMetric(float64(pl)/float64(pf), "long/fresh")
}

// BenchmarkEventStreamCPU: the 100,000-chunk turn read by 1 or 8 bare
// line readers (bufio, no decoding), so that the process's CPU per event
// delivered is nearly all the daemon's own: the store, commit before
// delivery, encoding, the fan-out and the echo model. Its floor is
// BenchmarkStreamFloorCPU.
func BenchmarkEventStreamCPU(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			path := benchDaemon(b)
			rs := make([]*rawClient, clients)
			for i := range rs {
				rs[i] = rawDial(b, path)
				rs[i].send(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"cpu","cwd":"/","keep_siblings":true},"id":1}`)
				rs[i].line()
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			var total atomic.Int64
			for i := 0; i < b.N; i++ {
				rs[0].send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"cpu","prompt":"/chunks %d"},"id":2}`, streamChunks))
				readAll(rs, &total)
				rs[0].untilLine([]byte(`"id":2`))
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(total.Load()), "cpu-ns/event")
		})
	}
}

// BenchmarkStreamFloorCPU: BenchmarkStreamFloor's server (the same lines
// through a 64 KiB buffered writer, nothing persisted) read by the same
// bare line readers as BenchmarkEventStreamCPU: the floor of the
// process's CPU per event delivered.
func BenchmarkStreamFloorCPU(b *testing.B) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			path := floorListen(b)
			rs := make([]*rawClient, clients)
			for i := range rs {
				c, err := net.Dial("unix", path)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { c.Close() })
				rs[i] = &rawClient{c: c, br: bufio.NewReaderSize(c, 1<<20)}
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			var total atomic.Int64
			for i := 0; i < b.N; i++ {
				for _, r := range rs {
					r.send(`{"jsonrpc":"2.0","method":"turn"}`)
				}
				readAll(rs, &total)
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(total.Load()), "cpu-ns/event")
		})
	}
}

// readAll reads every client's lines up to its turn_complete, each on a
// goroutine of its own, adding the count to total.
func readAll(rs []*rawClient, total *atomic.Int64) {
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() { total.Add(int64(r.untilLine([]byte(`"turn_complete"`)))) })
	}
	wg.Wait()
}

// BenchmarkTurnWithHungMCPServer: an empty turn's latency (p50-ns) on a
// daemon with no MCP server (none, the floor) and on one whose
// configured server hangs at start for an hour (hung), in the same run:
// after the first turn_wait_ms of that start the turns cost the same.
func BenchmarkTurnWithHungMCPServer(b *testing.B) {
	bin := mcpServer(b)
	for _, hung := range []bool{false, true} {
		name := "none"
		if hung {
			name = "hung"
		}
		b.Run(name, func(b *testing.B) {
			c := rawDial(b, benchDaemon(b, func(c *config.Config) {
				if hung {
					c.MCP.Servers = map[string]config.MCPServer{"hung": {Command: bin, Args: []string{"-hang-start"}, StartTimeoutSecs: 3600}}
				}
			}))
			c.send(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"t","cwd":"/"},"id":1}`)
			c.line()
			// The first turn, which may wait out the server's first
			// turn_wait_ms, is not measured.
			c.send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"t","prompt":""},"id":2}`)
			c.untilLine([]byte(`"id":2`))
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				c.send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"t","prompt":""},"id":2}`)
				c.untilLine([]byte(`"id":2`))
				took = append(took, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
		})
	}
}
