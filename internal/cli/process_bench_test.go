//go:build linux

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
	"golang.org/x/sys/unix"
)

// BenchmarkProcessOutput: a background process prints 100 MB as fast as
// it can (cat of a 100 MB file, through the sandbox as every command,
// started by a turn), and its output reaches the ring (what
// process/output reads) and its file: once followed by a client through
// process/output (waitMs, 64 KiB a read) as fast as it reads, once
// waited for alone. Its time is the daemon's record of it, from its
// start (the sandbox's shim exec'd) to its end with all its output
// taken in. The floor is the same cat exec'd into a pipe that Go reads
// to its end as the daemon does (a 1 MiB pipe, 256 KiB reads), writing
// nothing. Reports the rates, the ratios (the daemon's over the
// floor's), the bytes the follower missed (the ring, 1 MiB, dropped
// them before it read them) and read, the turn's and the follower's
// times, and the daemon's resident memory before and at its peak.
func BenchmarkProcessOutput(b *testing.B) {
	const size = 100 << 20
	dir := filepath.Join(testdir.New(b), "cfg")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	work := testdir.New(b)
	file := filepath.Join(work, "big.txt")
	line := []byte(strings.Repeat("0123456789abcdef", 7) + "\n") // 113 bytes, text as a build prints
	os.WriteFile(file, bytes.Repeat(line, size/len(line)+1)[:size], 0o600)
	d := startDaemonB(b, dir)
	defer func() { d.Process.Kill(); d.Wait() }()
	ctx := context.Background()
	c, err := client.Dial(ctx, filepath.Join(dir, "data", "daemon.sock"), client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	before := statusKB(b, d.Process.Pid, "VmRSS:")
	var floor, followed, alone, followedWall, floorStart, startCost time.Duration
	var dropped, received int64
	var promptTook time.Duration
	buf := make([]byte, 256<<10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The floor.
		t0 := time.Now()
		cat := exec.Command("cat", file)
		out, w, _ := os.Pipe()
		if rc, err := out.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
		}
		cat.Stdout = w
		if err := cat.Start(); err != nil {
			b.Fatal(err)
		}
		w.Close()
		if n := readAll(out, buf); n != size {
			b.Fatalf("cat gave %d bytes", n)
		}
		out.Close()
		cat.Wait()
		floor += time.Since(t0)

		// What starting costs, output aside: `true` exec'd, and run as a
		// background process (the sandbox's shim exec'd, then true).
		t0 = time.Now()
		exec.Command("true").Run()
		floorStart += time.Since(t0)
		startCost += runAlone(b, c, work, "true")

		// The daemon: followed by a client as fast as it reads, then
		// (the rate output reaches the ring and file alone) waited for.
		for _, follow := range []bool{true, false} {
			t0 = time.Now()
			sid, id := startAlone(b, c, work, "cat "+file)
			promptTook += time.Since(t0)
			var since int64
			for {
				p := protocol.ProcessOutputParams{SessionID: sid, ID: id, Since: since, WaitMs: 1000}
				if !follow {
					p.Since = 1 << 40 // past the end: it waits for the end
				}
				var o protocol.ProcessOutputResult
				if err := c.Call(ctx, protocol.MethodProcessOutput, p, &o); err != nil {
					b.Fatal(err)
				}
				if !follow {
					if o.State != "running" {
						since = o.Next
						break
					}
					continue
				}
				dropped += o.Dropped
				received += int64(len(o.Output))
				if o.Next == since && o.State != "running" {
					break
				}
				since = o.Next
			}
			if since != size {
				b.Fatalf("process/output ended at %d of %d bytes", since, size)
			}
			// How long it ran: from its start to its end, all its output
			// taken in (the daemon's own record of it).
			took := ranFor(b, c, sid, id)
			if follow {
				followed += took
				followedWall += time.Since(t0)
			} else {
				alone += took
			}
		}
	}
	b.StopTimer()
	mb := float64(size) * float64(b.N) / (1 << 20)
	b.ReportMetric(mb/floor.Seconds(), "floor-MB/s")
	b.ReportMetric(mb/followed.Seconds(), "followed-MB/s")
	b.ReportMetric(floor.Seconds()/followed.Seconds(), "ratio-followed")
	b.ReportMetric(mb/alone.Seconds(), "alone-MB/s")
	b.ReportMetric(floor.Seconds()/alone.Seconds(), "ratio-alone")
	// The rate once started: each side's start cost taken off.
	b.ReportMetric((floor-floorStart).Seconds()/(alone-startCost).Seconds(), "ratio-streaming")
	b.ReportMetric(float64(startCost.Microseconds())/1000/float64(b.N), "start-ms")
	b.ReportMetric(float64(dropped)/float64(b.N)/(1<<20), "dropped-MB/run")
	b.ReportMetric(float64(received)/float64(b.N)/(1<<20), "read-MB/run")
	b.ReportMetric(float64(promptTook.Milliseconds())/float64(2*b.N), "prompt-ms/run")
	b.ReportMetric(float64(followedWall.Milliseconds())/float64(b.N), "followed-wall-ms/run")
	b.ReportMetric(float64(before)/1024, "rss-before-MB")
	b.ReportMetric(float64(statusKB(b, d.Process.Pid, "VmHWM:"))/1024, "rss-peak-MB")
}

// startAlone starts command as a background process of a new session in
// cwd (a turn's tool call: alone in its session, no other process's end
// is told to its model first) and returns the session and the process.
func startAlone(b *testing.B, c *client.Client, cwd, command string) (sid, id string) {
	ctx := context.Background()
	var ns protocol.SessionNewResult
	if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{Cwd: cwd, Mode: "code"}, &ns); err != nil {
		b.Fatal(err)
	}
	sid = ns.SessionID
	prompt := fmt.Sprintf(`/tool shell {"command":%q,"background":true}`, command)
	var pr protocol.SessionPromptResult
	if err := c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: sid, Prompt: &prompt}, &pr); err != nil {
		b.Fatal(err)
	}
	var list protocol.ProcessListResult
	if err := c.Call(ctx, protocol.MethodProcessList, protocol.SessionRef{SessionID: sid}, &list); err != nil {
		b.Fatal(err)
	}
	if len(list.Processes) != 1 {
		b.Fatalf("the session's processes: %v (%v)", list.Processes, pr)
	}
	return sid, list.Processes[0].ID
}

// ranFor is how long process id ran (the daemon's record: its start to
// its end, all its output taken in), once it has ended; its session is
// closed then.
func ranFor(b *testing.B, c *client.Client, sid, id string) time.Duration {
	defer c.Call(context.Background(), protocol.MethodSessionClose, protocol.SessionRef{SessionID: sid}, nil)
	ctx := context.Background()
	for {
		var o protocol.ProcessOutputResult
		if err := c.Call(ctx, protocol.MethodProcessOutput, protocol.ProcessOutputParams{SessionID: sid, ID: id, Since: 1 << 40, WaitMs: 1000}, &o); err != nil {
			b.Fatal(err)
		}
		if o.State != "running" {
			break
		}
	}
	var list protocol.ProcessListResult
	if err := c.Call(ctx, protocol.MethodProcessList, protocol.SessionRef{SessionID: sid}, &list); err != nil {
		b.Fatal(err)
	}
	for _, p := range list.Processes {
		if p.ID == id {
			started, _ := time.Parse(time.RFC3339Nano, p.StartedAt)
			ended, _ := time.Parse(time.RFC3339Nano, p.EndedAt)
			return ended.Sub(started)
		}
	}
	b.Fatalf("no process %s", id)
	return 0
}

// runAlone runs command as a background process and returns how long it
// ran.
func runAlone(b *testing.B, c *client.Client, cwd, command string) time.Duration {
	sid, id := startAlone(b, c, cwd, command)
	return ranFor(b, c, sid, id)
}

// readAll reads r to its end with buf (as large reads as the daemon's;
// io.Discard's ReadFrom would read 8 KiB at a time) and says how much.
func readAll(r io.Reader, buf []byte) int64 {
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err != nil {
			return n
		}
	}
}
