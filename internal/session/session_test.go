package session

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/sandbox"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// conn is a connection as the sessions see it, whose reader the test is:
// Sources pushed on it are pulled (as a connection's writer would) only
// when the test drains it, so a test plays a fast or a stalled client.
type conn struct {
	mu      sync.Mutex
	queue   []Source
	frames  [][]byte
	pending chan struct{} // signalled on every push
}

func newConn() *conn { return &conn{pending: make(chan struct{}, 1<<16)} }

func (c *conn) Push(src Source) error {
	c.mu.Lock()
	c.queue = append(c.queue, src)
	c.mu.Unlock()
	c.pending <- struct{}{}
	return nil
}

func (c *conn) Notify(string, any) error { return nil }

func (c *conn) Call(ctx context.Context, method string, params, result any) error {
	return errors.New("no calls in these tests")
}

// drain pulls every queued source, as the connection's writer would.
func (c *conn) drain(t *testing.T) {
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
			buf, more, err = src.AppendFrames(buf, first, 64<<10)
			if err != nil {
				t.Fatalf("source: %v", err)
			}
			if !more {
				break
			}
		}
		for _, line := range bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n")) {
			if len(line) > 0 {
				c.mu.Lock()
				c.frames = append(c.frames, line)
				c.mu.Unlock()
			}
		}
	}
}

// seqs returns the seqs of the session/update frames the client got.
func (c *conn) seqs(t *testing.T) []int64 {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int64
	for _, f := range c.frames {
		var m struct {
			Method string               `json:"method"`
			Params protocol.EventHeader `json:"params"`
		}
		if err := json.Unmarshal(f, &m); err != nil || m.Method != "session/update" {
			t.Fatalf("frame %s: %v", f, err)
		}
		out = append(out, m.Params.Seq)
	}
	return out
}

func consecutive(t *testing.T, seqs []int64, from int64) {
	t.Helper()
	for i, s := range seqs {
		if s != from+int64(i) {
			t.Fatalf("seq %d at %d, want %d: gap or repeat", s, i, from+int64(i))
		}
	}
}

type harness struct {
	m    *Manager
	st   *store.Store
	path string
}

func newHarness(t *testing.T, tune func(*config.Config)) *harness {
	t.Helper()
	return newHarnessWith(t, tune, nil)
}

// newHarnessWith is newHarness with the manager's options tuned too.
func newHarnessWith(t *testing.T, tune func(*config.Config), opts func(*Options)) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zc.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default(func(string) string { return "" })
	if tune != nil {
		tune(cfg)
	}
	o := Options{Config: cfg, Store: st, Getenv: func(string) string { return "" }}
	if opts != nil {
		opts(&o)
	}
	m, err := NewManager(o)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{m: m, st: st, path: path}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Shutdown(ctx)
		st.Close()
		if err := store.VerifyFile(context.Background(), path); err != nil {
			t.Error(err)
		}
	})
	return h
}

func (h *harness) client(t *testing.T, id string) (*Client, *conn) {
	c := newConn()
	cl := NewClient(c)
	cl.SetIdentity(id, "", false, 0)
	t.Cleanup(cl.Close)
	return cl, c
}

func (h *harness) open(t *testing.T, cl *Client, id string) *protocol.SessionNewResult {
	t.Helper()
	res, err := h.m.New(context.Background(), cl, protocol.SessionNewParams{SessionID: id, Cwd: t.TempDir(), KeepSiblings: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (h *harness) prompt(t *testing.T, cl *Client, id, text string) protocol.SessionPromptResult {
	t.Helper()
	done, err := h.m.Prompt(cl, id, text)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("turn did not end")
	}
	return protocol.SessionPromptResult{}
}

// A client that reads nothing while a turn streams holds nothing up: the
// turn ends, and when the client reads at last it gets every event, in
// order, from the store once they have left memory.
func TestStalledClientCatchesUpFromTheStore(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	res := h.prompt(t, cl, "s", "/chunks 30000") // far past the memory ring
	if res.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", res)
	}
	c.drain(t)
	seqs := c.seqs(t)
	if len(seqs) != 30005 { // input_update started, user_message, 30000 chunks, context_usage, input_update completed, turn_complete
		t.Fatalf("%d events, want 30005", len(seqs))
	}
	consecutive(t, seqs, 1)
}

// Events are delivered only once their write committed: with the store
// failing the session's writes, no event past the last stored one
// reaches the client, the turn ends naming the cause, and the session
// numbers on from what is stored once writes work again.
func TestNothingUnstoredIsDelivered(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	db, err := sql.Open("sqlite", "file:"+h.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER f BEFORE INSERT ON segments WHEN NEW.last_seq > 100 BEGIN SELECT RAISE(ABORT, 'no room'); END`); err != nil {
		t.Fatal(err)
	}
	res := h.prompt(t, cl, "s", "/chunks 5000")
	if res.StopReason != "error" || res.Error == nil || res.Error.Message == "" {
		t.Fatalf("turn: %+v", res)
	}
	c.drain(t)
	seqs := c.seqs(t)
	consecutive(t, seqs, 1)
	rec, _ := h.st.GetSession(context.Background(), "s")
	if int64(len(seqs)) != rec.LastSeq || rec.LastSeq > 100 {
		t.Fatalf("client got %d events, the store holds %d", len(seqs), rec.LastSeq)
	}
	if _, err := db.Exec(`DROP TRIGGER f`); err != nil {
		t.Fatal(err)
	}
	if res := h.prompt(t, cl, "s", "again"); res.StopReason != "end_turn" {
		t.Fatalf("after the fault: %+v %+v", res, res.Error)
	}
	c.drain(t)
	consecutive(t, c.seqs(t), 1)
}

// Closing a session finishes before its id can be loaded again: a
// session/new racing the close either attaches to the old copy before the
// close or waits for it to end and loads a new one; never do two copies
// write at once (their seqs would collide, and the store would refuse the
// second writer's events: a failed turn).
func TestCloseRacingNewNeverMakesTwoWriters(t *testing.T) {
	h := newHarness(t, nil)
	cl, _ := h.client(t, "c1")
	h.open(t, cl, "s")
	for i := range 30 {
		done, err := h.m.Prompt(cl, "s", "/chunks 3000")
		if err != nil {
			t.Fatal(err)
		}
		closed := make(chan error, 1)
		go func() { closed <- h.m.Close(cl, "s") }()
		var res *protocol.SessionNewResult
		for res == nil {
			r, err := h.m.New(context.Background(), cl, protocol.SessionNewParams{SessionID: "s", KeepSiblings: true})
			if err != nil && !errors.Is(err, ErrBusy) {
				t.Fatal(err)
			}
			res = r
		}
		if err := <-closed; err != nil {
			t.Fatalf("round %d: close: %v", i, err)
		}
		if r := <-done; r.StopReason == "error" {
			t.Fatalf("round %d: the closed turn failed: %+v", i, r)
		}
		// Whichever won, the id is loadable and writable, from the
		// stored seqs on.
		res = h.open(t, cl, "s")
		rec, _ := h.st.GetSession(context.Background(), "s")
		if res.LastSeq != rec.LastSeq {
			t.Fatalf("round %d: attached at lastSeq %d, stored %d", i, res.LastSeq, rec.LastSeq)
		}
		if r := h.prompt(t, cl, "s", "next"); r.StopReason != "end_turn" {
			t.Fatalf("round %d: prompt after the race: %+v", i, r)
		}
	}
}

// At the session limit, the least recently used idle session nobody is
// attached to is unloaded to make room (its history stays and it resumes
// on demand); only when every live session is busy or attached is the
// limit an error.
func TestLimitUnloadsIdleUnattachedSessions(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Daemon.MaxSessions = 2 })
	for _, id := range []string{"a", "b"} {
		cl, _ := h.client(t, "gone-"+id)
		h.open(t, cl, id)
		h.prompt(t, cl, id, "hello "+id)
		cl.Close() // like `zeroclaw prompt` exiting
	}
	cl, _ := h.client(t, "c")
	h.open(t, cl, "c") // unloads a, the least recently used
	live := map[string]bool{}
	for _, s := range h.m.Summaries() {
		live[s.SessionID] = true
	}
	if len(live) != 2 || live["a"] || !live["b"] || !live["c"] {
		t.Fatalf("live sessions %v, want b and c", live)
	}
	// a resumes with its history (unloading b now).
	res := h.open(t, cl, "a")
	if !res.Resumed || res.LastSeq == 0 || res.MessageCount != 2 {
		t.Fatalf("resumed a: %+v", res)
	}
	// Both live sessions are attached to cl: no room.
	if _, err := h.m.New(context.Background(), cl, protocol.SessionNewParams{SessionID: "d", KeepSiblings: true}); !errors.Is(err, ErrLimit) {
		t.Fatalf("new with every session attached: %v, want ErrLimit", err)
	}
}

// Event JSON is never HTML-escaped: a prompt of "<" is as many bytes in
// its user_message and turn_complete as it was typed.
func TestEventsAreNotHTMLEscaped(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	prompt := strings.Repeat("<&>", 100000)
	h.prompt(t, cl, "s", prompt)
	c.drain(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.frames {
		if bytes.Contains(f, []byte(`\u003c`)) || len(f) > 2*len(prompt) {
			t.Fatalf("a frame of %d bytes for a %d-byte prompt (escaped: %v)", len(f), len(prompt), bytes.Contains(f, []byte(`\u003c`)))
		}
	}
}
