package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/gateway"
)

// rawRequest sends head on a new TCP connection and returns the first
// line of the answer ("" when the connection ended without one) and how
// long it took. It waits at most limit: a request that gets no answer
// and keeps its connection returns "timeout".
func rawRequest(t *testing.T, addr, head string, limit time.Duration) (string, time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(t0.Add(limit))
	line, err := bufio.NewReader(c).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return "timeout", time.Since(t0)
	}
	return strings.TrimSpace(line), time.Since(t0)
}

// A request whose body never comes is answered or closed: routes that
// read no body answer at once (and close the connection, whose unread
// body would be taken for the next request), routes that read one give
// up after BodyIdle; neither waits for a body forever.
func TestBodylessRequestsAreAnswered(t *testing.T) {
	g := start(t, nil)
	addr := strings.TrimPrefix(g.url, "http://")
	limit := gateway.BodyIdle + 5*time.Second
	cases := []struct{ name, head, want string }{
		{"POST /health, body promised, none sent", "POST /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n", "HTTP/1.1 405"},
		{"a bad Host, body promised", "POST /health HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 100\r\n\r\n", "HTTP/1.1 421"},
		{"no token, body promised", "POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n", "HTTP/1.1 401"},
		{"a dashboard page, body promised", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n", "HTTP/1.1 200"},
		{"pairing, body promised", "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n", "HTTP/1.1 400"},
		{"pairing, a slow body", "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"code\":", "HTTP/1.1 400"},
		{"pairing, chunks that stop", "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"cod\r\n", "HTTP/1.1 400"},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, took := rawRequest(t, addr, c.head, limit)
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("%s: %q after %v, want %q", c.name, got, took.Round(time.Millisecond), c.want)
			}
			t.Logf("%s: %q after %v", c.name, got, took.Round(time.Millisecond))
		}()
	}
	wg.Wait()
}

// A flood of connections that never authenticate, idle ones and ones
// that promise a body and send none, from one address (every local
// process is 127.0.0.1), does not keep a paired client out: its
// connection made before the flood is served throughout, and once the
// flood holds more connections than the gateway's whole budget, new
// connections of the paired client are served too.
func TestUnauthenticatedFloodLeavesPairedClientsServed(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("paired")
	addr := strings.TrimPrefix(g.url, "http://")
	const flood = 5000
	var (
		mu    sync.Mutex
		conns []net.Conn
		made  atomic.Int64
	)
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	kept := &http.Client{Timeout: 10 * time.Second} // one connection, kept alive
	fresh := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer kept.CloseIdleConnections()
	var worst time.Duration
	ask := func(c *http.Client, when string) {
		t.Helper()
		req, _ := http.NewRequest("GET", g.url+"/api/status", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		t0 := time.Now()
		resp, err := c.Do(req)
		took := time.Since(t0)
		if err != nil {
			t.Fatalf("%s (%d flood connections made): %v after %v", when, made.Load(), err, took)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", when, resp.StatusCode)
		}
		worst = max(worst, took)
	}
	ask(kept, "before the flood")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < flood; i += 8 {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					continue
				}
				if i%2 == 0 { // a request whose body never comes
					fmt.Fprintf(c, "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				made.Add(1)
			}
		}()
	}
	for made.Load() < flood*9/10 {
		ask(kept, "during the flood, on the paired connection")
	}
	wg.Wait()
	if made.Load() < gateway.MaxConns+500 {
		t.Fatalf("only %d flood connections were made; the budget is %d", made.Load(), gateway.MaxConns)
	}
	for range 5 {
		ask(fresh, "with the flood standing, on a new connection")
		ask(kept, "with the flood standing, on the paired connection")
	}
	t.Logf("%d flood connections; slowest paired request %v", made.Load(), worst)
}

// A message over the frame limit on /ws gets the engine's error, then a
// close frame 1009, as the socket does; the message after it is not
// swallowed into a silent wait.
func TestWSFrameLimitCloses(t *testing.T) {
	const limit = 4096
	g := start(t, func(c *config.Config, _ *daemon.Options) { c.Daemon.MaxFrameBytes = limit })
	tok, _ := g.pair("ws")
	c := wsDial(t, g, "/ws", tok, nil)
	wsCall(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	big := `{"jsonrpc":"2.0","id":2,"method":"status","params":{"x":"` + strings.Repeat("x", limit) + `"}}`
	if err := c.Write(ctx, websocket.MessageText, []byte(big)); err != nil {
		t.Fatal(err)
	}
	_, b, err := c.Read(ctx)
	if err != nil || !strings.Contains(string(b), "-32600") || !strings.Contains(string(b), fmt.Sprintf("frame exceeds %d bytes", limit)) {
		t.Fatalf("after an oversized message: %s, %v", b, err)
	}
	_, b, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("then: %q, %v (want a close frame 1009)", b, err)
	}
}

// A request that promised a body its route does not read is closed right
// after its answer (the server would otherwise wait for that body to
// keep the connection); a /pair body over the limit, whole (10 MiB) or
// endless (chunks until the connection ends), is answered 413, and the
// client reads that answer rather than a reset.
func TestUnreadAndOversizedBodies(t *testing.T) {
	g := start(t, nil)
	addr := strings.TrimPrefix(g.url, "http://")
	limit := gateway.BodyIdle + 5*time.Second

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t0 := time.Now()
	fmt.Fprint(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n")
	c.SetReadDeadline(t0.Add(limit))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("GET /health with a body promised: %s, then %v after %v (want the connection closed)", resp.Status, err, time.Since(t0).Round(time.Millisecond))
	}
	t.Logf("GET /health with a body promised: %s, closed after %v", resp.Status, time.Since(t0).Round(time.Millisecond))

	oversized := func(name, head string, body func(io.Writer) error) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, head)
		go body(c) // until the server stops reading
		c.SetReadDeadline(time.Now().Add(limit))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v (want a 413 read)", name, err)
		}
		msg, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "too_large") {
			t.Fatalf("%s: %s %s", name, resp.Status, msg)
		}
	}
	oversized("a 10 MiB /pair body", "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n",
		func(w io.Writer) error {
			_, err := w.Write(bytes.Repeat([]byte("x"), 10<<20))
			return err
		})
	oversized("an endless chunked /pair body", "POST /pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
		func(w io.Writer) error {
			chunk := fmt.Sprintf("%x\r\n%s\r\n", 64<<10, bytes.Repeat([]byte("x"), 64<<10))
			for {
				if _, err := io.WriteString(w, chunk); err != nil {
					return err
				}
			}
		})
}
