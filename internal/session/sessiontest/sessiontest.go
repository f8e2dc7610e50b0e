// Package sessiontest is for the tests of what takes part in the
// sessions' turns from outside the session package (goals, sub-agents,
// plan, checkpoints, hooks; the reviewer): a Manager over a real store
// in a temporary directory, the echo provider as its agent, and a
// client connection that keeps the session/update events it is sent,
// waited for without sleeping.
package sessiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Conn is a client's connection as the sessions see it: what they push
// is pulled (as a connection's writer would) when the test waits for an
// event, and kept as the session/update events the client was sent.
type Conn struct {
	mu     sync.Mutex
	queue  []session.Source
	events []protocol.SessionUpdate
	next   int           // the first event until has not looked at
	wake   chan struct{} // signalled on every push
}

// NewConn is a connection no client uses yet.
func NewConn() *Conn { return &Conn{wake: make(chan struct{}, 1)} }

func (c *Conn) Push(src session.Source) error {
	c.mu.Lock()
	c.queue = append(c.queue, src)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

func (c *Conn) Notify(string, any) error { return nil }

func (c *Conn) Call(context.Context, string, any, any) error {
	return errors.New("no calls to this client")
}

// Pull writes out every queued source, as the connection's writer
// would, and keeps the events.
func (c *Conn) Pull(t *testing.T) {
	t.Helper()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.mu.Unlock()
			return
		}
		src := c.queue[0]
		c.queue = c.queue[1:]
		c.mu.Unlock()
		var buf []byte
		for first := true; ; first = false {
			var more bool
			var err error
			if buf, more, err = src.AppendFrames(buf, first, 64<<10); err != nil {
				t.Fatalf("source: %v", err)
			}
			if !more {
				break
			}
		}
		for _, line := range bytes.Split(buf, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var f struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(line, &f); err != nil {
				t.Fatalf("frame %s: %v", line, err)
			}
			if f.Method != "session/update" {
				continue
			}
			u, err := protocol.ParseUpdate(f.Params)
			if err != nil {
				t.Fatalf("session/update %s: %v", f.Params, err)
			}
			c.mu.Lock()
			c.events = append(c.events, u)
			c.mu.Unlock()
		}
	}
}

// Until returns the first event from where the last Until stopped that
// ok accepts, waiting for the client to be sent it.
func (c *Conn) Until(t *testing.T, what string, ok func(protocol.SessionUpdate) bool) protocol.SessionUpdate {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second) // a hang guard, not a measure
	defer deadline.Stop()
	for {
		c.Pull(t)
		c.mu.Lock()
		for c.next < len(c.events) {
			u := c.events[c.next]
			c.next++
			if ok(u) {
				c.mu.Unlock()
				return u
			}
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-deadline.C:
			t.Fatalf("no %s came", what)
		}
	}
}

// All is every event the client was sent so far.
func (c *Conn) All(t *testing.T) []protocol.SessionUpdate {
	t.Helper()
	c.Pull(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.SessionUpdate(nil), c.events...)
}

// Of waits for the session's next event of type E that ok accepts.
func Of[E protocol.EventBody](t *testing.T, c *Conn, sid string, ok func(E) bool) E {
	t.Helper()
	var zero E
	u := c.Until(t, zero.EventType(), func(u protocol.SessionUpdate) bool {
		e, is := u.Event.(E)
		return is && u.SessionID == sid && (ok == nil || ok(e))
	})
	return u.Event.(E)
}

// Daemon is one Manager over a store, as a daemon runs it.
type Daemon struct {
	M    *session.Manager
	once sync.Once
}

// Shutdown stops the Manager (once; the test's cleanup does it too).
func (d *Daemon) Shutdown() {
	d.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d.M.Shutdown(ctx)
	})
}

// Harness is a store in a temporary directory and the configuration the
// daemons started on it run with, one at a time.
type Harness struct {
	Store  *store.Store
	Config *config.Config
	// Reviewer is the daemons' session.Options.Reviewer (nil: none).
	Reviewer session.Reviewer
	// CheckpointDir is where the sessions' checkpoints are kept, beside
	// the store (as a daemon keeps them).
	CheckpointDir string
}

// New opens a store and the configuration: the echo provider as the
// default agent (tune changes it), commands unconfined. The store is
// checked when the test ends.
func New(t *testing.T, tune func(*config.Config)) *Harness {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "zc.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default(func(string) string { return "" })
	cfg.Sandbox.Mode = "off"
	if tune != nil {
		tune(cfg)
	}
	t.Cleanup(func() {
		st.Close()
		if err := store.VerifyFile(context.Background(), path); err != nil {
			t.Error(err)
		}
	})
	return &Harness{Store: st, Config: cfg, CheckpointDir: filepath.Join(dir, "checkpoints")}
}

// Start starts a daemon's Manager on the store; join joins its
// participants, as the daemon does before any session is resumed.
func (h *Harness) Start(t *testing.T, join func(*session.Manager)) *Daemon {
	t.Helper()
	m, err := session.NewManager(session.Options{Config: h.Config, Store: h.Store, Getenv: func(string) string { return "" },
		Reviewer: h.Reviewer, CheckpointDir: h.CheckpointDir})
	if err != nil {
		t.Fatal(err)
	}
	if join != nil {
		join(m)
	}
	d := &Daemon{M: m}
	t.Cleanup(d.Shutdown)
	return d
}

// Client is a connected client of identity id (and name).
func Client(t *testing.T, id, name string) (*session.Client, *Conn) {
	t.Helper()
	c := NewConn()
	cl := session.NewClient(c)
	cl.SetIdentity(id, name, false, 0)
	t.Cleanup(cl.Close)
	return cl, c
}

// Open attaches cl to a new session (id "": a new one's) or to a stored
// one, and returns its id.
func (d *Daemon) Open(t *testing.T, cl *session.Client, id string) string {
	t.Helper()
	res, err := d.M.New(context.Background(), cl, protocol.SessionNewParams{SessionID: id, Cwd: t.TempDir(), KeepSiblings: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.SessionID
}

// Prompt runs a prompt of cl's and returns its result.
func (d *Daemon) Prompt(t *testing.T, cl *session.Client, sid, text string) protocol.SessionPromptResult {
	t.Helper()
	done, err := d.M.Prompt(cl, sid, text)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second): // a hang guard, not a measure
		t.Fatal("the prompt was not answered")
	}
	return protocol.SessionPromptResult{}
}
