package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// watchers are the clients that follow the list of sessions
// (session/watch): each change to a session's row (created, running,
// idle, renamed, deleted) is told to each of them as a session/changed
// notification, read back from the store after its commit. Changes are
// gathered while a telling runs, so a burst costs one read per session.
type watchers struct {
	mu      sync.Mutex
	clients map[*Client]struct{}
	pending map[string]struct{}
	running bool
	stopped bool           // the manager shuts down: no telling starts
	wg      sync.WaitGroup // the telling goroutine, while it runs
}

// stopTelling lets the telling in progress end and starts no other (a
// change after this is not told: the daemon is stopping).
func (m *Manager) stopTelling() {
	m.w.mu.Lock()
	m.w.stopped = true
	m.w.mu.Unlock()
	m.w.wg.Wait()
}

// Watch makes c follow the list of sessions until it closes.
func (m *Manager) Watch(c *Client) {
	m.w.mu.Lock()
	if m.w.clients == nil {
		m.w.clients = map[*Client]struct{}{}
	}
	m.w.clients[c] = struct{}{}
	m.w.mu.Unlock()
	c.onClose(func() {
		m.w.mu.Lock()
		delete(m.w.clients, c)
		m.w.mu.Unlock()
	})
}

// changed notes that session id's row changed (once committed).
func (m *Manager) changed(id string) {
	m.w.mu.Lock()
	defer m.w.mu.Unlock()
	if len(m.w.clients) == 0 {
		return
	}
	if m.w.pending == nil {
		m.w.pending = map[string]struct{}{}
	}
	m.w.pending[id] = struct{}{}
	if !m.w.running && !m.w.stopped {
		m.w.running = true
		m.w.wg.Add(1)
		go m.tell()
	}
}

// changedAfter is a store callback that reports a committed change.
func (m *Manager) changedAfter(id string, after func(error)) func(error) {
	return func(err error) {
		if after != nil {
			after(err)
		}
		if err == nil {
			m.changed(id)
		}
	}
}

// tell sends what changed to the watchers until nothing is pending.
func (m *Manager) tell() {
	defer m.w.wg.Done()
	for {
		m.w.mu.Lock()
		ids := m.w.pending
		m.w.pending = nil
		if len(ids) == 0 || len(m.w.clients) == 0 {
			m.w.running = false
			m.w.mu.Unlock()
			return
		}
		clients := make([]*Client, 0, len(m.w.clients))
		for c := range m.w.clients {
			clients = append(clients, c)
		}
		m.w.mu.Unlock()
		for id := range ids {
			ev := protocol.SessionChanged{SessionID: id}
			info, err := m.arch.Get(context.Background(), id)
			switch {
			case errors.Is(err, ErrNotFound):
				ev.Deleted = true
			case err != nil:
				m.log.Warn("session/changed: reading the session", "sessionId", id, "err", err)
				continue
			default:
				ev.Session = info
			}
			for _, c := range clients {
				c.notify(protocol.MethodSessionChanged, ev)
			}
		}
	}
}

// Rename sets a session's title (session/rename): one line, at most
// MaxTitle characters; "" clears it. It needs no attachment: like
// delete, it acts on the stored session.
func (m *Manager) Rename(ctx context.Context, id, t string) (*protocol.SessionInfo, error) {
	t = strings.Join(strings.FieldsFunc(t, unicode.IsSpace), " ")
	if r := []rune(t); len(r) > MaxTitle {
		return nil, &protocol.ParamsError{Field: "title", Reason: fmt.Sprintf("longer than %d characters", MaxTitle)}
	}
	ok, err := m.store.Rename(id, t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	m.changed(id)
	m.log.Info("session renamed", "sessionId", id)
	return m.arch.Get(ctx, id)
}

// MaxTitle bounds a session's title, in characters.
const MaxTitle = 200

// title is a session's title from its first prompt, as a person would
// write it: the first line with words, without Markdown's marks (a
// heading's #, a quote's >, a list's bullet, emphasis and code
// backticks, a link's target), its spaces collapsed, cut at 80
// characters.
func title(prompt string) string {
	line := ""
	for l := range strings.Lines(prompt) {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~") {
			continue
		}
		l = strings.TrimLeft(l, "#> \t")
		for _, bullet := range []string{"- ", "* ", "+ "} {
			l = strings.TrimPrefix(l, bullet)
		}
		if strings.TrimFunc(l, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) != "" {
			line = l
			break
		}
	}
	line = mdLink().ReplaceAllString(line, "$1")
	line = strings.NewReplacer("**", "", "__", "", "`", "").Replace(line)
	line = strings.Join(strings.Fields(line), " ")
	r := []rune(line)
	if len(r) > 80 {
		r = append(r[:79], '…')
	}
	return string(r)
}
