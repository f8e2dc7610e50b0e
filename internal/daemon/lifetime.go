package daemon

import (
	"log/slog"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// lifetime decides when an ephemeral daemon leaves: expired closes once
// no client has been connected for the grace period (after at least one
// came) and no work is left then (work: running or queued turns, live
// background processes, active goals, running sub-agents). While work is
// left it is asked again each grace period, and once work was seen the
// daemon leaves only after a whole grace period found none at its start
// and its end (a process's end that wakes a turn is no gap to leave in):
// one to two grace periods after its last work. A connection cancels the
// pending exit.
type lifetime struct {
	grace   time.Duration
	expired chan struct{}
	// work is what keeps the daemon with no client (nil: nothing); it
	// is asked without mu held (it reads the sessions).
	work func() protocol.StayingFor
	log  *slog.Logger

	mu      sync.Mutex
	n       int
	gen     int // the armed timer's: a connection or a new timer moves it on
	timer   *time.Timer
	closed  bool
	staying bool // work kept it since the last client left (and it was said)
	quiet   bool // work kept it, and the last check found none
}

func newLifetime(grace time.Duration) *lifetime {
	return &lifetime{grace: grace, expired: make(chan struct{}), log: slog.New(slog.DiscardHandler)}
}

func (l *lifetime) connect() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	l.gen++
	l.staying, l.quiet = false, false
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
	l.armLocked()
}

// armLocked (mu held) starts the grace period: expire runs at its end,
// unless a connection came meanwhile.
func (l *lifetime) armLocked() {
	l.gen++
	gen := l.gen
	l.timer = time.AfterFunc(l.grace, func() { l.expire(gen) })
}

// expire ends the grace period that gen armed: the daemon leaves when
// no client came meanwhile and no work is left, else the wait starts
// again.
func (l *lifetime) expire(gen int) {
	var w protocol.StayingFor
	if l.work != nil {
		w = l.work()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A timer stopped too late still runs: only the current one counts.
	if gen != l.gen || l.n > 0 || l.closed {
		return
	}
	if !w.Empty() {
		if !l.staying {
			l.staying = true
			l.log.Info("ephemeral daemon: last client gone, staying for its work", "stayingFor", w.String())
		}
		l.quiet = false
		l.armLocked()
		return
	}
	if l.staying && !l.quiet {
		l.quiet = true
		l.armLocked()
		return
	}
	l.closed = true
	close(l.expired)
}
