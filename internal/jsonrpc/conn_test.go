package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rawPeer is the far end of a net.Pipe, speaking raw lines.
type rawPeer struct {
	t     *testing.T
	conn  net.Conn
	lines chan string
}

func newRawPeer(t *testing.T, nc net.Conn) *rawPeer {
	p := &rawPeer{t: t, conn: nc, lines: make(chan string, 100)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(nc)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

func (p *rawPeer) send(line string) {
	p.t.Helper()
	if _, err := p.conn.Write([]byte(line + "\n")); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// next returns the next line, failing after a watchdog that dumps nothing
// but names what was awaited.
func (p *rawPeer) next(what string) string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("%s: connection closed", what)
		}
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatalf("%s: no frame within 10s", what)
	}
	return ""
}

// startConn runs a Conn with handler h on one end of a pipe and returns
// the raw peer on the other end.
func startConn(t *testing.T, h Handler, opts Options) (*Conn, *rawPeer) {
	a, b := net.Pipe()
	c := NewConn(a, h, opts)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(context.Background()) }()
	t.Cleanup(func() { c.Close(); b.Close(); <-done })
	return c, newRawPeer(t, b)
}

// echoHandler answers "echo" with its params and "slow" after release.
func echoHandler(release chan struct{}) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		switch r.Method {
		case "echo":
			return r.Params, nil
		case "null":
			return nil, nil
		case "fail":
			return nil, NewError(-32000, map[string]string{"kind": "test"}, "failed on purpose")
		case "slow":
			return Later(func(ctx context.Context) (any, error) {
				select {
				case <-release:
					return "slow done", nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}), nil
		}
		return nil, ErrMethodNotFound
	}
}

func canon(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("peer got invalid JSON %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEnvelope pins every row of the envelope table: each input is sent,
// then a marker request; want is the reply to the input, or "" for silence
// (the next frame is then the marker's answer).
func TestEnvelope(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", `{"jsonrpc":"2.0",`, `{"error":{"code":-32700,"message":"parse error: unexpected end of JSON input"},"id":null,"jsonrpc":"2.0"}`},
		{"garbage", `hello`, `{"error":{"code":-32700,"message":"parse error: invalid character 'h' looking for beginning of value"},"id":null,"jsonrpc":"2.0"}`},
		{"LSP framing", `Content-Length: 52`, `{"error":{"code":-32700,"message":"parse error: this endpoint speaks NDJSON (one JSON object per line), not LSP framing (Content-Length headers)"},"id":null,"jsonrpc":"2.0"}`},
		{"LSP framing, any case", `content-length:52` + "\r", `{"error":{"code":-32700,"message":"parse error: this endpoint speaks NDJSON (one JSON object per line), not LSP framing (Content-Length headers)"},"id":null,"jsonrpc":"2.0"}`},
		{"batch", `[{"jsonrpc":"2.0","method":"echo","id":1}]`, `{"error":{"code":-32600,"message":"invalid request: batch arrays are not supported"},"id":null,"jsonrpc":"2.0"}`},
		{"empty batch", `[]`, `{"error":{"code":-32600,"message":"invalid request: batch arrays are not supported"},"id":null,"jsonrpc":"2.0"}`},
		{"scalar", `42`, `{"error":{"code":-32600,"message":"invalid request: frame must be a JSON object"},"id":null,"jsonrpc":"2.0"}`},
		{"string", `"x"`, `{"error":{"code":-32600,"message":"invalid request: frame must be a JSON object"},"id":null,"jsonrpc":"2.0"}`},
		{"no jsonrpc", `{"method":"echo","id":7}`, `{"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""},"id":7,"jsonrpc":"2.0"}`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"echo","id":"a"}`, `{"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""},"id":"a","jsonrpc":"2.0"}`},
		{"jsonrpc number", `{"jsonrpc":2.0,"method":"echo","id":1}`, `{"error":{"code":-32600,"message":"invalid request: jsonrpc must be \"2.0\""},"id":1,"jsonrpc":"2.0"}`},
		{"id object", `{"jsonrpc":"2.0","method":"echo","id":{}}`, `{"error":{"code":-32600,"message":"invalid request: id must be a string, number or null"},"id":null,"jsonrpc":"2.0"}`},
		{"id bool", `{"jsonrpc":"2.0","method":"echo","id":true}`, `{"error":{"code":-32600,"message":"invalid request: id must be a string, number or null"},"id":null,"jsonrpc":"2.0"}`},
		{"params string", `{"jsonrpc":"2.0","method":"echo","params":"x","id":3}`, `{"error":{"code":-32600,"message":"invalid request: params must be an object or array"},"id":3,"jsonrpc":"2.0"}`},
		{"params null", `{"jsonrpc":"2.0","method":"echo","params":null,"id":3}`, `{"error":{"code":-32600,"message":"invalid request: params must be an object or array, not null"},"id":3,"jsonrpc":"2.0"}`},
		{"invalid notification answered", `{"jsonrpc":"2.0","method":"echo","params":5}`, `{"error":{"code":-32600,"message":"invalid request: params must be an object or array"},"id":null,"jsonrpc":"2.0"}`},
		{"method null", `{"jsonrpc":"2.0","method":null,"id":1}`, `{"error":{"code":-32600,"message":"invalid request: method must be a string"},"id":null,"jsonrpc":"2.0"}`},
		{"method number", `{"jsonrpc":"2.0","method":5,"id":1}`, `{"error":{"code":-32600,"message":"invalid request: method must be a string"},"id":null,"jsonrpc":"2.0"}`},
		{"method plus result", `{"jsonrpc":"2.0","method":"echo","result":1,"id":1}`, `{"error":{"code":-32600,"message":"invalid request: a frame cannot have both method and result/error"},"id":null,"jsonrpc":"2.0"}`},
		{"method plus error", `{"jsonrpc":"2.0","method":"echo","error":{"code":1,"message":"x"},"id":1}`, `{"error":{"code":-32600,"message":"invalid request: a frame cannot have both method and result/error"},"id":null,"jsonrpc":"2.0"}`},
		{"empty object", `{}`, `{"error":{"code":-32600,"message":"invalid request: frame is neither a request nor a response"},"id":null,"jsonrpc":"2.0"}`},
		{"only id", `{"jsonrpc":"2.0","id":1}`, `{"error":{"code":-32600,"message":"invalid request: frame is neither a request nor a response"},"id":null,"jsonrpc":"2.0"}`},
		{"response both", `{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":"zc-out-0"}`, ``},
		{"response no id", `{"jsonrpc":"2.0","result":1}`, ``},
		{"response with params", `{"jsonrpc":"2.0","result":1,"params":{},"id":"zc-out-0"}`, ``},
		{"response bad error", `{"jsonrpc":"2.0","error":{"code":"x","message":"m"},"id":"zc-out-0"}`, ``},
		{"response error float code", `{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":1}`, ``},
		{"response error no message", `{"jsonrpc":"2.0","error":{"code":1},"id":1}`, ``},
		{"response error not object", `{"jsonrpc":"2.0","error":"boom","id":1}`, ``},
		{"response no jsonrpc", `{"result":1,"id":1}`, ``},
		{"response bad id", `{"jsonrpc":"2.0","result":1,"id":[1]}`, ``},
		{"response unknown id", `{"jsonrpc":"2.0","result":1,"id":"zc-out-99"}`, ``},
		{"response null id", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"},"id":null}`, ``},
		{"unknown method", `{"jsonrpc":"2.0","method":"nope","id":"q"}`, `{"error":{"code":-32601,"message":"method not found: nope"},"id":"q","jsonrpc":"2.0"}`},
		{"unknown notification", `{"jsonrpc":"2.0","method":"nope"}`, ``},
		{"null id request", `{"jsonrpc":"2.0","method":"echo","params":[1],"id":null}`, `{"id":null,"jsonrpc":"2.0","result":[1]}`},
		{"null result", `{"jsonrpc":"2.0","method":"null","id":0}`, `{"id":0,"jsonrpc":"2.0","result":null}`},
		{"id zero and unknown keys", `{"jsonrpc":"2.0","method":"echo","params":{"a":1},"id":0,"extra":true}`, `{"id":0,"jsonrpc":"2.0","result":{"a":1}}`},
		{"float id echoed", `{"jsonrpc":"2.0","method":"echo","params":{},"id":1.5}`, `{"id":1.5,"jsonrpc":"2.0","result":{}}`},
		{"handler error with data", `{"jsonrpc":"2.0","method":"fail","id":9}`, `{"error":{"code":-32000,"data":{"kind":"test"},"message":"failed on purpose"},"id":9,"jsonrpc":"2.0"}`},
		{"trailing cr", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[],\"id\":2}\r", `{"id":2,"jsonrpc":"2.0","result":[]}`},
	}
	_, p := startConn(t, echoHandler(nil), Options{})
	const marker = `{"jsonrpc":"2.0","method":"echo","params":["marker"],"id":"m"}`
	wantMarker := `{"id":"m","jsonrpc":"2.0","result":["marker"]}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			p.send(tt.in)
			p.send("")
			p.send(marker)
			if tt.want != "" {
				if got := canon(t, p.next("reply")); got != tt.want {
					t.Errorf("reply\n got %s\nwant %s", got, tt.want)
				}
			}
			if got := canon(t, p.next("marker")); got != wantMarker {
				t.Errorf("after %s: got %s, want the marker's answer", tt.name, got)
			}
		})
	}
}

func TestFrameTooLarge(t *testing.T) {
	c, p := startConn(t, echoHandler(nil), Options{MaxFrame: 1000})
	ok := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 1000-54) + `"],"id":1}`
	if len(ok) != 1000 {
		t.Fatalf("test frame is %d bytes", len(ok))
	}
	p.send(ok)
	if got := p.next("reply to 1000-byte frame"); !strings.Contains(got, `"result"`) {
		t.Fatalf("frame at the limit: got %s", got)
	}
	p.send(ok + " ")
	want := `{"error":{"code":-32600,"message":"frame exceeds 1000 bytes"},"id":null,"jsonrpc":"2.0"}`
	if got := canon(t, p.next("frame error")); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if l, ok := <-p.lines; ok {
		t.Fatalf("connection stayed open, got %s", l)
	}
	<-c.Done()
}

func TestSlowHandlerDoesNotBlockReadLoop(t *testing.T) {
	release := make(chan struct{})
	_, p := startConn(t, echoHandler(release), Options{})
	p.send(`{"jsonrpc":"2.0","method":"slow","id":1}`)
	p.send(`{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}`)
	if got := canon(t, p.next("fast reply")); got != `{"id":2,"jsonrpc":"2.0","result":[2]}` {
		t.Fatalf("got %s first, want the fast reply", got)
	}
	close(release)
	if got := canon(t, p.next("slow reply")); got != `{"id":1,"jsonrpc":"2.0","result":"slow done"}` {
		t.Fatalf("got %s", got)
	}
}

// A handler that answers later must still see its own id and params after
// the read loop has read (into the same buffer) the frames that follow.
func TestLaterKeepsItsFrame(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, r *Request) (any, error) {
		if r.Method != "hold" {
			return r.Params, nil
		}
		return Later(func(ctx context.Context) (any, error) { <-release; return r.Params, nil }), nil
	})
	_, p := startConn(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","method":"hold","params":{"mine":"AAAA"},"id":"first"}`)
	p.send(`{"jsonrpc":"2.0","method":"echo","params":{"next":"BBBB"},"id":"other"}`)
	if got := canon(t, p.next("echo")); got != `{"id":"other","jsonrpc":"2.0","result":{"next":"BBBB"}}` {
		t.Fatalf("got %s", got)
	}
	close(release)
	if got := canon(t, p.next("held")); got != `{"id":"first","jsonrpc":"2.0","result":{"mine":"AAAA"}}` {
		t.Fatalf("held reply %s: the request changed under its handler", got)
	}
}

func TestCloseCancelsLaterAndFailsCalls(t *testing.T) {
	c, p := startConn(t, echoHandler(make(chan struct{})), Options{})
	p.send(`{"jsonrpc":"2.0","method":"slow","id":1}`)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "ask", nil, nil) }()
	if got := p.next("outgoing call"); !strings.Contains(got, `"id":"zc-out-0"`) {
		t.Fatalf("outgoing call %s lacks id zc-out-0", got)
	}
	p.conn.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("pending call: got %v, want ErrClosed", err)
	}
}

// TestSameIDBothDirections: both peers have zc-out-0 in flight; a malformed
// response with that id neither replies nor resolves either side; valid
// responses then resolve each side.
func TestSameIDBothDirections(t *testing.T) {
	a, b := net.Pipe()
	var seenA, seenB = make(chan *Request, 1), make(chan *Request, 1)
	later := func(seen chan *Request, answer string) HandlerFunc {
		return func(ctx context.Context, r *Request) (any, error) {
			seen <- r
			return Later(func(ctx context.Context) (any, error) { return answer, nil }), nil
		}
	}
	// Each side defers its answer so that both calls are in flight at once:
	// we hold both answers until both requests have arrived.
	gate := make(chan struct{})
	gated := func(seen chan *Request, answer string) HandlerFunc {
		h := later(seen, answer)
		return func(ctx context.Context, r *Request) (any, error) {
			res, _ := h(ctx, r)
			l := res.(Later)
			return Later(func(ctx context.Context) (any, error) { <-gate; return l(ctx) }), nil
		}
	}
	dropsA, dropsB := &logSink{ch: make(chan string, 10)}, &logSink{ch: make(chan string, 10)}
	ca := NewConn(a, gated(seenA, "from A"), Options{Logger: slog.New(dropsA)})
	cb := NewConn(b, gated(seenB, "from B"), Options{Logger: slog.New(dropsB)})
	var runs = make(chan struct{}, 2)
	go func() { ca.Run(context.Background()); runs <- struct{}{} }()
	go func() { cb.Run(context.Background()); runs <- struct{}{} }()
	resA, resB := make(chan string, 1), make(chan string, 1)
	go func() { var s string; _ = ca.Call(context.Background(), "q", nil, &s); resA <- s }()
	go func() { var s string; _ = cb.Call(context.Background(), "q", nil, &s); resB <- s }()
	ra, rb := <-seenA, <-seenB
	if ra.ID.String() != `"zc-out-0"` || rb.ID.String() != `"zc-out-0"` {
		t.Fatalf("ids %s %s, want zc-out-0 on both", ra.ID, rb.ID)
	}
	// A malformed response with the in-flight id, written straight onto A's
	// stream as if from B, must be dropped: no reply, no resolution.
	if err := cb.enqueue([]byte(`{"jsonrpc":"2.0","result":"bad","error":{"code":1,"message":"x"},"id":"zc-out-0"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := ca.enqueue([]byte(`{"jsonrpc":"2.0","error":{"code":"x"},"id":"zc-out-0"}`), nil); err != nil {
		t.Fatal(err)
	}
	// Both sides log the drop (and nothing of the content); only then can we
	// be sure the frames were handled.
	for _, d := range []*logSink{dropsA, dropsB} {
		if msg := <-d.ch; !strings.Contains(msg, "dropped frame") || strings.Contains(msg, "bad") {
			t.Fatalf("log %q: want a drop notice without the frame's content", msg)
		}
	}
	select {
	case s := <-resA:
		t.Fatalf("malformed response resolved A's call with %q", s)
	case s := <-resB:
		t.Fatalf("malformed response resolved B's call with %q", s)
	default:
	}
	close(gate)
	if got := <-resA; got != "from B" {
		t.Errorf("A's call resolved with %q, want B's answer", got)
	}
	if got := <-resB; got != "from A" {
		t.Errorf("B's call resolved with %q, want A's answer", got)
	}
	ca.Close()
	cb.Close()
	<-runs
	<-runs
}

// logSink is a slog.Handler that passes each record's text to ch.
type logSink struct{ ch chan string }

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	s := r.Message
	r.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
	l.ch <- s
	return nil
}
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logSink) WithGroup(string) slog.Handler      { return l }

func TestCallResults(t *testing.T) {
	c, p := startConn(t, nil, Options{})
	type res struct {
		v   any
		err error
	}
	out := make(chan res, 1)
	call := func() {
		go func() {
			var v any = "unset"
			err := c.Call(context.Background(), "m", map[string]int{"a": 1}, &v)
			out <- res{v, err}
		}()
	}
	call()
	got := canon(t, p.next("call"))
	if got != `{"id":"zc-out-0","jsonrpc":"2.0","method":"m","params":{"a":1}}` {
		t.Fatalf("outgoing frame %s", got)
	}
	p.send(`{"jsonrpc":"2.0","result":null,"id":"zc-out-0"}`)
	if r := <-out; r.err != nil || r.v != "unset" {
		t.Fatalf("null result: %v %v, want success leaving the value alone", r.v, r.err)
	}
	call()
	p.next("second call")
	p.send(`{"jsonrpc":"2.0","error":{"code":-5,"message":"no","data":[1]},"id":"zc\u002dout-1"}`)
	r := <-out
	var e *Error
	if !errors.As(r.err, &e) || e.Code != -5 || e.Message != "no" || string(e.Data) != "[1]" {
		t.Fatalf("error response: got %v", r.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { out <- res{nil, c.Call(ctx, "m", nil, nil)} }()
	p.next("third call")
	cancel()
	if r := <-out; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled call: %v", r.err)
	}
	// The late answer to a cancelled call is an unknown id: dropped silently.
	p.send(`{"jsonrpc":"2.0","result":1,"id":"zc-out-2"}`)
	p.send(`{"jsonrpc":"2.0","method":"x","id":5}`)
	if got := canon(t, p.next("method not found")); !strings.Contains(got, `-32601`) {
		t.Fatalf("got %s", got)
	}
}

// countSource is a Source of n numbered notifications.
type countSource struct{ next, n int }

func (s *countSource) AppendFrames(buf []byte, first bool, max int) ([]byte, bool, error) {
	for s.next < s.n {
		buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"ev","params":{"n":%d}}`+"\n", s.next)
		s.next++
		if len(buf) >= max {
			return buf, s.next < s.n, nil
		}
	}
	return buf, false, nil
}

// Frames queued on the one road out leave in queue order: a source's
// frames before a notification queued after it, whatever their number.
func TestOutboxKeepsQueueOrder(t *testing.T) {
	c, p := startConn(t, echoHandler(nil), Options{})
	if err := c.Push(&countSource{n: 3000}); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify("after", map[string]string{"s": "<&>"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3000; i++ {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"ev","params":{"n":%d}}`, i)
		if got := canon(t, p.next("event")); got != want {
			t.Fatalf("frame %d: got %s, want %s", i, got, want)
		}
	}
	// No HTML escaping: "<" is one byte on the wire.
	if got := p.next("notification"); !strings.Contains(got, `"<&>"`) {
		t.Fatalf("got %s, want the notification after the source, unescaped", got)
	}
}

// The sender of an oversized frame can finish writing it and read the
// error: the rest of the line is read and dropped (bounded) before the
// connection closes, instead of the sender meeting a closed socket.
func TestOversizedFrameSenderReadsTheError(t *testing.T) {
	_, p := startConn(t, echoHandler(nil), Options{MaxFrame: 1000})
	big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 50000) + `"],"id":1}` + "\n"
	wrote := make(chan error, 1)
	go func() { _, err := p.conn.Write([]byte(big)); wrote <- err }()
	if got := p.next("frame error"); !strings.Contains(got, `"frame exceeds 1000 bytes"`) {
		t.Fatalf("got %s", got)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("the sender's write of the oversized frame failed: %v", err)
	}
}

// An id that is a string with invalid UTF-8 is echoed as valid UTF-8.
func TestInvalidUTF8IDEchoedValid(t *testing.T) {
	_, p := startConn(t, echoHandler(nil), Options{})
	p.send("{\"jsonrpc\":\"2.0\",\"method\":\"null\",\"id\":\"a\xffb\"}")
	got := p.next("reply")
	if !utf8.ValidString(got) || !strings.Contains(got, `"id":"a`+"\uFFFD"+`b"`) {
		t.Fatalf("got %q, want valid UTF-8 with the id's bad byte as U+FFFD", got)
	}
}

// bigThenSmall is a Source whose first call writes a frame far bigger
// than the writer's chunk (more to come) and whose second, once let go,
// writes a small one.
type bigThenSmall struct {
	calls   int
	letGo   chan struct{}
	reached chan struct{}
}

func (s *bigThenSmall) AppendFrames(buf []byte, first bool, max int) ([]byte, bool, error) {
	s.calls++
	if s.calls == 1 {
		return fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"big","params":["%s"]}`+"\n", strings.Repeat("x", 300<<10)), true, nil
	}
	close(s.reached)
	<-s.letGo
	return append(buf, `{"jsonrpc":"2.0","method":"small"}`+"\n"...), false, nil
}

// What a source writes after the writer's buffer grew big is written too,
// even when more is queued behind it (a buffer once dropped with frames
// still in it lost a client's events).
func TestOutboxKeepsFramesAfterABigOne(t *testing.T) {
	c, p := startConn(t, echoHandler(nil), Options{})
	src := &bigThenSmall{letGo: make(chan struct{}), reached: make(chan struct{})}
	c.Push(src)
	<-src.reached
	c.Notify("after", nil) // queued while the source is still writing
	close(src.letGo)
	for _, want := range []string{`"big"`, `"small"`, `"after"`} {
		if got := p.next(want); !strings.Contains(got, want) {
			t.Fatalf("got %.80s, want the %s frame", got, want)
		}
	}
}

// A peer that answers and at once hangs up (the daemon's shutdown does):
// the caller gets the answer, never ErrClosed, however the answer and the
// end of the stream race in the caller's wait.
func TestAnswerThenHangUpIsNeverLost(t *testing.T) {
	for i := range 300 {
		a, b := net.Pipe()
		var srv *Conn
		srv = NewConn(a, HandlerFunc(func(ctx context.Context, r *Request) (any, error) {
			return Then{Result: "bye", After: func() { srv.Close() }}, nil
		}), Options{})
		cli := NewConn(b, nil, Options{})
		done := make(chan struct{}, 2)
		go func() { srv.Run(context.Background()); done <- struct{}{} }()
		go func() { cli.Run(context.Background()); done <- struct{}{} }()
		var got string
		err := cli.Call(context.Background(), "shutdown", nil, &got)
		cli.Close()
		<-done
		<-done
		if err != nil || got != "bye" {
			t.Fatalf("call %d: %q %v, want the answer", i, got, err)
		}
	}
}

// noDeadlines hides a stream's deadlines, as a WebSocket message stream
// has none.
type noDeadlines struct{ io.ReadWriteCloser }

// An oversized line whose end was read with it leaves nothing to drop:
// the connection answers the error and closes, without reading on (the
// next line is another message, and on a stream without deadlines the
// read would wait for it for ever).
func TestOversizedCompleteLineClosesWithoutReadingOn(t *testing.T) {
	a, b := net.Pipe()
	c := NewConn(noDeadlines{a}, echoHandler(nil), Options{MaxFrame: 100})
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(context.Background()) }()
	t.Cleanup(func() { c.Close(); b.Close(); <-done })
	p := newRawPeer(t, b)
	p.send(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", 200) + `"],"id":1}`)
	if got := p.next("frame error"); !strings.Contains(got, `"frame exceeds 100 bytes"`) {
		t.Fatalf("got %s", got)
	}
	select {
	case l, ok := <-p.lines:
		if ok {
			t.Fatalf("after the error: %s", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection waits for another line instead of closing")
	}
}

// $/cancelRequest (vscode-jsonrpc's, as a notification or a request)
// cancels the named running request, which answers -32800; the others
// run on; a request answered already, or unknown, is left alone.
func TestCancelRequest(t *testing.T) {
	release := make(chan struct{})
	_, p := startConn(t, echoHandler(release), Options{})
	p.send(`{"jsonrpc":"2.0","method":"slow","id":"a"}`)
	p.send(`{"jsonrpc":"2.0","method":"slow","id":7}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`)
	if got := canon(t, p.next("the cancelled request")); got != `{"error":{"code":-32800,"message":"request cancelled ($/cancelRequest)"},"id":"a","jsonrpc":"2.0"}` {
		t.Fatalf("got %s", got)
	}
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"},"id":"c1"}`)
	if got := canon(t, p.next("a second cancel")); got != `{"id":"c1","jsonrpc":"2.0","result":{"cancelled":false}}` {
		t.Fatalf("got %s", got)
	}
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7},"id":"c2"}`)
	a, b := canon(t, p.next("cancel 7")), canon(t, p.next("cancel 7"))
	if !strings.Contains(a+b, `{"id":"c2","jsonrpc":"2.0","result":{"cancelled":true}}`) || !strings.Contains(a+b, `"code":-32800`) {
		t.Fatalf("got %s and %s", a, b)
	}
	p.send(`{"jsonrpc":"2.0","method":"slow","id":8}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"8"}}`) // "8" is not 8
	close(release)
	if got := canon(t, p.next("the request left alone")); got != `{"id":8,"jsonrpc":"2.0","result":"slow done"}` {
		t.Fatalf("got %s", got)
	}
}
