package session

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/zeroclaw/zeroclaw/internal/eventlog"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Source is a stream of frames a connection's writer pulls (an event
// log's subscription is one; see eventlog.Source).
type Source = eventlog.Source

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
	subs      map[*Session]*eventlog.Sub
	closed    bool
	closers   []func() // run at Close
}

// NewClient returns a client on conn, assumed to take frames of the
// protocol's default size until SetIdentity says otherwise.
func NewClient(conn Conn) *Client {
	c := &Client{conn: conn, subs: map[*Session]*eventlog.Sub{}}
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

// subscribe records sb as c's subscription to s (its earlier one if it
// still holds one); nil when the client is closed. The event log calls
// it (Attach's join) with its subMu held.
func (c *Client) subscribe(s *Session, sb *eventlog.Sub) *eventlog.Sub {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	if old := c.subs[s]; old != nil {
		return old
	}
	c.subs[s] = sb
	return sb
}

func (c *Client) unsubscribe(s *Session) {
	c.mu.Lock()
	delete(c.subs, s)
	c.mu.Unlock()
}
