package sessionlist

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rows is the list as stored: a session's title, or an error to read
// it with; a missing id is a deleted session. A read of an id in block
// waits until its channel closes (after saying so on started).
type rows struct {
	mu      sync.Mutex
	titles  map[string]string
	fail    map[string]error
	reads   map[string]int
	block   map[string]chan struct{}
	started chan string
}

func newRows(titles map[string]string) *rows {
	return &rows{titles: titles, fail: map[string]error{}, reads: map[string]int{}, block: map[string]chan struct{}{}, started: make(chan string, 16)}
}

func (r *rows) Get(_ context.Context, id string) (*protocol.SessionInfo, error) {
	r.mu.Lock()
	r.reads[id]++
	wait := r.block[id]
	r.mu.Unlock()
	if wait != nil {
		r.started <- id
		<-wait
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fail[id]; err != nil {
		return nil, err
	}
	t, ok := r.titles[id]
	if !ok {
		return nil, archive.ErrNotFound
	}
	return &protocol.SessionInfo{SessionID: id, Title: t}, nil
}

func (r *rows) read() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.reads)
}

// watcher keeps what it was told.
type watcher struct {
	mu   sync.Mutex
	told []protocol.SessionChanged
}

func (w *watcher) Notify(method string, params any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if method != protocol.MethodSessionChanged {
		panic("told " + method)
	}
	w.told = append(w.told, params.(protocol.SessionChanged))
}

// ids are the sessions w was told of, in order.
func (w *watcher) ids() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, ch := range w.told {
		out = append(out, ch.SessionID)
	}
	return out
}

// last is what w was last told of each session.
func (w *watcher) last() map[string]protocol.SessionChanged {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]protocol.SessionChanged{}
	for _, ch := range w.told {
		out[ch.SessionID] = ch
	}
	return out
}

// Each follower is told each change as the row stands: the session, or
// that it was deleted; a row that cannot be read is not told, and the
// log says why.
func TestFollowersAreToldEachChange(t *testing.T) {
	r := newRows(map[string]string{"one": "first", "two": "second"})
	r.fail["bad"] = errors.New("disk on fire")
	var logged bytes.Buffer
	l := New(r, slog.New(slog.NewTextHandler(&logged, nil)))
	a, b := &watcher{}, &watcher{}
	l.Follow(a)
	l.Follow(b)
	for _, id := range []string{"one", "gone", "bad", "two"} {
		l.Changed(id)
	}
	l.Stop()
	for name, w := range map[string]*watcher{"a": a, "b": b} {
		got := w.last()
		if len(got) != 3 || got["one"].Session == nil || got["one"].Session.Title != "first" || got["one"].Deleted ||
			got["two"].Session == nil || got["two"].Session.Title != "second" ||
			!got["gone"].Deleted || got["gone"].Session != nil {
			t.Errorf("%s was told %+v", name, got)
		}
		if _, told := got["bad"]; told {
			t.Errorf("%s was told of a row that could not be read", name)
		}
	}
	if s := logged.String(); !strings.Contains(s, "session/changed: reading the session") || !strings.Contains(s, "sessionId=bad") || !strings.Contains(s, "disk on fire") {
		t.Errorf("the log: %s", s)
	}
}

// With nobody following, a change costs nothing: no row is read, and
// nothing is kept to tell a later follower.
func TestNoFollowerNoRead(t *testing.T) {
	r := newRows(map[string]string{"one": "first"})
	l := New(r, nil)
	l.Changed("one")
	w := &watcher{}
	l.Follow(w)
	l.Unfollow(w)
	l.Changed("one")
	l.Stop()
	if n := r.read(); len(n) != 0 {
		t.Errorf("rows read with no follower: %v", n)
	}
	if got := w.ids(); len(got) != 0 {
		t.Errorf("told after it stopped following: %v", got)
	}
}

// Changes that come while a telling runs are gathered: each session
// changed in a burst is read once, and told once, as it stands.
func TestABurstIsToldOncePerSession(t *testing.T) {
	r := newRows(map[string]string{"first": "1", "a": "2", "b": "3"})
	release := make(chan struct{})
	r.block["first"] = release
	l := New(r, nil)
	w := &watcher{}
	l.Follow(w)
	l.Changed("first")
	<-r.started // the telling reads first, and waits there
	for range 5 {
		l.Changed("a")
		l.Changed("b")
	}
	l.Changed("first")
	close(release)
	l.Stop()
	if got, want := r.read(), map[string]int{"first": 2, "a": 1, "b": 1}; !maps.Equal(got, want) {
		t.Errorf("reads %v, want %v", got, want)
	}
	got := w.ids()
	if len(got) != 4 || got[0] != "first" {
		t.Fatalf("told %v", got)
	}
	if rest := slices.Sorted(slices.Values(got[1:])); !slices.Equal(rest, []string{"a", "b", "first"}) {
		t.Errorf("the burst was told as %v", got[1:])
	}
}

// A follower that stops following while a telling runs is told nothing
// of the changes after it left.
func TestUnfollowDuringATelling(t *testing.T) {
	r := newRows(map[string]string{"first": "1", "later": "2"})
	release := make(chan struct{})
	r.block["first"] = release
	l := New(r, nil)
	stays, leaves := &watcher{}, &watcher{}
	l.Follow(stays)
	l.Follow(leaves)
	l.Changed("first")
	<-r.started
	l.Unfollow(leaves)
	l.Changed("later")
	close(release)
	l.Stop()
	if got := stays.ids(); !slices.Equal(got, []string{"first", "later"}) {
		t.Errorf("the one that stayed was told %v", got)
	}
	// It was among those the first round was to tell.
	if got := leaves.ids(); !slices.Equal(got, []string{"first"}) {
		t.Errorf("the one that left was told %v", got)
	}
}

// ChangedAfter is the store's callback: it calls what was given, then
// tells the change only when it committed.
func TestChangedAfterTellsWhatCommitted(t *testing.T) {
	r := newRows(map[string]string{"ok": "1", "failed": "2"})
	l := New(r, nil)
	w := &watcher{}
	l.Follow(w)
	var afters []error
	after := func(err error) { afters = append(afters, err) }
	boom := errors.New("boom")
	l.ChangedAfter("failed", after)(boom)
	l.ChangedAfter("ok", after)(nil)
	l.ChangedAfter("ok", nil)(nil)
	l.Stop()
	if len(afters) != 2 || afters[0] != boom || afters[1] != nil {
		t.Errorf("after was called with %v", afters)
	}
	if got := w.last(); len(got) != 1 || got["ok"].Session == nil {
		t.Errorf("told %+v", got)
	}
	if n := r.read(); n["failed"] != 0 {
		t.Errorf("a change that did not commit was read: %v", n)
	}
}

// After Stop no telling starts: a change is not told.
func TestStopStartsNoTelling(t *testing.T) {
	r := newRows(map[string]string{"one": "1"})
	l := New(r, nil)
	w := &watcher{}
	l.Follow(w)
	l.Stop()
	l.Changed("one")
	l.Stop() // twice is fine, and waits for nothing
	if got := w.ids(); len(got) != 0 {
		t.Errorf("told after Stop: %v", got)
	}
	if n := r.read(); len(n) != 0 {
		t.Errorf("read after Stop: %v", n)
	}
}
