package subagents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/subagents"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// conn is a client's connection as the sessions see it: what they push
// is pulled (as a connection's writer would) when the test waits for an
// event, and kept as the session/update events the client was sent.
type conn struct {
	mu     sync.Mutex
	queue  []session.Source
	events []protocol.SessionUpdate
	next   int           // the first event until has not looked at
	wake   chan struct{} // signalled on every push
}

func newConn() *conn { return &conn{wake: make(chan struct{}, 1)} }

func (c *conn) Push(src session.Source) error {
	c.mu.Lock()
	c.queue = append(c.queue, src)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

func (c *conn) Notify(string, any) error { return nil }

func (c *conn) Call(context.Context, string, any, any) error {
	return errors.New("no calls to this client")
}

// pull writes out every queued source, as the connection's writer
// would, and keeps the events.
func (c *conn) pull(t *testing.T) {
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

// until returns the first event from where the last until stopped that
// ok accepts, waiting for the client to be sent it.
func (c *conn) until(t *testing.T, what string, ok func(protocol.SessionUpdate) bool) protocol.SessionUpdate {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second) // a hang guard, not a measure
	defer deadline.Stop()
	for {
		c.pull(t)
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

// all is every event the client was sent so far.
func (c *conn) all(t *testing.T) []protocol.SessionUpdate {
	t.Helper()
	c.pull(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]protocol.SessionUpdate(nil), c.events...)
}

// of waits for the session's next event of type E that ok accepts.
func of[E protocol.EventBody](t *testing.T, c *conn, sid string, ok func(E) bool) E {
	t.Helper()
	var zero E
	u := c.until(t, zero.EventType(), func(u protocol.SessionUpdate) bool {
		e, is := u.Event.(E)
		return is && u.SessionID == sid && (ok == nil || ok(e))
	})
	return u.Event.(E)
}

// daemon is one Manager over a store, with the sub-agents joined as
// the daemon joins them.
type daemon struct {
	m    *session.Manager
	sa   *subagents.Subagents
	once sync.Once
}

func (d *daemon) shutdown() {
	d.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d.m.Shutdown(ctx)
	})
}

// harness is a store in a temporary directory and the daemons started
// on it, one at a time.
type harness struct {
	st   *store.Store
	path string
	cfg  *config.Config
}

// newHarness opens a store and the configuration: the echo provider as
// the default agent, in the full mode (tune changes it), commands
// unconfined.
func newHarness(t *testing.T, tune func(*config.Config)) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zc.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default(func(string) string { return "" })
	cfg.Sandbox.Mode = "off"
	a := cfg.Agents["default"]
	a.Risk = protocol.RiskFull
	cfg.Agents["default"] = a
	if tune != nil {
		tune(cfg)
	}
	t.Cleanup(func() {
		st.Close()
		if err := store.VerifyFile(context.Background(), path); err != nil {
			t.Error(err)
		}
	})
	return &harness{st: st, path: path, cfg: cfg}
}

// start starts a daemon's Manager on the store, its sub-agents joined.
func (h *harness) start(t *testing.T) *daemon {
	t.Helper()
	m, err := session.NewManager(session.Options{Config: h.cfg, Store: h.st, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{m: m, sa: subagents.New(m, h.st, nil)}
	t.Cleanup(d.shutdown)
	return d
}

// client is a connected client of identity id.
func client(t *testing.T, id, name string) (*session.Client, *conn) {
	t.Helper()
	c := newConn()
	cl := session.NewClient(c)
	cl.SetIdentity(id, name, false, 0)
	t.Cleanup(cl.Close)
	return cl, c
}

// open attaches cl to a new session (id "": a new one's) or to a stored
// one, and returns its id.
func (d *daemon) open(t *testing.T, cl *session.Client, id string) string {
	t.Helper()
	res, err := d.m.New(context.Background(), cl, protocol.SessionNewParams{SessionID: id, Cwd: t.TempDir(), KeepSiblings: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.SessionID
}

// prompt runs a prompt of cl's and returns its result.
func (d *daemon) prompt(t *testing.T, cl *session.Client, sid, text string) protocol.SessionPromptResult {
	t.Helper()
	done, err := d.m.Prompt(cl, sid, text)
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

// info is session/get's.
func (d *daemon) info(t *testing.T, sid string) *protocol.SessionInfo {
	t.Helper()
	info, err := d.m.Archive().Get(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// call runs line (a tool call of the echo model's, without its /tool) as
// a turn of its own and returns the call's tool_result.
func (d *daemon) call(t *testing.T, cl *session.Client, c *conn, sid, line string) protocol.ToolResultEvent {
	t.Helper()
	d.prompt(t, cl, sid, "/tool "+line)
	evs := c.all(t)
	for i := len(evs) - 1; i >= 0; i-- {
		if r, ok := evs[i].Event.(protocol.ToolResultEvent); ok && evs[i].SessionID == sid {
			return r
		}
	}
	t.Fatalf("no tool_result for %s", line)
	return protocol.ToolResultEvent{}
}

// subagent is the sub-agent a task tool's result tells of.
func subagent(t *testing.T, r protocol.ToolResultEvent) protocol.SubagentInfo {
	t.Helper()
	var d struct {
		Subagent protocol.SubagentInfo `json:"subagent"`
	}
	if err := json.Unmarshal(r.Details, &d); err != nil || d.Subagent.SessionID == "" {
		t.Fatalf("the result's sub-agent: %s (%v) in %+v", r.Details, err, r)
	}
	return d.Subagent
}

// updates are the session's subagent_update events the client was sent.
func updates(t *testing.T, c *conn, sid string) []protocol.SubagentInfo {
	t.Helper()
	var out []protocol.SubagentInfo
	for _, u := range c.all(t) {
		if e, ok := u.Event.(protocol.SubagentUpdateEvent); ok && u.SessionID == sid {
			out = append(out, e.Subagent)
		}
	}
	return out
}

// ended waits for the subagent_update in sid that says child ended.
func ended(t *testing.T, c *conn, sid, child string) protocol.SubagentInfo {
	t.Helper()
	return of(t, c, sid, func(e protocol.SubagentUpdateEvent) bool {
		return e.Subagent.SessionID == child && e.Subagent.State != protocol.SubagentRunning
	}).Subagent
}
