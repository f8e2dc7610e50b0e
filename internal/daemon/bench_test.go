package daemon

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

const statusFrame = `{"jsonrpc":"2.0","method":"status","params":{},"id":1}` + "\n"

// BenchmarkEchoFloor is the floor: a bare NDJSON line echo over the same
// kind of socket, one line in, one line out.
func BenchmarkEchoFloor(b *testing.B) {
	path := filepath.Join(b.TempDir(), "echo.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					c.Write(l)
				}
			}()
		}
	}()
	roundTrips(b, path, false)
}

// BenchmarkRoundTrip: sequential status calls over the daemon's socket.
func BenchmarkRoundTrip(b *testing.B) {
	dirs, _ := config.ResolveDirs(filepath.Join(b.TempDir(), "c"), func(string) string { return "" })
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Options{Dirs: dirs, Config: config.Default(func(string) string { return "" }), Ready: func(string) { close(ready) }})
	}()
	<-ready
	roundTrips(b, dirs.Endpoint, true)
	cancel()
	<-done
}

func roundTrips(b *testing.B, path string, init bool) {
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if init {
		c.Write([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{},"id":0}` + "\n"))
		br.ReadSlice('\n')
	}
	frame := []byte(statusFrame)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
