// Package sessionlist is who follows the list of sessions
// (session/watch) and what they are told: each change to a session's
// row (created, running, idle, renamed, deleted) is told to each
// follower as a session/changed notification, the row read back after
// its change committed. Changes are gathered while a telling runs, so a
// burst costs one read per session. It knows no live sessions: it reads
// a row through an Entries (the archive) and tells a Follower.
package sessionlist

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Entries reads a session's row as the list shows it (*archive.Archive);
// an error that is archive.ErrNotFound says the session is gone.
type Entries interface {
	Get(ctx context.Context, id string) (*protocol.SessionInfo, error)
}

// Follower is a client that follows the list: Notify sends it a
// notification and does not wait for it to be read.
type Follower interface {
	Notify(method string, params any)
}

// List is the list's followers, and the changes not yet told to them.
// Its methods may be called from any goroutine; its lock (List.mu in the
// session's lock order) is never held while a row is read or a follower
// told.
type List struct {
	entries Entries
	log     *slog.Logger

	mu        sync.Mutex
	followers map[Follower]struct{}
	pending   map[string]struct{}
	running   bool           // a telling goroutine runs
	stopped   bool           // Stop was called: no telling starts
	wg        sync.WaitGroup // the telling goroutine, while it runs
}

// New returns a List that reads rows from e and says on log why one
// could not be read (nil: nowhere).
func New(e Entries, log *slog.Logger) *List {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &List{entries: e, log: log}
}

// Follow makes f follow the list until Unfollow(f). f must be
// comparable (a pointer, or a struct of them).
func (l *List) Follow(f Follower) {
	l.mu.Lock()
	if l.followers == nil {
		l.followers = map[Follower]struct{}{}
	}
	l.followers[f] = struct{}{}
	l.mu.Unlock()
}

// Unfollow ends f's following: it is told nothing more once a telling
// in progress has passed it.
func (l *List) Unfollow(f Follower) {
	l.mu.Lock()
	delete(l.followers, f)
	l.mu.Unlock()
}

// Changed notes that session id's row changed (call it once the change
// committed). With no follower it costs nothing; otherwise the change is
// told from a goroutine of the List's (started unless one runs), read as
// the row stands then.
func (l *List) Changed(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.followers) == 0 {
		return
	}
	if l.pending == nil {
		l.pending = map[string]struct{}{}
	}
	l.pending[id] = struct{}{}
	if !l.running && !l.stopped {
		l.running = true
		l.wg.Add(1)
		go l.tell()
	}
}

// ChangedAfter is a store callback that calls after (when not nil), then
// reports the change of id if it committed (err is nil).
func (l *List) ChangedAfter(id string, after func(error)) func(error) {
	return func(err error) {
		if after != nil {
			after(err)
		}
		if err == nil {
			l.Changed(id)
		}
	}
}

// Stop lets the telling in progress end (it tells all that is pending)
// and waits for it; no telling starts after it (a change after this is
// not told: the daemon is stopping).
func (l *List) Stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.wg.Wait()
}

// tell sends what changed to the followers until nothing is pending.
func (l *List) tell() {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		ids := l.pending
		l.pending = nil
		if len(ids) == 0 || len(l.followers) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		followers := make([]Follower, 0, len(l.followers))
		for f := range l.followers {
			followers = append(followers, f)
		}
		l.mu.Unlock()
		for id := range ids {
			ev := protocol.SessionChanged{SessionID: id}
			info, err := l.entries.Get(context.Background(), id)
			switch {
			case errors.Is(err, archive.ErrNotFound):
				ev.Deleted = true
			case err != nil:
				l.log.Warn("session/changed: reading the session", "sessionId", id, "err", err)
				continue
			default:
				ev.Session = info
			}
			for _, f := range followers {
				f.Notify(protocol.MethodSessionChanged, ev)
			}
		}
	}
}
