package daemon

import (
	"sync"
	"time"
)

// lifetime counts connected clients for ephemeral mode: expired closes once
// the count has been zero for the grace period after at least one client
// came. A connection within the grace cancels the pending exit.
type lifetime struct {
	grace   time.Duration
	expired chan struct{}

	mu     sync.Mutex
	n      int
	timer  *time.Timer
	closed bool
}

func newLifetime(grace time.Duration) *lifetime {
	return &lifetime{grace: grace, expired: make(chan struct{})}
}

func (l *lifetime) connect() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

func (l *lifetime) disconnect() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if l.n > 0 || l.closed {
		return
	}
	var t *time.Timer
	t = time.AfterFunc(l.grace, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		// A timer stopped too late still runs: only the current one counts.
		if l.timer == t && l.n == 0 && !l.closed {
			l.closed = true
			close(l.expired)
		}
	})
	l.timer = t
}
