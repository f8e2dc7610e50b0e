// Package background keeps a session's background processes: each one's
// output in a bounded ring whose offsets stay absolute (a reader knows
// what it missed) and in a file for the whole run, its stdin, its wait
// and its end; a table per session with its limits.
package background

import "sync"

// Ring keeps the last Cap bytes written to it; offsets count every byte
// ever written.
type Ring struct {
	mu    sync.Mutex
	buf   []byte // the kept bytes, oldest first (at most cap)
	cap   int
	total int64 // bytes ever written: the offset after the newest
	wake  chan struct{}
}

// NewRing makes a ring that keeps size bytes.
func NewRing(size int) *Ring { return &Ring{cap: size, wake: make(chan struct{})} }

// Write keeps p's end, dropping the oldest bytes past the ring's size.
func (r *Ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	n := len(p)
	if len(p) >= r.cap {
		r.buf = append(r.buf[:0], p[len(p)-r.cap:]...)
	} else {
		if over := len(r.buf) + len(p) - r.cap; over > 0 {
			r.buf = append(r.buf[:0], r.buf[over:]...)
		}
		r.buf = append(r.buf, p...)
	}
	r.total += int64(n)
	close(r.wake)
	r.wake = make(chan struct{})
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
	data := r.buf[since-oldest:]
	if max > 0 && len(data) > max {
		data = data[:max]
	}
	c.Data = append([]byte(nil), data...)
	c.Next = since + int64(len(data))
	return c
}

// skip counts n bytes as written and already dropped (output of a
// command before the ring took it over).
func (r *Ring) skip(n int64) {
	r.mu.Lock()
	r.total += n
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
	return r.wake
}
