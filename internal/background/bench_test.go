package background

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkOutput: what a process prints (cat of 100 MB of text) taken
// into the ring and the output file, against the floor: the same cat
// into a pipe Go reads to its end the same way (a 1 MiB pipe, 256 KiB
// reads), writing nothing. Reports both rates and their ratio.
func BenchmarkOutput(b *testing.B) {
	if runtime.GOOS == "windows" {
		b.Skip("cat")
	}
	const size = 100 << 20
	dir := b.TempDir()
	file := filepath.Join(dir, "big.txt")
	line := []byte(strings.Repeat("0123456789abcdef", 7) + "\n")
	os.WriteFile(file, bytes.Repeat(line, size/len(line)+1)[:size], 0o600)
	t := NewTable(filepath.Join(dir, "out"), 0, 0, 0, nil)
	defer t.Close(nil, 0)
	buf := make([]byte, 256<<10)
	var floor, ours time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cat := exec.Command("cat", file)
		out, w, _ := os.Pipe()
		growPipe(out)
		cat.Stdout = w
		cat.Start()
		w.Close()
		readAll(out, buf)
		out.Close()
		cat.Wait()
		floor += time.Since(t0)

		t0 = time.Now()
		p, err := t.New("cat")
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("cat", file)
		wc, err := p.Attach(cmd)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Start()
		wc.Close()
		p.Run(cmd, Hooks{})
		p.Wait(context.Background())
		ours += time.Since(t0)
		if p.Info().OutputBytes != size {
			b.Fatalf("%d bytes", p.Info().OutputBytes)
		}
	}
	mb := float64(size) * float64(b.N) / (1 << 20)
	b.ReportMetric(mb/floor.Seconds(), "floor-MB/s")
	b.ReportMetric(mb/ours.Seconds(), "MB/s")
	b.ReportMetric(floor.Seconds()/ours.Seconds(), "ratio")
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
