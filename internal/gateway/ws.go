package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/acp"
	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
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

	wmu      sync.Mutex
	part     []byte // a line not yet complete
	deadline atomic.Int64
	batch    *batchConn // the connection under c: one write per Write
}

func newWSConn(parent context.Context, c *websocket.Conn) *wsConn {
	w := &wsConn{c: c}
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
			w.cur = r
		}
		n, err := w.cur.Read(p)
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

func (w *wsConn) Close() error {
	w.cancel()
	return w.c.CloseNow()
}

// keepalive pings after ping without a message from the peer and closes
// the connection when no pong comes within wait.
func (w *wsConn) keepalive(ping, wait time.Duration) {
	t := time.NewTimer(ping)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C:
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
	// "zeroclaw.v1" when it offered it, else its bearer one.
	var protos []string
	for _, p := range wsProtocols(r) {
		if p == "zeroclaw.v1" {
			protos = append([]string{p}, protos...)
		} else if len(p) > 7 && p[:7] == "bearer." {
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
	wc := newWSConn(g.ctx, c)
	wc.batch = hj.conn
	g.mu.Lock()
	g.wss[wc] = struct{}{}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.wss, wc)
		g.mu.Unlock()
	}()
	release := g.o.Keeper.Hold(token(r).ID, func() {
		go c.Close(websocket.StatusPolicyViolation, "token revoked")
	})
	defer release()
	go wc.keepalive(g.o.Ping, g.o.PongWait)
	g.log.Info("gateway client connected", "peer", peer, "route", r.URL.Path, "tokenId", token(r).ID)
	if isACP {
		err = acp.Serve(wc.ctx, wc, acp.Options{Version: g.o.Version, Logger: g.log.With("peer", peer),
			Dial: func(ctx context.Context, h jsonrpc.Handler, caps *protocol.ClientCapabilities) (*client.Client, error) {
				return g.open(ctx, peer, h, caps)
			}})
	} else {
		err = g.o.Serve(wc.ctx, wc, rpc.Peer{Label: peer, UID: -1, Remote: true})
	}
	g.log.Info("gateway client disconnected", "peer", peer, "err", err)
	c.Close(websocket.StatusNormalClosure, "")
	wc.cancel()
}
