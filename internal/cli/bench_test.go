package cli

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkDaemonStart: from exec of `zeroclaw daemon` to its socket
// accepting a connection.
func BenchmarkDaemonStart(b *testing.B) {
	exe, _ := os.Executable()
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "cfg")
		sock := filepath.Join(dir, "data", "daemon.sock")
		cmd := exec.Command(exe, "daemon")
		cmd.Env = append(os.Environ(), "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
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
	dir := filepath.Join(b.TempDir(), "cfg")
	for i := 0; i < b.N; i++ {
		cmd := startDaemonB(b, dir)
		time.Sleep(200 * time.Millisecond)
		idle := rssKB(b, cmd.Process.Pid)
		var conns []net.Conn
		for j := 0; j < 1000; j++ {
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

// startDaemonB runs `zeroclaw daemon` with config dir dir until its socket
// accepts.
func startDaemonB(b *testing.B, dir string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "daemon")
	cmd.Env = append(os.Environ(), "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
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

func rssKB(b *testing.B, pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
