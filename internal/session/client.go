package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Conn is what a client's connection must offer the sessions.
type Conn interface {
	NotifyBatch(method string, params []json.RawMessage) error
	Call(ctx context.Context, method string, params, result any) error
	Close() error
}

// Bounds of a client's outgoing queue. A client that falls this far behind
// a session's stream is not fed from memory any more: it catches up from
// the store at its own pace, so it neither stalls a turn nor grows the
// daemon, and still misses nothing. A client that makes no progress at all
// for StallTimeout while behind is disconnected.
const (
	QueueFrames = 4096
	QueueBytes  = 8 << 20
	batchFrames = 256
	catchUpPage = 512
)

// StallTimeout is how long a client that is behind may make no progress
// before it is disconnected (a variable so tests can shorten it).
var StallTimeout = 10 * time.Second

// Client is one connected client: its identity, the sessions it is
// attached to, and its bounded queue of outgoing session/update frames,
// drained by its own writer goroutine.
type Client struct {
	conn Conn
	log  *slog.Logger

	mu        sync.Mutex
	id        string
	canElicit bool
	subs      map[*Session]*sub
	closed    bool
	lagging   []*sub // subscriptions to catch up from the store
	watchdog  *time.Timer

	q         chan item
	qBytes    atomic.Int64
	wake      chan struct{} // a subscription started lagging
	broken    atomic.Bool   // a write failed: the connection is done
	lastWrite atomic.Int64  // unix nanos of the last successful write
	gone      chan struct{} // closed by Close
	done      chan struct{} // closed when the writer has stopped
}

// sub is one client's subscription to one session's stream.
type sub struct {
	c *Client
	s *Session
	// lag is guarded by s.subMu: while set, deliver skips this sub.
	lag bool
	// written is the last seq written to the client; writer only.
	written int64
}

// item is one queued frame, or (body nil) a barrier whose done is closed
// once its sub has been written up to seq.
type item struct {
	sub  *sub
	seq  int64
	body json.RawMessage
	done chan struct{}
}

// NewClient starts a client on conn.
func NewClient(conn Conn, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{conn: conn, log: log, subs: map[*Session]*sub{},
		q: make(chan item, QueueFrames), wake: make(chan struct{}, 1), gone: make(chan struct{}), done: make(chan struct{})}
	c.lastWrite.Store(time.Now().UnixNano())
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
	subs := c.subs
	c.subs = nil
	if c.watchdog != nil {
		c.watchdog.Stop()
	}
	c.mu.Unlock()
	for s := range subs {
		s.detach(c)
	}
	close(c.gone)
	<-c.done
}

func (c *Client) attached(s *Session) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.subs[s]
	return ok
}

// subscribe records a subscription to s (written up to seq); nil when the
// client is closed.
func (c *Client) subscribe(s *Session, seq int64) *sub {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if old := c.subs[s]; old != nil {
		return old
	}
	sb := &sub{c: c, s: s, written: seq}
	c.subs[s] = sb
	return sb
}

func (c *Client) unsubscribe(s *Session) {
	c.mu.Lock()
	delete(c.subs, s)
	c.mu.Unlock()
}

// push queues a frame of sb without blocking; false when the queue is
// full, and then the caller marks sb lagging (under s.subMu) and calls lag.
func (c *Client) push(sb *sub, seq int64, body json.RawMessage) bool {
	if c.broken.Load() {
		return true // nothing more will be written; do not lag either
	}
	if c.qBytes.Load()+int64(len(body)) > QueueBytes {
		return false
	}
	select {
	case c.q <- item{sub: sb, seq: seq, body: body}:
		c.qBytes.Add(int64(len(body)))
		return true
	default:
		return false
	}
}

// lag hands sb to the writer to catch up from the store, and arms the
// stall watchdog.
func (c *Client) lag(sb *sub) {
	c.mu.Lock()
	c.lagging = append(c.lagging, sb)
	if c.watchdog == nil && !c.closed {
		c.watchdog = time.AfterFunc(StallTimeout, c.checkStall)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Client) checkStall() {
	c.mu.Lock()
	behind := len(c.lagging) > 0
	idle := time.Since(time.Unix(0, c.lastWrite.Load()))
	if behind && idle < StallTimeout && !c.closed {
		c.watchdog.Reset(StallTimeout - idle)
		c.mu.Unlock()
		return
	}
	c.watchdog = nil
	c.mu.Unlock()
	if behind {
		c.log.Warn("client stopped reading its events: disconnecting it", "clientId", c.ID(), "idle", idle.Round(time.Millisecond))
		c.broken.Store(true)
		c.conn.Close()
	}
}

// flush waits until sb has been written up to seq (or the client is
// gone, or ctx ends).
func (c *Client) flush(ctx context.Context, sb *sub, seq int64) {
	if sb == nil || c.broken.Load() {
		return
	}
	done := make(chan struct{})
	select {
	case c.q <- item{sub: sb, seq: seq, done: done}:
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

func (c *Client) write(batch []json.RawMessage) {
	if len(batch) == 0 || c.broken.Load() {
		return
	}
	if err := c.conn.NotifyBatch(protocol.MethodSessionUpdate, batch); err != nil {
		c.broken.Store(true)
		return
	}
	c.lastWrite.Store(time.Now().UnixNano())
}

func (c *Client) writer() {
	defer close(c.done)
	batch := make([]json.RawMessage, 0, batchFrames)
	var barriers []item
	for {
		var it item
		select {
		case it = <-c.q:
		case <-c.wake:
			it.sub = nil
		case <-c.gone:
			return
		}
		batch = batch[:0]
		size := 0
		take := func(it item) {
			switch {
			case it.sub == nil: // a wake-up
			case it.body == nil:
				barriers = append(barriers, it)
			case it.seq <= it.sub.written:
				size += len(it.body) // caught up from the store already
			default:
				batch = append(batch, it.body)
				size += len(it.body)
				it.sub.written = it.seq
			}
		}
		take(it)
	fill:
		for len(batch) < batchFrames {
			select {
			case it = <-c.q:
				take(it)
			default:
				break fill
			}
		}
		c.write(batch)
		c.qBytes.Add(-int64(size))
		c.catchUp()
		barriers = c.release(barriers)
	}
}

// catchUp writes one page from the store for each lagging subscription,
// and returns to live delivery those that have caught up.
func (c *Client) catchUp() {
	c.mu.Lock()
	lag := c.lagging
	c.mu.Unlock()
	if len(lag) == 0 {
		return
	}
	var still []*sub
	for _, sb := range lag {
		if c.broken.Load() {
			break
		}
		evs, err := sb.s.m.store.Events(context.Background(), sb.s.id, sb.written, catchUpPage)
		if err != nil {
			c.log.Error("catch-up read failed", "sessionId", sb.s.id, "err", err)
			still = append(still, sb)
			continue
		}
		batch := make([]json.RawMessage, 0, len(evs))
		for _, e := range evs {
			batch = append(batch, e.Body)
			sb.written = e.Seq
		}
		c.write(batch)
		if len(evs) < catchUpPage && sb.s.resume(sb) {
			continue // live again
		}
		still = append(still, sb)
	}
	c.mu.Lock()
	// Keep any that started lagging while we read.
	c.lagging = append(still, c.lagging[len(lag):]...)
	c.mu.Unlock()
	if len(still) > 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *Client) release(barriers []item) []item {
	kept := barriers[:0]
	for _, b := range barriers {
		if b.sub.written >= b.seq || c.broken.Load() {
			close(b.done)
		} else {
			kept = append(kept, b)
		}
	}
	return kept
}
