package jsonrpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Handler serves incoming requests and notifications. The Conn calls it
// from its read loop, one frame at a time and in arrival order, so it must
// not block: work that waits returns a Later and is answered when it ends,
// and work that should not wait but might returns a Cheap. For a
// notification the result is discarded.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle implements Handler.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Later is a result that defers the answer: the Conn runs the function on
// its own goroutine, with a context that ends with the connection, and sends
// what it returns as the response.
type Later func(ctx context.Context) (any, error)

// Options configure a Conn. The zero value is usable.
type Options struct {
	MaxFrame int          // largest incoming frame; 0 means DefaultMaxFrame
	Logger   *slog.Logger // nil discards logs
	IDPrefix string       // prefix of outgoing request ids; "" means "zc-out-"
	// MaxQueue bounds the bytes of frames waiting to be written; 0 means
	// DefaultMaxQueue.
	MaxQueue int
	// StallTimeout is how long a write may make no progress before the
	// connection is given up; 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// EOFGrace bounds how long, once the peer has finished sending, the
	// calls still running may take to be answered before the connection
	// ends (their contexts cancelled); 0 means no bound (a peer that
	// only half-closed gets every answer).
	EOFGrace time.Duration
	// MaxCalls bounds the requests being served at once (on the read
	// loop or off it, until their answers are queued); past it the read
	// loop waits. 0 means DefaultMaxCalls.
	MaxCalls int
	// MaxWaiting bounds the calls that only wait (see Waits); 0 means
	// DefaultMaxWaiting.
	MaxWaiting int
}

// Conn is one JSON-RPC 2.0 peer over an NDJSON stream. It serves incoming
// requests through its Handler and sends its own calls, matching responses
// only against its own pending map.
type Conn struct {
	rwc      io.ReadWriteCloser
	r        *Reader
	handler  Handler
	log      *slog.Logger
	prefix   string
	maxQueue int
	stall    time.Duration
	eofGrace time.Duration
	peerMax  atomic.Int64 // the largest frame the peer accepts; 0: no limit known

	out     outbox
	writers sync.WaitGroup

	flight  flight     // the calls in flight, bounded
	watch   watch      // the preempter's view of the read loop
	readEnd chan error // why reading ended, when the loop was handed over

	nextID  atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan *Response // keyed by ID.key

	ctx    context.Context // ends when the connection does
	cancel context.CancelFunc
	later  sync.WaitGroup
	// inflight cancels each request answered Later, by id
	// ($/cancelRequest).
	inflight map[string]context.CancelCauseFunc
	done     chan struct{}
	readDone chan struct{} // closed when the peer can send nothing more
	doneOnce sync.Once
	err      error // why the connection ended; set before done closes
	// wdeadline is the write deadline set now (writeAll; the writer's
	// role holder's alone).
	wdeadline time.Time
}

// NewConn returns a Conn on rwc. Nothing is read until Run is called.
// A nil handler answers every request with "method not found".
func NewConn(rwc io.ReadWriteCloser, h Handler, opts Options) *Conn {
	if h == nil {
		h = HandlerFunc(func(context.Context, *Request) (any, error) { return nil, ErrMethodNotFound })
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := opts.IDPrefix
	if prefix == "" {
		prefix = "zc-out-"
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		rwc: rwc, r: NewReader(rwc, opts.MaxFrame),
		handler: h, log: log, prefix: prefix,
		maxQueue: opts.MaxQueue, stall: opts.StallTimeout, eofGrace: opts.EOFGrace,
		pending: map[string]chan *Response{}, inflight: map[string]context.CancelCauseFunc{},
		ctx: ctx, cancel: cancel, done: make(chan struct{}), readDone: make(chan struct{}),
		readEnd: make(chan error, 1),
	}
	if c.maxQueue <= 0 {
		c.maxQueue = DefaultMaxQueue
	}
	if c.stall <= 0 {
		c.stall = DefaultStallTimeout
	}
	c.initOutbox()
	c.flight.init(cmp.Or(max(opts.MaxCalls, 0), DefaultMaxCalls), cmp.Or(max(opts.MaxWaiting, 0), DefaultMaxWaiting))
	return c
}

// SetPeerMaxFrame records the largest frame the peer accepts (0: no
// limit). A response that would be larger is replaced by an error that
// says so, so no frame ever exceeds the peer's limit.
func (c *Conn) SetPeerMaxFrame(n int) { c.peerMax.Store(int64(n)) }

// PeerMaxFrame returns the limit set by SetPeerMaxFrame.
func (c *Conn) PeerMaxFrame() int { return int(c.peerMax.Load()) }

// MaxFrame returns the largest incoming frame this connection accepts.
func (c *Conn) MaxFrame() int { return c.r.max }

// Run reads and dispatches frames until the stream ends, ctx is cancelled
// or Close is called, then fails every pending call, waits for the deferred
// handlers, and returns why it stopped (nil for a clean end of stream or Close).
func (c *Conn) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { c.finish(ctx.Err()) })
	defer stop()
	err := c.readLoop(0)
	if errors.Is(err, errHandedOver) {
		err = <-c.readEnd // from the reader that read last
	}
	c.endWatch()
	var tooLarge *FrameTooLargeError
	if errors.As(err, &tooLarge) {
		c.log.Warn("frame too large; closing connection", "limit", tooLarge.Limit)
		_ = c.sendError(NullID, &Error{Code: CodeInvalidRequest, Message: tooLarge.Error()})
		// Read (and drop) the rest of the line, bounded, so the sender is
		// not cut off mid-write and can read the error; then close.
		if !tooLarge.ended {
			c.r.discardLine(max(4*c.r.max, 64<<20), 2*time.Second, c.rwc)
		}
		c.waitFlushed(2 * time.Second)
	}
	close(c.readDone) // no response can arrive any more: pending calls fail now
	if errors.Is(err, io.EOF) {
		// The peer has finished sending (it may only have half-closed):
		// answer what is still running before closing our side, within
		// the grace when there is one.
		c.waitLater(c.eofGrace)
		c.waitFlushed(c.stall)
		err = nil
	}
	c.finish(err)
	c.later.Wait()
	c.writers.Wait()
	return c.Err()
}

// readLoop reads and dispatches frames as reader epoch until the stream
// ends (its error) or the preempter gives the loop to another reader
// (errHandedOver).
func (c *Conn) readLoop(epoch uint64) error {
	for {
		line, err := c.r.Read()
		if err != nil {
			return err
		}
		if !c.dispatch(line, epoch) {
			return errHandedOver
		}
	}
}

// waitLater waits for the calls running off the read loop, up to d (0:
// no bound).
func (c *Conn) waitLater(d time.Duration) {
	if d <= 0 {
		c.later.Wait()
		return
	}
	done := make(chan struct{})
	go func() { c.later.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// waitFlushed waits (bounded) until everything queued has been written.
func (c *Conn) waitFlushed(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.flushed():
	case <-c.done:
	case <-t.C:
	}
}

// finish ends the connection once: it records why, closes the stream,
// cancels handler contexts and wakes every waiting call.
func (c *Conn) finish(err error) {
	c.doneOnce.Do(func() {
		c.err = err
		c.cancel()
		_ = c.rwc.Close()
		close(c.done)
		c.endOutbox()
		c.flight.end()
	})
}

// Close ends the connection. Pending calls fail with ErrClosed.
func (c *Conn) Close() error {
	c.finish(nil)
	return nil
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is why the connection ended, once Done is closed.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		if c.err != nil && (errors.Is(c.err, io.ErrClosedPipe) || errors.Is(c.err, context.Canceled)) {
			return nil
		}
		return c.err
	default:
		return nil
	}
}

// dispatch handles one frame as reader epoch; false when the read loop
// was handed over meanwhile (this goroutine is no longer its reader).
func (c *Conn) dispatch(line []byte, epoch uint64) bool {
	msg, v := classify(line)
	switch {
	case v != nil && v.reply != nil:
		_ = c.sendError(v.id, v.reply)
	case v != nil:
		c.log.Warn("dropped frame", "reason", v.drop, "bytes", len(line))
	case msg.resp != nil:
		c.resolve(msg.resp, len(line))
	default:
		return c.serve(msg.req, epoch)
	}
	return true
}

func (c *Conn) serve(req *Request, epoch uint64) bool {
	if req.Method == MethodCancelRequest {
		c.cancelRequest(req)
		return true
	}
	// A place among the calls in flight, given back once the answer is
	// queued; the read loop waits here while there is none.
	s := c.flight.admit()
	result, err := c.handler.Handle(c.ctx, req)
	reader := true
	if cheap, ok := result.(Cheap); ok && err == nil {
		result, err, reader = c.runCheap(epoch, cheap)
		reader = !reader
	}
	if later, ok := result.(Later); ok && err == nil {
		// Its own context: it ends with the connection, or with the
		// peer's $/cancelRequest for its id; it carries the call's place
		// (Waits).
		cctx, cancel := context.WithCancelCause(c.ctx)
		ls := &slot{f: s.f} // its own, on the heap: the read loop's stays on the stack
		ctx := &callCtx{Context: cctx, s: ls}
		var key string
		if !req.IsNotification() {
			key = req.ID.key()
			c.mu.Lock()
			c.inflight[key] = cancel
			c.mu.Unlock()
		}
		c.later.Add(1)
		go func() {
			defer c.later.Done()
			res, err := later(ctx)
			if err != nil && errors.Is(context.Cause(ctx), ErrRequestCancelled) {
				err = &Error{Code: CodeRequestCancelled, Message: "request cancelled ($/cancelRequest)"}
			}
			if key != "" {
				c.mu.Lock()
				delete(c.inflight, key)
				c.mu.Unlock()
			}
			cancel(nil)
			c.reply(req, res, err)
			ls.release()
		}()
		return reader
	}
	c.reply(req, result, err)
	s.release()
	return reader
}

// MethodCancelRequest is the LSP family's request cancellation
// (vscode-jsonrpc sends it): params {id}, the id of a request of the
// peer still running here. The Conn serves it itself, on the read loop.
const MethodCancelRequest = "$/cancelRequest"

// ErrRequestCancelled is the cause of a request's context cancelled by
// the peer's $/cancelRequest.
var ErrRequestCancelled = errors.New("jsonrpc: request cancelled by the peer")

// cancelRequest cancels the context of the running request named by
// params.id. A request that has been answered already, or was answered
// at once, is not running: nothing happens. As a request it is answered
// {"cancelled":bool}.
func (c *Conn) cancelRequest(req *Request) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	found := false
	if json.Unmarshal(req.Params, &p) == nil && validID(p.ID) {
		c.mu.Lock()
		cancel := c.inflight[ID{raw: p.ID}.key()]
		c.mu.Unlock()
		if cancel != nil {
			cancel(ErrRequestCancelled)
			found = true
		}
	}
	if !req.IsNotification() {
		c.reply(req, map[string]bool{"cancelled": found}, nil)
	}
}

// Then is a result that runs After once the response has been written (or
// failed to be): for a method such as shutdown whose effect would otherwise
// race its own answer.
type Then struct {
	Result any
	After  func()
}

func (c *Conn) reply(req *Request, result any, err error) {
	var after func()
	if t, ok := result.(Then); ok {
		result, after = t.Result, t.After
	}
	if req.IsNotification() {
		if err != nil && !errors.Is(err, ErrMethodNotFound) {
			c.log.Debug("notification failed", "method", req.Method, "err", err)
		}
		if after != nil {
			after()
		}
		return
	}
	if err != nil {
		_ = c.sendErrorThen(req.ID, toWire(req.Method, err), after)
		return
	}
	// The result is encoded in place, into the frame the outbox keeps:
	// one copy of its bytes, in a buffer of answerBufs'.
	pb := answerBufs.Get().(*[]byte)
	buf := append((*pb)[:0], `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, req.ID.Raw()...)
	buf = append(buf, `,"result":`...)
	buf, merr := appendJSON(buf, result)
	if merr != nil {
		giveBack(pb, buf)
		_ = c.sendErrorThen(req.ID, &Error{Code: CodeInternalError, Message: "internal error: " + merr.Error()}, after)
		return
	}
	buf = append(buf, '}')
	if max := c.PeerMaxFrame(); max > 0 && len(buf) > max {
		c.log.Warn("result over the peer's frame limit; answering an error instead", "method", req.Method, "bytes", len(buf), "limit", max)
		giveBack(pb, buf)
		_ = c.sendErrorThen(req.ID, NewError(CodeInternalError, map[string]any{"kind": "frame_too_large", "bytes": len(buf), "limit": max},
			"the result of %s is %d bytes, over this client's frame limit of %d", req.Method, len(buf), max), after)
		return
	}
	_ = c.enqueueLine(append(buf, '\n'), pb, after)
}

func (c *Conn) sendError(id ID, e *Error) error { return c.sendErrorThen(id, e, nil) }

func (c *Conn) sendErrorThen(id ID, e *Error, after func()) error {
	body, err := marshal(e)
	if err != nil {
		if after != nil {
			after()
		}
		return err
	}
	buf := make([]byte, 0, len(body)+len(id.Raw())+40)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id.Raw()...)
	buf = append(buf, `,"error":`...)
	buf = append(buf, body...)
	buf = append(buf, '}')
	return c.enqueue(buf, after)
}

func (c *Conn) resolve(resp *Response, size int) {
	if string(resp.ID.Raw()) == "null" {
		c.log.Warn("dropped response with null id", "bytes", size)
		return
	}
	k := resp.ID.key()
	c.mu.Lock()
	ch, ok := c.pending[k]
	delete(c.pending, k)
	c.mu.Unlock()
	if !ok {
		c.log.Warn("dropped response to unknown id", "bytes", size)
		return
	}
	ch <- resp
}

// Call sends a request and waits for its response, decoding a successful
// result into result (which may be nil). An error response is returned as
// *Error; a connection that ends first returns ErrClosed.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	p, err := c.Start(method, params)
	if err != nil {
		return err
	}
	return p.Wait(ctx, result)
}

// Pending is a request sent whose answer is awaited with Wait.
type Pending struct {
	c      *Conn
	ch     chan *Response
	forget func()
}

// Start sends a request now and returns it pending: requests started one
// after another reach the peer in that order, whenever their answers
// are awaited.
func (c *Conn) Start(method string, params any) (*Pending, error) {
	id := StringID(c.prefix + strconv.FormatUint(c.nextID.Add(1)-1, 10))
	ch := make(chan *Response, 1)
	k := id.key()
	c.mu.Lock()
	c.pending[k] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, k)
		c.mu.Unlock()
	}
	if err := c.send(id, method, params); err != nil {
		forget()
		return nil, err
	}
	return &Pending{c: c, ch: ch, forget: forget}, nil
}

// Wait waits for the answer of a request Start sent, decoding its result
// into result.
func (p *Pending) Wait(ctx context.Context, result any) error {
	c, ch, forget := p.c, p.ch, p.forget
	answer := func(resp *Response) error {
		if resp.Error != nil {
			return resp.Error
		}
		if result == nil || string(resp.Result) == "null" {
			return nil
		}
		return json.Unmarshal(resp.Result, result)
	}
	select {
	case resp := <-ch:
		return answer(resp)
	case <-ctx.Done():
		forget()
		return ctx.Err()
	case <-c.done:
	case <-c.readDone:
	}
	// The connection ended; an answer read before its end still counts
	// (select picks at random among ready cases: a peer that answers and
	// hangs up, as the daemon's shutdown does, would lose its answer).
	select {
	case resp := <-ch:
		return answer(resp)
	default:
		forget()
		return ErrClosed
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	return c.send(ID{}, method, params)
}

// methodJSON is the prelude of every outgoing frame: ErrClosed on a
// closed connection, else the method as JSON.
func (c *Conn) methodJSON(method string) ([]byte, error) {
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	return json.Marshal(method)
}

func (c *Conn) send(id ID, method string, params any) error {
	m, err := c.methodJSON(method)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, 128)
	buf = append(buf, `{"jsonrpc":"2.0"`...)
	if !id.IsZero() {
		buf = append(buf, `,"id":`...)
		buf = append(buf, id.raw...)
	}
	buf = append(buf, `,"method":`...)
	buf = append(buf, m...)
	if params != nil {
		p, err := marshal(params)
		if err != nil {
			return err
		}
		buf = append(buf, `,"params":`...)
		buf = append(buf, p...)
	}
	buf = append(buf, '}')
	return c.enqueue(buf, nil)
}
