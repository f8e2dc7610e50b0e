package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"time"
)

// The outbox is a connection's one road out: answers, its own requests,
// notifications and event streams all leave through one FIFO queue,
// drained by one writer goroutine, so what is queued first is written
// first by construction. The queue holds at most MaxQueue bytes of frames
// (a producer waits for room; a frame bigger than the bound goes alone)
// and is allocated only while something waits in it; the writer goroutine
// runs only while there is something to write.

// Source is a stream of frames that the writer pulls when it reaches the
// source's place in the queue, instead of frames copied in ahead of time:
// an event stream queued once however many events it gains meanwhile.
type Source interface {
	// AppendFrames appends whole frames, each ended by "\n", to buf. first
	// is true on the first call for this place in the queue (a source
	// takes its snapshot of what to write then). It stops once len(buf)
	// reaches max (it may go past with one frame) and reports whether it
	// has more to write for this place. An error ends the connection.
	AppendFrames(buf []byte, first bool, max int) (out []byte, more bool, err error)
}

// Defaults of the outbox.
const (
	DefaultMaxQueue     = 8 << 20
	DefaultStallTimeout = 10 * time.Second
	writeChunk          = 64 << 10 // the writer's buffer: one write call each
)

type outItem struct {
	frame  []byte  // with its "\n"
	pooled *[]byte // frame's buffer, answerBufs' (nil: not theirs)
	src    Source
	after  func() // runs once the frame is written or dropped
}

type outbox struct {
	mu      sync.Mutex
	space   *sync.Cond // signalled when bytes drop or the connection ends
	items   []outItem
	head    int
	bytes   int
	writing bool          // a writer goroutine is running
	idle    chan struct{} // closed when writing stops; made only when asked for (flushed)
	ended   bool
}

func (c *Conn) initOutbox() { c.out.space = sync.NewCond(&c.out.mu) }

// enqueue queues a frame (without its newline), waiting while the queue
// is over its bound; ErrClosed once the connection has ended.
func (c *Conn) enqueue(frame []byte, after func()) error {
	buf := make([]byte, 0, len(frame)+1)
	return c.enqueueLine(append(append(buf, frame...), '\n'), nil, after)
}

// answerBufs hold answers' frames between calls (an answer is encoded in
// place, into the frame the outbox keeps): a call's answer allocates no
// buffer of its own.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1<<10); return &b }}

// giveBack returns frame's buffer to answerBufs once nothing reads it
// (pb nil: it is not theirs; a large one is left to the collector).
func giveBack(pb *[]byte, frame []byte) {
	if pb == nil || cap(frame) > writeChunk {
		return
	}
	*pb = frame[:0]
	answerBufs.Put(pb)
}

// enqueueLine is enqueue of a frame that ends with its "\n" already, and
// that the outbox may keep as it is (an answer encoded in place); pb,
// when not nil, is the answerBufs buffer that holds it, given back once
// the frame has been written (or dropped).
func (c *Conn) enqueueLine(buf []byte, pb *[]byte, after func()) error {
	o := &c.out
	o.mu.Lock()
	for !o.ended && o.bytes > 0 && o.bytes+len(buf) > c.maxQueue {
		o.space.Wait()
	}
	if o.ended {
		o.mu.Unlock()
		giveBack(pb, buf)
		if after != nil {
			after()
		}
		return ErrClosed
	}
	if !o.writing && o.head == len(o.items) {
		// Nothing queued and no writer: write it here, holding the
		// writer's role, instead of handing it to a new goroutine (a
		// round trip's answer on an idle connection, the common case).
		o.writing = true
		c.writers.Add(1)
		o.mu.Unlock()
		err := c.writeAll(buf)
		giveBack(pb, buf)
		if after != nil {
			after()
		}
		if err != nil {
			c.finish(err)
		}
		o.mu.Lock()
		if o.head < len(o.items) && !o.ended {
			o.mu.Unlock()
			go c.writeLoop() // frames queued meanwhile: a writer takes over
			return nil
		}
		o.stopWritingLocked()
		o.mu.Unlock()
		c.writers.Done()
		if err != nil {
			return ErrClosed
		}
		return nil
	}
	o.bytes += len(buf)
	c.pushLocked(outItem{frame: buf, pooled: pb, after: after})
	o.mu.Unlock()
	return nil
}

// Push queues a Source; it never waits. ErrClosed once the connection
// has ended.
func (c *Conn) Push(src Source) error {
	o := &c.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return ErrClosed
	}
	c.pushLocked(outItem{src: src})
	return nil
}

func (c *Conn) pushLocked(it outItem) {
	o := &c.out
	o.items = append(o.items, it)
	if !o.writing {
		o.writing = true
		c.writers.Add(1)
		go c.writeLoop()
	}
}

// stopWritingLocked ends the writer's role (o.mu held): the queue is
// dropped and whoever waits for it to be flushed is told.
func (o *outbox) stopWritingLocked() {
	o.items, o.head = nil, 0 // an idle connection keeps no queue
	o.writing = false
	if o.idle != nil {
		close(o.idle)
		o.idle = nil
	}
}

// pop returns the next item; false when the queue is empty (and then the
// writer has stopped: writing is cleared under the same lock).
func (c *Conn) pop() (outItem, bool) {
	o := &c.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.head == len(o.items) || o.ended {
		o.stopWritingLocked()
		return outItem{}, false
	}
	it := o.items[o.head]
	o.items[o.head] = outItem{}
	o.head++
	if it.frame != nil {
		o.bytes -= len(it.frame)
		o.space.Broadcast()
	}
	return it, true
}

// flushed returns a channel closed once the writer has nothing left to
// write (immediately when it is idle).
func (c *Conn) flushed() <-chan struct{} {
	o := &c.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.writing {
		return closedChan
	}
	if o.idle == nil {
		o.idle = make(chan struct{})
	}
	return o.idle
}

var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// endOutbox wakes every waiting producer and runs the callbacks of what
// will never be written.
func (c *Conn) endOutbox() {
	o := &c.out
	o.mu.Lock()
	o.ended = true
	var afters []func()
	for _, it := range o.items[o.head:] {
		if it.after != nil {
			afters = append(afters, it.after)
		}
	}
	if !o.writing {
		o.items, o.head = nil, 0
	}
	o.space.Broadcast()
	o.mu.Unlock()
	for _, f := range afters {
		f()
	}
}

// writeBufs holds writers' buffers between bursts: a writer runs only
// while there is something to write, so an idle connection holds none.
var writeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2*writeChunk); return &b }}

func (c *Conn) writeLoop() {
	defer c.writers.Done()
	pb := writeBufs.Get().(*[]byte)
	buf := (*pb)[:0]
	defer func() {
		if cap(buf) <= 4*writeChunk {
			*pb = buf[:0]
			writeBufs.Put(pb)
		}
	}()
	var afters []func()
	flush := func() bool {
		err := c.writeAll(buf)
		buf = buf[:0]
		if cap(buf) > 4*writeChunk {
			buf = (*pb)[:0] // do not pin a huge frame's buffer
		}
		for _, f := range afters {
			f()
		}
		afters = afters[:0]
		if err != nil {
			c.finish(err)
			return false
		}
		return true
	}
	for {
		it, ok := c.pop()
		if !ok {
			if len(buf) > 0 || len(afters) > 0 {
				flush()
			}
			return
		}
		if it.src == nil {
			buf = append(buf, it.frame...)
			giveBack(it.pooled, it.frame)
			if it.after != nil {
				afters = append(afters, it.after)
			}
		} else {
			for first := true; ; first = false {
				var more bool
				var err error
				buf, more, err = it.src.AppendFrames(buf, first, writeChunk)
				if err != nil {
					c.log.Error("event stream failed; closing the connection", "err", err)
					c.finish(err)
					return
				}
				if !more {
					break
				}
				if !flush() {
					return
				}
			}
		}
		if len(buf) >= writeChunk || c.queueEmpty() {
			if !flush() {
				return
			}
		}
	}
}

func (c *Conn) queueEmpty() bool {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.head == len(c.out.items)
}

type deadliner interface{ SetWriteDeadline(time.Time) error }

// writeAll writes b. With a stream that has deadlines, a write that makes
// no progress for the stall timeout fails: a peer that stops reading is
// cut off instead of holding the writer forever; one that reads slowly is
// not. The deadline is moved only when less than the stall timeout is
// left (to half as much again): every write has at least the stall
// timeout and at most 1.5 times it, and a busy connection moves its
// deadline about once per half a timeout instead of on every write
// (moving a runtime timer wakes the network poller: a few µs a call).
// Only the holder of the writer's role writes, so wdeadline needs no lock.
func (c *Conn) writeAll(b []byte) error {
	d, ok := c.rwc.(deadliner)
	for len(b) > 0 {
		if ok {
			if now := time.Now(); c.wdeadline.Sub(now) < c.stall {
				c.wdeadline = now.Add(c.stall + c.stall/2)
				d.SetWriteDeadline(c.wdeadline)
			}
		}
		n, err := c.rwc.Write(b)
		b = b[n:]
		if err != nil {
			if n > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				continue // slow, not stuck
			}
			return err
		}
	}
	return nil
}

// marshal encodes v as JSON without HTML escaping (a socket protocol has
// no use for \u003c, which makes "<" six bytes).
func marshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return []byte("null"), nil
	case json.RawMessage:
		return r, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// appendJSON appends v's encoding (as marshal makes it) to buf.
func appendJSON(buf []byte, v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case json.RawMessage:
		return append(buf, r...), nil
	case Appender:
		return r.AppendJSON(buf)
	}
	b := bytes.NewBuffer(buf)
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return buf, err
	}
	out := b.Bytes()
	return out[:len(out)-1], nil // Encode ends it with "\n"
}

// Appender is a result that appends its own JSON encoding to b, byte
// for byte what encoding/json writes for it without HTML escaping: a hot
// answer's (status's), written without reflection.
type Appender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// Marshal is the connection's JSON encoding, for callers that build
// frames' contents themselves: no HTML escaping.
func Marshal(v any) ([]byte, error) { return marshal(v) }
