package gateway

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/metrics"
)

// Connection budget. The gateway never stops accepting: a flood of
// connections that never authenticate would otherwise fill every slot
// and lock out the paired clients (the kernel's backlog holds theirs
// behind the flood). Instead connections are of two classes:
//   - anonymous, until a request on them carries a valid credential: at
//     most MaxConns-Reserved of them in all and PerAddress from one
//     remote address (loopback peers all share 127.0.0.1 or ::1, so
//     they share only the bound of all); past either bound the oldest
//     anonymous connection (of that address, or of all) is closed to
//     make room for the new one;
//   - authenticated: they can use the whole budget and are never closed
//     to make room.
//
// So a flood, from one address or many, only ever displaces its own
// oldest connections and idle anonymous ones; a paired client's new
// connection lives until its first request authenticates it (which
// takes it out of reach), and Reserved slots stay for such clients.
const (
	MaxConns   = 4096
	Reserved   = 512
	PerAddress = 256
)

// budget hands out connections within the bounds above.
type budget struct {
	net.Listener
	max, reserved, perAddr int

	mu     sync.Mutex
	total  int
	anon   list.List // *budgetConn, oldest first
	byAddr map[string]*list.List
	closed bool
}

func newBudget(ln net.Listener, max, reserved, perAddr int) *budget {
	return &budget{Listener: ln, max: max, reserved: reserved, perAddr: perAddr, byAddr: map[string]*list.List{}}
}

// budgetConn is a connection counted in the budget.
type budgetConn struct {
	net.Conn
	b     *budget
	bytes metrics.Bytes
	addr  string
	// in the anonymous lists while anon (guarded by b.mu)
	anon     bool
	all, own *list.Element
	released bool
}

// Accept admits the next connection, closing others to make room as
// the budget says; it never waits for room.
func (b *budget) Accept() (net.Conn, error) {
	for {
		c, err := b.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if bc := b.admit(c); bc != nil {
			return bc, nil
		}
	}
}

// admit counts c in, or closes it when every slot is held by an
// authenticated connection.
func (b *budget) admit(c net.Conn) *budgetConn {
	addr := c.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	}
	var evict []*budgetConn
	b.mu.Lock()
	own := b.byAddr[addr]
	if own != nil && own.Len() >= b.perAddr && !loopback(addr) {
		evict = append(evict, b.dropLocked(own.Front().Value.(*budgetConn)))
	}
	if b.anon.Len() >= b.max-b.reserved || b.total >= b.max {
		if f := b.anon.Front(); f != nil {
			evict = append(evict, b.dropLocked(f.Value.(*budgetConn)))
		}
	}
	if b.total >= b.max {
		b.mu.Unlock()
		c.Close()
		return nil
	}
	bc := &budgetConn{Conn: c, b: b, bytes: metrics.BytesOf("gateway"), addr: addr, anon: true}
	b.total++
	if own == nil {
		own = &list.List{}
		b.byAddr[addr] = own
	}
	bc.all, bc.own = b.anon.PushBack(bc), own.PushBack(bc)
	b.mu.Unlock()
	for _, e := range evict {
		e.Conn.Close() // its own Close finds it released already
	}
	return bc
}

func loopback(addr string) bool {
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// dropLocked takes an anonymous connection out of the budget (to be
// closed by the caller).
func (b *budget) dropLocked(c *budgetConn) *budgetConn {
	b.unlistLocked(c)
	c.released = true
	b.total--
	return c
}

func (b *budget) unlistLocked(c *budgetConn) {
	if !c.anon {
		return
	}
	c.anon = false
	b.anon.Remove(c.all)
	own := b.byAddr[c.addr]
	own.Remove(c.own)
	if own.Len() == 0 {
		delete(b.byAddr, c.addr)
	}
}

// authenticated moves c to the authenticated class: it is never closed
// to make room.
func (c *budgetConn) authenticated() {
	c.b.mu.Lock()
	if !c.released {
		c.b.unlistLocked(c)
	}
	c.b.mu.Unlock()
}

func (c *budgetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.bytes.Received(n)
	return n, err
}

func (c *budgetConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.bytes.Sent(n)
	return n, err
}

// CloseWrite half-closes the connection: net/http does so after the 413
// of a body too large, so the client reads the answer before the close
// (an embedded net.Conn alone would hide the TCP connection's).
func (c *budgetConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *budgetConn) Close() error {
	err := c.Conn.Close()
	c.b.mu.Lock()
	if !c.released {
		c.b.dropLocked(c)
	}
	c.b.mu.Unlock()
	return err
}

type connKey struct{}

// withConn is the server's ConnContext: each request can find its
// connection's place in the budget.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if bc, ok := c.(*budgetConn); ok {
		return context.WithValue(ctx, connKey{}, bc)
	}
	return ctx
}

// authenticatedConn marks the connection of ctx's request authenticated.
func authenticatedConn(ctx context.Context) {
	if bc, ok := ctx.Value(connKey{}).(*budgetConn); ok {
		bc.authenticated()
	}
}

// Deadlines of a request's body: each read must bring something within
// BodyIdle, and the whole body must come within BodyMax. The deadline
// is lifted once the body has been read, so a stream (SSE, a webhook
// that waits) lives as long as it needs.
const (
	BodyIdle = 10 * time.Second
	BodyMax  = 2 * time.Minute
)

// deadlineBody reads a request body under those deadlines.
type deadlineBody struct {
	body        io.ReadCloser
	setDeadline func(time.Time) error
	end         time.Time
	eof         atomic.Bool
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	dl := time.Now().Add(BodyIdle)
	if dl.After(d.end) {
		dl = d.end
	}
	d.setDeadline(dl)
	n, err := d.body.Read(p)
	if errors.Is(err, io.EOF) {
		d.eof.Store(true)
		d.setDeadline(time.Time{})
	}
	return n, err
}

func (d *deadlineBody) Close() error { return d.body.Close() }
