package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"sync"
	"sync/atomic"

	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Source is a stream of frames a connection's writer pulls when it
// reaches the stream's place in the connection's one outgoing queue (the
// same shape as jsonrpc.Source; this package does not import jsonrpc).
type Source interface {
	AppendFrames(buf []byte, first bool, max int) ([]byte, bool, error)
}

// Conn is what a client's connection must offer the sessions: its one
// outgoing queue (events are queued as Sources, so answers, events and
// requests keep their order) and calls to the client.
type Conn interface {
	Push(src Source) error
	Call(ctx context.Context, method string, params, result any) error
	Notify(method string, params any) error
}

// Client is one connected client: its identity, and the sessions it is
// attached to. It holds no queue of its own: a subscription is queued on
// the connection when its session has events for it, and the connection's
// writer pulls them, from memory while they are recent and from the store
// when the client has fallen behind, so a slow client neither stalls a
// turn nor grows the daemon, and still misses nothing.
type Client struct {
	conn Conn

	maxFrame atomic.Int64 // the largest frame the client accepts

	mu        sync.Mutex
	id        string
	name      string // its initialize's clientInfo.name
	canElicit bool
	elicitURL bool       // and url-mode questions
	fsRead    bool       // the client answers fs/read_text_file
	fsWrite   bool       // and fs/write_text_file
	terminal  bool       // and terminal/run
	actor     gate.Actor // who it acts for ("": the user)
	subs      map[*Session]*sub
	closed    bool
	closers   []func() // run at Close
}

// sub is one client's subscription to one session's stream.
type sub struct {
	c *Client
	s *Session
	// Guarded by s.subMu.
	queued   bool // an item of this sub waits in the connection's queue
	detached bool
	// written is the last seq written to the client (set by the
	// connection's writer, read by the session to trim its memory).
	written atomic.Int64
	// target is what this place in the queue writes up to; writer only.
	target int64
	// behind holds events read from the store and not written yet (for
	// a client that fell out of memory's reach); writer only.
	behind []store.Event
}

// NewClient returns a client on conn, assumed to take frames of the
// protocol's default size until SetIdentity says otherwise.
func NewClient(conn Conn) *Client {
	c := &Client{conn: conn, subs: map[*Session]*sub{}}
	c.maxFrame.Store(protocol.DefaultMaxFrame)
	return c
}

// SetIdentity records the clientId, the client's name and the
// capabilities of initialize.
func (c *Client) SetIdentity(id, name string, canElicit bool, maxFrame int) {
	c.mu.Lock()
	c.id, c.name, c.canElicit = id, name, canElicit
	c.mu.Unlock()
	if maxFrame > 0 {
		c.maxFrame.Store(int64(maxFrame))
	}
}

// SetFS records which file and command requests the client answers.
func (c *Client) SetFS(read, write, terminal bool) {
	c.mu.Lock()
	c.fsRead, c.fsWrite, c.terminal = read, write, terminal
	c.mu.Unlock()
}

func (c *Client) notify(method string, params any) { _ = c.conn.Notify(method, params) }

func (c *Client) runs() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminal && !c.closed
}

func (c *Client) fs() (read, write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, false
	}
	return c.fsRead, c.fsWrite
}

// MaxFrame returns the largest frame the client accepts.
func (c *Client) MaxFrame() int { return int(c.maxFrame.Load()) }

// ID returns the clientId.
func (c *Client) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// SetElicitURL records whether the client takes url-mode questions.
func (c *Client) SetElicitURL(ok bool) {
	c.mu.Lock()
	c.elicitURL = ok
	c.mu.Unlock()
}

// Name returns the client's name ("" when it gave none).
func (c *Client) Name() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

func (c *Client) elicits() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.canElicit && !c.closed
}

func (c *Client) elicitsURL() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.canElicit && c.elicitURL && !c.closed
}

// Close detaches the client from every session. The connection's owner
// calls it when the connection ends.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	subs := c.subs
	c.subs = nil
	closers := c.closers
	c.closers = nil
	c.mu.Unlock()
	for s := range subs {
		s.detach(c)
	}
	for _, f := range closers {
		f()
	}
}

// onClose runs f when the client closes (at once if it has).
func (c *Client) onClose(f func()) {
	c.mu.Lock()
	if !c.closed {
		c.closers = append(c.closers, f)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	f()
}

// Attached says whether the client is attached to live session id now
// (closed, deleted or unloaded, a session is no longer): a call about it
// finds it live.
func (c *Client) Attached(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.subs {
		if s.id == id {
			return true
		}
	}
	return false
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
	sb := &sub{c: c, s: s}
	sb.written.Store(seq)
	c.subs[s] = sb
	return sb
}

func (c *Client) unsubscribe(s *Session) {
	c.mu.Lock()
	delete(c.subs, s)
	c.mu.Unlock()
}

// catchUpPage bounds one read from the store for a client that is behind.
const (
	catchUpRows  = 0 // no row limit: a page is bounded by bytes
	catchUpBytes = 256 << 10
)

var errEventsGone = errors.New("session events are missing from the store")

// AppendFrames implements Source: the session/update frames of this
// subscription, from the one after the last written up to what was
// delivered when the writer reached this place in the queue.
func (sb *sub) AppendFrames(buf []byte, first bool, max int) ([]byte, bool, error) {
	before := sb.written.Load()
	buf, more, err := sb.appendFrames(buf, first, max)
	if n := sb.written.Load() - before; n > 0 {
		metrics.EventsSent(int(n))
	}
	return buf, more, err
}

func (sb *sub) appendFrames(buf []byte, first bool, max int) ([]byte, bool, error) {
	s := sb.s
	if first {
		s.subMu.Lock()
		sb.queued = false
		sb.target = s.delivered
		if sb.detached {
			sb.target = 0
		}
		s.subMu.Unlock()
	}
	limit := sb.c.MaxFrame()
	start := len(buf)
	for sb.written.Load() < sb.target {
		// Full, once this call wrote something: every call makes progress.
		if len(buf) >= max && len(buf) > start {
			return buf, true, nil
		}
		next := sb.written.Load() + 1
		// Events read from the store earlier, not written yet.
		for len(sb.behind) > 0 && sb.behind[0].Seq < next {
			sb.behind = sb.behind[1:]
		}
		if len(sb.behind) > 0 {
			for len(sb.behind) > 0 && (len(buf) < max || len(buf) == start) && sb.behind[0].Seq <= sb.target {
				e := sb.behind[0]
				buf = appendUpdate(buf, e.Body, limit)
				sb.written.Store(e.Seq)
				sb.behind = sb.behind[1:]
			}
			if len(sb.behind) == 0 {
				sb.behind = nil
			}
			continue
		}
		var n int
		buf, n = s.fromMemory(buf, next, sb.target, max, limit, &sb.written)
		if n > 0 {
			continue
		}
		// Not in memory any more: this client is behind; catch up from
		// the store at its own pace, a bounded page at a time.
		evs, err := s.m.store.Events(context.Background(), s.id, next-1, catchUpRows, catchUpBytes)
		if err != nil {
			return buf, false, fmt.Errorf("session %s: catch-up read: %w", s.id, err)
		}
		if len(evs) == 0 || evs[0].Seq != next {
			return buf, false, fmt.Errorf("%w: session %s seq %d", errEventsGone, s.id, next)
		}
		sb.behind = evs
	}
	sb.behind = nil
	return buf, false, nil
}

// updatePrelude and updateEnd wrap a session/update's params into a frame.
const (
	updatePrelude = `{"jsonrpc":"2.0","method":"session/update","params":`
	updateEnd     = "}\n"
)

// appendUpdate appends the frame of one event, cut to fit the client's
// frame limit if it must be (the whole event stays in the store, where
// session/event reads it).
func appendUpdate(buf, body []byte, limit int) []byte {
	if over := len(updatePrelude) + len(body) + len(updateEnd) - 1; over > limit {
		body = protocol.Cut(body, limit-len(updatePrelude)-len(updateEnd))
	}
	buf = append(buf, updatePrelude...)
	buf = append(buf, body...)
	return append(buf, updateEnd...)
}
