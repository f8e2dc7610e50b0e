package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Conn is what a client's connection must offer the sessions.
type Conn interface {
	NotifyBatch(method string, params []json.RawMessage) error
	Call(ctx context.Context, method string, params, result any) error
	Close() error
}

// Bounds of a client's outgoing queue: a client that falls this far behind
// is disconnected, so it can neither stall a turn nor grow the daemon.
const (
	QueueFrames = 8192
	QueueBytes  = 16 << 20
	batchFrames = 256
)

// Client is one connected client: its identity, the sessions it is
// attached to, and its bounded queue of outgoing session/update frames,
// drained by its own writer goroutine.
type Client struct {
	conn Conn
	log  *slog.Logger

	mu        sync.Mutex
	id        string
	canElicit bool
	sessions  map[*Session]struct{}
	closed    bool

	q       chan item
	qBytes  atomic.Int64
	dropped atomic.Bool
	gone    chan struct{} // closed by Close
	done    chan struct{} // closed when the writer has stopped
}

// item is one queued frame, or (body nil) a barrier whose done is closed
// once everything queued before it is written.
type item struct {
	body json.RawMessage
	done chan struct{}
}

// NewClient starts a client on conn.
func NewClient(conn Conn, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{conn: conn, log: log, sessions: map[*Session]struct{}{},
		q: make(chan item, QueueFrames), gone: make(chan struct{}), done: make(chan struct{})}
	go c.writer()
	return c
}

// SetIdentity records the clientId and capabilities of initialize.
func (c *Client) SetIdentity(id string, canElicit bool) {
	c.mu.Lock()
	c.id, c.canElicit = id, canElicit
	c.mu.Unlock()
}

// ID returns the clientId.
func (c *Client) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

func (c *Client) elicits() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.canElicit && !c.closed
}

// Close detaches the client from every session and stops its writer. The
// connection's owner calls it when the connection ends.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	ss := make([]*Session, 0, len(c.sessions))
	for s := range c.sessions {
		ss = append(ss, s)
	}
	c.sessions = nil
	c.mu.Unlock()
	for _, s := range ss {
		s.detach(c)
	}
	close(c.gone)
	<-c.done
}

func (c *Client) attached(s *Session) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.sessions[s]
	return ok
}

// track records s as attached; false when the client is closed.
func (c *Client) track(s *Session, on bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if on {
		c.sessions[s] = struct{}{}
	} else {
		delete(c.sessions, s)
	}
	return true
}

// push queues a frame without blocking. A client whose queue is full is
// disconnected: the caller (a session's delivery) never waits for it.
func (c *Client) push(body json.RawMessage) {
	if c.dropped.Load() {
		return
	}
	if c.qBytes.Add(int64(len(body))) > QueueBytes {
		c.overflow()
		return
	}
	select {
	case c.q <- item{body: body}:
	default:
		c.overflow()
	}
}

func (c *Client) overflow() {
	if c.dropped.Swap(true) {
		return
	}
	c.log.Warn("client is not reading its events: disconnecting it", "clientId", c.ID(),
		"queuedFrames", len(c.q), "queuedBytes", c.qBytes.Load())
	go c.conn.Close()
}

// flush waits until everything queued so far has been written (or the
// client is gone, or ctx ends).
func (c *Client) flush(ctx context.Context) {
	if c.dropped.Load() {
		return
	}
	done := make(chan struct{})
	select {
	case c.q <- item{done: done}:
	case <-c.gone:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-done:
	case <-c.gone:
	case <-ctx.Done():
	}
}

func (c *Client) writer() {
	defer close(c.done)
	batch := make([]json.RawMessage, 0, batchFrames)
	var dones []chan struct{}
	for {
		var it item
		select {
		case it = <-c.q:
		case <-c.gone:
			return
		}
		batch, dones = batch[:0], dones[:0]
		size := 0
		add := func(it item) {
			if it.body == nil {
				dones = append(dones, it.done)
				return
			}
			batch = append(batch, it.body)
			size += len(it.body)
		}
		add(it)
	fill:
		for len(batch) < batchFrames {
			select {
			case it = <-c.q:
				add(it)
			default:
				break fill
			}
		}
		if len(batch) > 0 {
			if err := c.conn.NotifyBatch(protocol.MethodSessionUpdate, batch); err != nil {
				c.dropped.Store(true)
			}
		}
		c.qBytes.Add(-int64(size))
		for _, d := range dones {
			close(d)
		}
	}
}
