package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

// benchGW starts a daemon with its gateway for a benchmark and pairs a
// token.
func benchGW(b *testing.B) (url, sock, tok string) {
	dirs, _ := config.ResolveDirs(filepath.Join(b.TempDir(), "cfg"), func(string) string { return "" })
	cfg := config.Default(func(string) string { return "" })
	cfg.Gateway.Enabled, cfg.Gateway.Listen = true, "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		daemon.Run(ctx, daemon.Options{Version: "bench", Dirs: dirs, Config: cfg, Ready: func(string) { close(ready) }})
	}()
	<-ready
	b.Cleanup(func() { cancel(); <-done })
	g := &gw{t: b, sock: dirs.Endpoint, http: &http.Client{}}
	var st struct{ Gateway string }
	json.Unmarshal(g.socketCall("status", struct{}{}), &st)
	g.url = st.Gateway
	tok, _ = g.pair("bench")
	return g.url, g.sock, tok
}

func wsBench(b *testing.B, url string, hdr http.Header) *websocket.Conn {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		b.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	b.Cleanup(func() { c.CloseNow() })
	return c
}

func roundTrip(b *testing.B, c *websocket.Conn, msg []byte) {
	ctx := context.Background()
	if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
		b.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWSRoundTrip: sequential status calls over /ws against the
// floor, a bare coder/websocket server on loopback that answers each
// message with the daemon's own answer to status (the same frames both
// ways, read by the same client code), measured in the same run.
func BenchmarkWSRoundTrip(b *testing.B) {
	url, _, tok := benchGW(b)
	zc := wsBench(b, strings.Replace(url, "http", "ws", 1)+"/ws", http.Header{"Authorization": {"Bearer " + tok}})
	roundTrip(b, zc, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
	status := []byte(`{"jsonrpc":"2.0","id":1,"method":"status"}`)
	if err := zc.Write(context.Background(), websocket.MessageText, status); err != nil {
		b.Fatal(err)
	}
	_, answer, err := zc.Read(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for {
			typ, _, err := c.Read(ctx)
			if err != nil {
				return
			}
			if c.Write(ctx, typ, answer) != nil {
				return
			}
		}
	}))
	defer floor.Close()
	fl := wsBench(b, strings.Replace(floor.URL, "http", "ws", 1), nil)
	var tz, tf time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(1000, b.N-done)
		t0 := time.Now()
		for range n {
			roundTrip(b, fl, status)
		}
		t1 := time.Now()
		for range n {
			roundTrip(b, zc, status)
		}
		tz += time.Since(t1)
		tf += t1.Sub(t0)
		done += n
	}
	b.ReportMetric(float64(tz.Nanoseconds())/float64(b.N), "ws-ns/call")
	b.ReportMetric(float64(tf.Nanoseconds())/float64(b.N), "floor-ns/call")
	b.ReportMetric(float64(tz)/float64(tf), "ws/floor")
}

// BenchmarkWSEventStream: a 100,000-chunk echo turn read over /ws
// against the same turn read over the Unix socket, in the same run; both
// readers count frames and stop at the prompt's answer.
func BenchmarkWSEventStream(b *testing.B) {
	url, sock, tok := benchGW(b)
	const chunks = 100000
	ws := wsBench(b, strings.Replace(url, "http", "ws", 1)+"/ws", http.Header{"Authorization": {"Bearer " + tok}})
	roundTrip(b, ws, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`))
	roundTrip(b, ws, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"sessionId":"ws","cwd":"/"}}`))
	nc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	line := func(s string) {
		nc.Write([]byte(s + "\n"))
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	line(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	line(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"sessionId":"sock","cwd":"/"}}`)
	prompt := func(id string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":%q,"prompt":"/chunks %d"}}`, id, chunks)
	}
	var tw, ts time.Duration
	var nw, ns int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		ws.Write(context.Background(), websocket.MessageText, []byte(prompt("ws")))
		for {
			_, m, err := ws.Read(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			nw++
			if strings.HasPrefix(string(m), `{"jsonrpc":"2.0","id":2,`) {
				break
			}
		}
		t1 := time.Now()
		nc.Write([]byte(prompt("sock") + "\n"))
		for {
			m, err := br.ReadSlice('\n')
			answer := strings.HasPrefix(string(m), `{"jsonrpc":"2.0","id":2,`)
			for err == bufio.ErrBufferFull { // the answer: the whole text, 300 kB
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				b.Fatal(err)
			}
			ns++
			if answer {
				break
			}
		}
		tw += t1.Sub(t0)
		ts += time.Since(t1)
	}
	b.ReportMetric(float64(nw)/tw.Seconds(), "ws-events/s")
	b.ReportMetric(float64(ns)/ts.Seconds(), "socket-events/s")
	b.ReportMetric((float64(nw)/tw.Seconds())/(float64(ns)/ts.Seconds()), "ws/socket")
}
