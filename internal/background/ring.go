// Package background keeps a session's background processes: each one's
// output in a bounded ring whose offsets stay absolute (a reader knows
// what it missed) and in a file for the whole run, its stdin, its wait
// and its end; a table per session with its limits.
package background

import "sync"

// Ring keeps the last Cap bytes written to it; offsets count every byte
// ever written. It is circular: a write costs its own bytes, whatever
// the ring holds.
type Ring struct {
	mu    sync.Mutex
	buf   []byte // grows to cap, then the byte at offset o is at (o-base) % cap
	cap   int
	base  int64 // the offset of the first byte kept (after skip)
	total int64 // bytes ever written: the offset after the newest
	// wake is closed at the next write when someone waits (changed).
	wake    chan struct{}
	waiting bool
}

// NewRing makes a ring that keeps size bytes.
func NewRing(size int) *Ring { return &Ring{cap: size, wake: make(chan struct{})} }

// Write keeps p's end, dropping the oldest bytes past the ring's size.
func (r *Ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	n := len(p)
	start := r.total
	if len(p) > r.cap {
		start += int64(len(p) - r.cap)
		p = p[len(p)-r.cap:]
	}
	if len(r.buf) < r.cap {
		// Still filling: the buffer grows (a short output stays small).
		if room := r.cap - len(r.buf); len(p) <= room {
			r.buf = append(r.buf, p...)
			p = nil
		} else {
			r.buf = append(r.buf, p[:room]...)
			p, start = p[room:], start+int64(room)
		}
	}
	for len(p) > 0 {
		at := int((start - r.base) % int64(r.cap))
		k := copy(r.buf[at:], p)
		p, start = p[k:], start+int64(k)
	}
	r.total += int64(n)
	if r.waiting {
		close(r.wake)
		r.wake, r.waiting = make(chan struct{}), false
	}
	r.mu.Unlock()
	return n, nil
}

// Chunk is what a read of the ring gives.
type Chunk struct {
	Data    []byte
	Next    int64 // the offset to read from next
	Dropped int64 // bytes between since and the oldest kept that are gone
}

// Read returns at most max bytes (0: all kept) from offset since.
func (r *Ring) Read(since int64, max int) Chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := r.total - int64(len(r.buf))
	var c Chunk
	if since < oldest {
		c.Dropped, since = oldest-since, oldest
	}
	if since > r.total {
		since = r.total
	}
	n := int(r.total - since)
	if max > 0 && n > max {
		n = max
	}
	c.Data = make([]byte, 0, n)
	for at := since; len(c.Data) < n; {
		i := int((at - r.base) % int64(r.cap))
		k := min(n-len(c.Data), len(r.buf)-i)
		c.Data = append(c.Data, r.buf[i:i+k]...)
		at += int64(k)
	}
	c.Next = since + int64(n)
	return c
}

// skip counts n bytes as written and already dropped (output of a
// command before the ring took it over).
func (r *Ring) skip(n int64) {
	r.mu.Lock()
	r.total += n
	if len(r.buf) == 0 {
		r.base = r.total
	}
	r.mu.Unlock()
}

// Total is the bytes ever written.
func (r *Ring) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// changed is closed at the next write.
func (r *Ring) changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = true
	return r.wake
}
