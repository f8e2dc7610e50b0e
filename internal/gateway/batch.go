package gateway

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// The WebSocket library flushes every message to the connection, a
// system call per message; a stream of 100,000 small events would cost
// 100,000 of them where the Unix socket writes a batch at once. batchConn
// sits under the library: while a batch of messages is written (one
// buffer of the engine's outgoing queue), their bytes gather, and the
// batch ends with one write. Outside a batch (pongs, close frames)
// writes go straight through.
type batchConn struct {
	net.Conn
	mu    sync.Mutex
	batch bool
	buf   []byte
}

// batchMax bounds what a batch gathers before it writes.
const batchMax = 256 << 10

func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.batch && len(b.buf)+len(p) <= batchMax {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if err := b.flushLocked(time.Time{}); err != nil {
		return 0, err
	}
	return b.Conn.Write(p)
}

func (b *batchConn) begin() {
	b.mu.Lock()
	b.batch = true
	b.mu.Unlock()
}

// end writes what the batch gathered, within deadline (zero: none).
func (b *batchConn) end(deadline time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batch = false
	return b.flushLocked(deadline)
}

func (b *batchConn) flushLocked(deadline time.Time) error {
	if len(b.buf) == 0 {
		return nil
	}
	if !deadline.IsZero() {
		b.Conn.SetWriteDeadline(deadline)
		defer b.Conn.SetWriteDeadline(time.Time{})
	}
	_, err := b.Conn.Write(b.buf)
	if cap(b.buf) > 64<<10 {
		b.buf = nil // a burst's buffer is not kept by an idle connection
	} else {
		b.buf = b.buf[:0]
	}
	return err
}

// hijacker hands the WebSocket library a batchConn in place of the
// request's connection.
type hijacker struct {
	http.ResponseWriter
	conn *batchConn
}

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = &batchConn{Conn: nc}
	return h.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(h.conn, 4096)), nil
}
