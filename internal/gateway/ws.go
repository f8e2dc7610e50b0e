package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/acp"
	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/rpc"
)

// wsConn is a WebSocket as the byte stream the JSON-RPC engine reads and
// writes: each text message in is one line (a newline added; raw
// newlines inside it, JSON whitespace, become spaces), each line out is
// one text message. A binary message closes the connection with 1003.
type wsConn struct {
	c      *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc

	cur    io.Reader // the message being read
	nl     bool      // the message ended: its newline is due
	active atomic.Int64
	// size of the message being read, against max (the engine's frame
	// limit): past it the engine answers its error and closes, and the
	// close is then 1009 (message too big), as the socket's would be.
	size, max int
	tooBig    atomic.Bool

	wmu      sync.Mutex
	part     []byte // a line not yet complete
	deadline atomic.Int64
	batch    *batchConn // the connection under c: one write per Write
}

func newWSConn(parent context.Context, c *websocket.Conn, max int) *wsConn {
	w := &wsConn{c: c, max: max}
	w.ctx, w.cancel = context.WithCancel(parent)
	w.active.Store(time.Now().UnixNano())
	return w
}

func (w *wsConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if w.nl {
			w.nl = false
			p[0] = '\n'
			return 1, nil
		}
		if w.cur == nil {
			typ, r, err := w.c.Reader(w.ctx)
			if err != nil {
				if websocket.CloseStatus(err) != -1 || errors.Is(err, context.Canceled) {
					return 0, io.EOF
				}
				return 0, err
			}
			w.active.Store(time.Now().UnixNano())
			if typ != websocket.MessageText {
				w.c.Close(websocket.StatusUnsupportedData, "binary messages are not JSON-RPC: send one JSON text message per frame")
				return 0, io.EOF
			}
			w.cur, w.size = r, 0
		}
		n, err := w.cur.Read(p)
		if w.size += n; w.size > w.max {
			w.tooBig.Store(true)
		}
		for i := range p[:n] {
			if p[i] == '\n' || p[i] == '\r' {
				p[i] = ' '
			}
		}
		if errors.Is(err, io.EOF) {
			w.cur, err = nil, nil
			if n < len(p) { // the message's newline, in the same read
				p[n] = '\n'
				n++
			} else {
				w.nl = true
			}
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// Write sends each complete line of p as one text message.
func (w *wsConn) Write(p []byte) (n int, err error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	ctx := w.ctx
	if d := w.deadline.Load(); d != 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Unix(0, d))
		defer cancel()
	}
	// Gather only a batch of several messages: one goes out as it is.
	if w.batch != nil && bytes.Count(p, []byte{'\n'}) > 1 {
		w.batch.begin()
		defer func() {
			var dl time.Time
			if d := w.deadline.Load(); d != 0 {
				dl = time.Unix(0, d)
			}
			if ferr := w.batch.end(dl); ferr != nil && err == nil {
				n, err = 0, ferr
				w.c.CloseNow()
			}
		}()
	}
	done := 0
	for len(p) > done {
		i := bytes.IndexByte(p[done:], '\n')
		if i < 0 {
			w.part = append(w.part, p[done:]...)
			return len(p), nil
		}
		line := p[done : done+i]
		if len(w.part) > 0 {
			line = append(w.part, line...)
			w.part = w.part[:0]
		}
		if err := w.c.Write(ctx, websocket.MessageText, line); err != nil {
			return done, err
		}
		done += i + 1
	}
	return len(p), nil
}

// SetWriteDeadline bounds the writes (the engine's stall timeout); a
// write past it ends the connection.
func (w *wsConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		w.deadline.Store(0)
	} else {
		w.deadline.Store(t.UnixNano())
	}
	return nil
}

// Close ends the connection; after a message over the frame limit it
// leaves the close to closeFrame, which says why.
func (w *wsConn) Close() error {
	w.cancel()
	if w.tooBig.Load() {
		return nil
	}
	return w.c.CloseNow()
}

// closeFrame closes the WebSocket with its close frame: 1009 after a
// message over the frame limit, else a normal closure.
func (w *wsConn) closeFrame() {
	if w.tooBig.Load() {
		w.c.Close(websocket.StatusMessageTooBig, fmt.Sprintf("frame exceeds %d bytes", w.max))
		return
	}
	w.c.Close(websocket.StatusNormalClosure, "")
}

// keepalive pings after ping without a message from the peer and closes
// the connection when no pong comes within wait. alive is asked at each
// round whether the connection's credential still holds (an expired
// one's holds are closed by the keeper).
func (w *wsConn) keepalive(ping, wait time.Duration, alive func() bool) {
	t := time.NewTimer(ping)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
		}
		if !alive() {
			return
		}
		idle := time.Since(time.Unix(0, w.active.Load()))
		if idle < ping {
			t.Reset(ping - idle)
			continue
		}
		ctx, cancel := context.WithTimeout(w.ctx, wait)
		err := w.c.Ping(ctx)
		cancel()
		if err != nil {
			w.c.CloseNow()
			w.cancel()
			return
		}
		w.active.Store(time.Now().UnixNano())
		t.Reset(ping)
	}
}

// serveWS upgrades r and serves the socket protocol (/ws) or ACP (/acp)
// on it until either side ends it.
func (g *Gateway) serveWS(w http.ResponseWriter, r *http.Request, peer string, isACP bool) {
	if !g.busy() {
		writeError(w, http.StatusServiceUnavailable, "stopping", "the daemon is stopping")
		return
	}
	defer g.idle()
	// A client that authenticated with a subprotocol must get one back;
	// "zeroclaw.v1" when it offered it, else its bearer or key one.
	var protos []string
	for _, p := range wsProtocols(r) {
		if p == "zeroclaw.v1" {
			protos = append([]string{p}, protos...)
		} else if strings.HasPrefix(p, "bearer.") || strings.HasPrefix(p, "key.") {
			protos = append(protos, p)
		}
	}
	hj := &hijacker{ResponseWriter: w}
	c, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		Subprotocols: protos,
		// The Origin was checked already, with the gateway's own rules.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return // Accept answered the request
	}
	// The engine's own frame limit answers an oversized frame with an
	// error; past this the WebSocket closes with 1009.
	c.SetReadLimit(int64(g.o.MaxFrame) + 64<<10)
	// The ACP bridge reads larger frames (editors send whole files): its
	// limit is the read limit.
	max := g.o.MaxFrame
	if isACP {
		max += 64 << 10
	}
	wc := newWSConn(g.ctx, c, max)
	wc.batch = hj.conn
	g.mu.Lock()
	g.wss[wc] = struct{}{}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.wss, wc)
		g.mu.Unlock()
	}()
	id := token(r).ID
	release := g.o.Keeper.Hold(id, func() {
		go c.Close(websocket.StatusPolicyViolation, "credential revoked or expired")
	})
	defer release()
	go wc.keepalive(g.o.Ping, g.o.PongWait, func() bool { return g.o.Keeper.Alive(id) })
	g.log.Info("gateway client connected", "peer", peer, "route", r.URL.Path, "tokenId", token(r).ID)
	defer metrics.Connected("gateway")()
	if isACP {
		err = acp.Serve(wc.ctx, wc, acp.Options{Version: g.o.Version, Logger: g.log.With("peer", peer),
			Dial: func(ctx context.Context, h jsonrpc.Handler, caps *protocol.ClientCapabilities, editor string) (*client.Client, error) {
				name := "gateway acp"
				if editor != "" {
					name = editor + " (gateway acp)"
				}
				return g.open(ctx, peer, name, h, caps)
			}})
	} else {
		err = g.o.Serve(wc.ctx, wc, rpc.Peer{Label: peer, UID: -1, Remote: true})
	}
	g.log.Info("gateway client disconnected", "peer", peer, "err", err)
	wc.closeFrame()
	wc.cancel()
}
