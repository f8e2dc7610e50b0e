package cli

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// BenchmarkDaemonStart: from exec of `zeroclaw daemon` to its socket
// accepting a connection.
func BenchmarkDaemonStart(b *testing.B) {
	exe, _ := os.Executable()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(testdir.New(b), "cfg")
		sock := filepath.Join(dir, "data", "daemon.sock")
		cmd := exec.Command(exe, "daemon")
		cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		for {
			c, err := net.Dial("unix", sock)
			if err == nil {
				c.Close()
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		b.StopTimer()
		cmd.Process.Kill()
		cmd.Wait()
		b.StartTimer()
	}
}

// BenchmarkIdleConnections reports the daemon's resident memory idle and
// the growth with 1,000 initialized idle connections (Linux only).
func BenchmarkIdleConnections(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	dir := filepath.Join(testdir.New(b), "cfg")
	for i := 0; i < b.N; i++ {
		cmd := startDaemonB(b, dir)
		time.Sleep(200 * time.Millisecond)
		idle := rssKB(b, cmd.Process.Pid)
		conns := initialized(b, dir, 1000)
		time.Sleep(200 * time.Millisecond)
		busy := rssKB(b, cmd.Process.Pid)
		b.ReportMetric(float64(idle)/1024, "idle-MB")
		b.ReportMetric(float64(busy-idle)/1024, "MB/1000conns")
		for _, c := range conns {
			c.Close()
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// initialized opens n connections to the daemon of config dir dir and
// initializes each.
func initialized(b *testing.B, dir string, n int) []net.Conn {
	var conns []net.Conn
	for range n {
		c, err := net.Dial("unix", filepath.Join(dir, "data", "daemon.sock"))
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		c.Write([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":1}` + "\n"))
		if _, err := bufio.NewReader(c).ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	return conns
}

// startDaemonB runs `zeroclaw daemon` with config dir dir until its socket
// accepts.
func startDaemonB(b *testing.B, dir string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "daemon")
	cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("unix", filepath.Join(dir, "data", "daemon.sock"))
		if err == nil {
			c.Close()
			return cmd
		}
		if time.Now().After(deadline) {
			b.Fatal("daemon not ready")
		}
		time.Sleep(time.Millisecond)
	}
}

func rssKB(b *testing.B, pid int) int { return statusKB(b, pid, "VmRSS:") }

// statusKB is a /proc/PID/status figure in kB (VmRSS:, VmHWM:).
func statusKB(b *testing.B, pid int, key string) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatal("no " + key)
	return 0
}

// acpFloor is the floor of BenchmarkACPSpawnInitialize: the least a Go
// program can do to answer an editor's initialize (read the line, decode
// it, encode the answer, write it).
const acpFloor = `package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	line, _ := r.ReadBytes('\n')
	var req struct {
		ID     json.RawMessage ` + "`json:\"id\"`" + `
		Method string          ` + "`json:\"method\"`" + `
		Params json.RawMessage ` + "`json:\"params\"`" + `
	}
	json.Unmarshal(line, &req)
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
		"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": true}}})
	os.Stdout.Write(append(out, '\n'))
	r.ReadBytes('\n')
}
`

// buildB builds a main package (a directory, or the source of one) into
// dir and returns the binary.
func buildB(b *testing.B, dir, pkg, src string) string {
	out := filepath.Join(dir, filepath.Base(pkg))
	if src != "" {
		os.MkdirAll(pkg, 0o755)
		os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644)
		os.WriteFile(filepath.Join(pkg, "go.mod"), []byte("module floor\n\ngo 1.24\n"), 0o644)
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = pkg
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out
}

// BenchmarkACPSpawnInitialize: spawn `zeroclaw acp` (as an editor does at
// every agent start, the real binary, built for the run) and wait for its
// answer to initialize, with a warm daemon, against the same for the
// least Go program that answers (acpFloor), the two interleaved; reports
// both medians and their ratio, and the median of `zeroclaw --version`
// run to its exit (the binary doing nothing of its own).
func BenchmarkACPSpawnInitialize(b *testing.B) {
	dir := filepath.Join(testdir.New(b), "cfg")
	d := startDaemonB(b, dir)
	defer func() { d.Process.Kill(); d.Wait() }()
	bin := testdir.New(b)
	root, _ := filepath.Abs("../../cmd/zeroclaw")
	zc := buildB(b, bin, root, "")
	floor := buildB(b, bin, filepath.Join(testdir.New(b), "floor"), acpFloor)
	spawn := func(exe string, args ...string) time.Duration {
		t0 := time.Now()
		cmd := exec.Command(exe, args...)
		cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		in.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"))
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.Contains(line, `"protocolVersion":1`) {
			b.Fatalf("%s: initialize answer %q: %v", exe, line, err)
		}
		took := time.Since(t0)
		in.Close()
		cmd.Wait()
		return took
	}
	// The same binary doing nothing: `zeroclaw --version`, to its exit
	// (what any command of this binary pays before its own work).
	version := func() time.Duration {
		t0 := time.Now()
		if out, err := exec.Command(zc, "--version").Output(); err != nil || len(out) == 0 {
			b.Fatalf("zeroclaw --version: %v", err)
		}
		return time.Since(t0)
	}
	spawn(zc, "acp") // the page cache warm for both
	spawn(floor)
	var zcs, floors, versions []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		zcs = append(zcs, spawn(zc, "acp"))
		floors = append(floors, spawn(floor))
		versions = append(versions, version())
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Nanoseconds()) }
	z, f := p50(zcs), p50(floors)
	b.ReportMetric(z, "acp-p50-ns")
	b.ReportMetric(f, "floor-p50-ns")
	b.ReportMetric(p50(versions), "version-p50-ns")
	b.ReportMetric(z/f, "acp/floor")
}

// BenchmarkConnectionChurn: 10,000 initialized connections come and go;
// reports the daemon's resident memory idle before, at the peak, and a
// minute after they left, and that last as a ratio to idle (Linux only;
// takes a minute a run).
func BenchmarkConnectionChurn(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	dir := filepath.Join(testdir.New(b), "cfg")
	for i := 0; i < b.N; i++ {
		cmd := startDaemonB(b, dir)
		time.Sleep(200 * time.Millisecond)
		idle := rssKB(b, cmd.Process.Pid)
		conns := initialized(b, dir, 10000)
		peak := rssKB(b, cmd.Process.Pid)
		for _, c := range conns {
			c.Close()
		}
		time.Sleep(time.Minute)
		after := rssKB(b, cmd.Process.Pid)
		b.ReportMetric(float64(idle)/1024, "idle-MB")
		b.ReportMetric(float64(peak)/1024, "peak-MB")
		b.ReportMetric(float64(after)/1024, "after-MB")
		b.ReportMetric(float64(after)/float64(idle), "after/idle")
		cmd.Process.Kill()
		cmd.Wait()
	}
}

// BenchmarkPromptVsVersion: `zeroclaw prompt hi` (connect, open a
// session, one echo turn, print the reply) against a warm daemon, and
// `zeroclaw --version` (the process start alone), the real binary built
// for the run, the two interleaved; reports both medians and their ratio.
func BenchmarkPromptVsVersion(b *testing.B) {
	dir := filepath.Join(testdir.New(b), "cfg")
	d := startDaemonB(b, dir)
	defer func() { d.Process.Kill(); d.Wait() }()
	root, _ := filepath.Abs("../../cmd/zeroclaw")
	zc := buildB(b, testdir.New(b), root, "")
	cwd := testdir.New(b)
	run := func(args ...string) time.Duration {
		cmd := exec.Command(zc, args...)
		cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir)
		cmd.Dir = cwd
		t0 := time.Now()
		out, err := cmd.Output()
		took := time.Since(t0)
		if err != nil || len(out) == 0 {
			b.Fatalf("%v: %v %q", args, err, out)
		}
		return took
	}
	run("prompt", "--no-start", "hi")
	run("--version")
	var prompts, versions []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		prompts = append(prompts, run("prompt", "--no-start", "hi"))
		versions = append(versions, run("--version"))
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Nanoseconds()) }
	p, v := p50(prompts), p50(versions)
	b.ReportMetric(p, "prompt-p50-ns")
	b.ReportMetric(v, "version-p50-ns")
	b.ReportMetric(p/v, "prompt/version")
}

// BenchmarkIdleRSS: the resident size of the real binary's `zeroclaw
// daemon` (built for the run, default config: no gateway, no MCP
// server), a second after its socket first accepts, and a second after
// one echo turn; and, idle, its anonymous part (the heap, stacks: the
// rest is the binary's file pages, mapped by the kernel) (Linux only:
// reads /proc).
func BenchmarkIdleRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	root, _ := filepath.Abs("../../cmd/zeroclaw")
	zc := buildB(b, testdir.New(b), root, "")
	var idle, anon, after []float64
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(testdir.New(b), "cfg")
		sock := filepath.Join(dir, "data", "daemon.sock")
		cmd := exec.Command(zc, "daemon")
		cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir)
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		var c net.Conn
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			var err error
			if c, err = net.Dial("unix", sock); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("daemon not ready")
			}
		}
		time.Sleep(time.Second) // idle: what it holds when nothing happens
		idle = append(idle, float64(rssKB(b, cmd.Process.Pid))/1024)
		anon = append(anon, float64(statusKB(b, cmd.Process.Pid, "RssAnon:"))/1024)
		br := bufio.NewReader(c)
		for _, f := range []string{
			`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":1}`,
			`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"rss","cwd":"/"},"id":2}`,
			`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"rss","prompt":"hello"},"id":3}`,
		} {
			c.Write([]byte(f + "\n"))
			id := strings.TrimSuffix(f[strings.LastIndex(f, `"id":`):], "}")
			for {
				l, err := br.ReadString('\n')
				if err != nil {
					b.Fatal(err)
				}
				if strings.Contains(l, id) {
					break
				}
			}
		}
		time.Sleep(time.Second)
		after = append(after, float64(rssKB(b, cmd.Process.Pid))/1024)
		c.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}
	med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(med(idle), "idle-rss-MB")
	b.ReportMetric(med(anon), "idle-anon-MB")
	b.ReportMetric(med(after), "after-turn-rss-MB")
}
