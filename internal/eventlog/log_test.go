package eventlog

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

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client is a subscriber whose connection the test is: Sources pushed on
// it are pulled (as a connection's writer would) only when the test
// drains it, so a test plays a fast or a stalled client.
type client struct {
	mu     sync.Mutex
	queue  []Source
	frames [][]byte
	pushes int
	max    int   // its frame limit
	refuse error // Push's answer (nil: taken)
}

func newClient() *client { return &client{max: protocol.DefaultMaxFrame} }

func (c *client) Push(src Source) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pushes++
	if c.refuse != nil {
		return c.refuse
	}
	c.queue = append(c.queue, src)
	return nil
}

func (c *client) MaxFrame() int { return c.max }

// drain pulls every queued source, as the connection's writer would,
// each call given at most max bytes.
func (c *client) drain(t *testing.T, max int) {
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
		for first := true; ; first = false {
			buf, more, err := src.AppendFrames(nil, first, max)
			if err != nil {
				t.Fatalf("source: %v", err)
			}
			if len(buf) == 0 && more {
				t.Fatal("a call that wrote nothing says there is more")
			}
			for _, line := range bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n")) {
				if len(line) > 0 {
					c.frames = append(c.frames, line)
				}
			}
			if !more {
				break
			}
		}
	}
}

// seqs returns the seqs of the session/update frames the client got.
func (c *client) seqs(t *testing.T) []int64 {
	t.Helper()
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

func consecutive(t *testing.T, seqs []int64, from, to int64) {
	t.Helper()
	if int64(len(seqs)) != to-from+1 {
		t.Fatalf("%d events, want %d..%d", len(seqs), from, to)
	}
	for i, s := range seqs {
		if s != from+int64(i) {
			t.Fatalf("seq %d at %d, want %d: gap or repeat", s, i, from+int64(i))
		}
	}
}

// fixture is a store holding session "s" and its log.
type fixture struct {
	st   *store.Store
	path string
	l    *Log
	told chan error // what broken was told
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zc.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateSession(&store.Session{ID: "s", AgentAlias: "default", Mode: "chat", Cwd: "/", Owner: "c"}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, path: path}
	f.told = make(chan error, 8)
	f.l = New(st, "s", func(err error) { f.told <- err })
	return f
}

// join takes the subscription it is offered.
func join(sb *Sub) *Sub { return sb }

func (f *fixture) attach(t *testing.T, c Subscriber) int64 {
	t.Helper()
	last, added, ok := f.l.Attach(c, join)
	if !added || !ok {
		t.Fatalf("attach: added %v ok %v", added, ok)
	}
	return last
}

// write writes a chunk and waits for its commit.
func (f *fixture) write(t *testing.T, text string) int64 {
	t.Helper()
	seq := f.l.Write(protocol.AgentMessageChunkEvent{Text: text}, nil, nil)
	if seq == 0 {
		t.Fatal("nothing written")
	}
	if err := f.l.Await(context.Background(), seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// Each event gets the next seq and reaches the subscriber once committed,
// as one session/update frame: a turn's events name it, a queue_update
// never does, and an event written with an input is delivered alike.
func TestWriteDeliversFramesInOrder(t *testing.T) {
	f := newFixture(t)
	c := newClient()
	if last := f.attach(t, c); last != 0 {
		t.Fatalf("attached at %d", last)
	}
	f.write(t, "a")
	f.l.InTurn("turn_1")
	f.write(t, "b")
	f.l.Write(protocol.QueueUpdateEvent{}, nil, nil)
	other := "turn_2"
	f.l.Write(protocol.AgentThoughtChunkEvent{Text: "t"}, &other, nil)
	none := ""
	f.l.Write(protocol.AgentMessageChunkEvent{Text: "n"}, &none, nil)
	seq := f.l.Write(protocol.UserMessageEvent{Text: "<&>"}, nil, &store.Input{ID: "in_1", Kind: "prompt", State: "started", TurnID: "turn_1"})
	if seq != 6 {
		t.Fatalf("seq %d, want 6", seq)
	}
	f.l.InTurn("")
	if err := f.l.CaughtUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.drain(t, 64<<10)
	consecutive(t, c.seqs(t), 1, 6)
	want := []string{
		`{"sessionId":"s","seq":1,"type":"agent_message_chunk","text":"a"}`,
		`{"sessionId":"s","seq":2,"type":"agent_message_chunk","turnId":"turn_1","text":"b"}`,
		`{"sessionId":"s","seq":3,"type":"queue_update","items":null}`,
		`{"sessionId":"s","seq":4,"type":"agent_thought_chunk","turnId":"turn_2","text":"t"}`,
		`{"sessionId":"s","seq":5,"type":"agent_message_chunk","text":"n"}`,
	}
	for i, w := range want {
		if got := string(c.frames[i]); got != `{"jsonrpc":"2.0","method":"session/update","params":`+w+`}` {
			t.Errorf("frame %d:\n got %s\nwant params %s", i, got, w)
		}
	}
	if !bytes.Contains(c.frames[5], []byte(`"turnId":"turn_1"`)) || !bytes.Contains(c.frames[5], []byte(`"text":"<&>"`)) {
		t.Errorf("user message frame %s", c.frames[5])
	}
	// Stored as delivered.
	evs, err := f.st.Events(context.Background(), "s", 0, 0, 1<<20)
	if err != nil || len(evs) != 6 {
		t.Fatalf("stored %d events: %v", len(evs), err)
	}
	if ins, err := f.st.OpenInputs(context.Background(), "s"); err != nil || len(ins) != 1 || ins[0].Seq != 6 {
		t.Fatalf("the input written with its event: %+v %v", ins, err)
	}
}

// A subscription is queued on its connection once however many events
// arrive before the writer reaches it; a connection that refuses it is
// asked again at the next event.
func TestPushedOncePerPull(t *testing.T) {
	f := newFixture(t)
	c := newClient()
	f.attach(t, c)
	for _, s := range []string{"a", "b", "c"} {
		f.write(t, s)
	}
	if c.pushes != 1 {
		t.Fatalf("%d pushes for three events before a pull", c.pushes)
	}
	c.drain(t, 64<<10)
	f.write(t, "d")
	if c.pushes != 2 {
		t.Fatalf("%d pushes after a pull and an event", c.pushes)
	}
	c.refuse = errors.New("closed")
	c.drain(t, 64<<10)
	f.write(t, "e")
	f.write(t, "f")
	if c.pushes != 4 {
		t.Fatalf("%d pushes: a refused push is not retried at the next event", c.pushes)
	}
	consecutive(t, c.seqs(t), 1, 4)
}

// A client that reads nothing while events stream holds nothing up, and
// when it reads at last it gets every event, in order, from the store
// for those the bounded memory let go; each pull writes at most about
// max bytes, and always something.
func TestStalledSubscriberCatchesUpFromTheStore(t *testing.T) {
	f := newFixture(t)
	stalled, quick := newClient(), newClient()
	f.attach(t, stalled)
	f.attach(t, quick)
	big := strings.Repeat("x", 100<<10)
	n := int64(ringBytes/len(big) + 20) // past the memory's byte bound
	for range n {
		f.write(t, big)
		quick.drain(t, 64<<10) // the quick one keeps up
	}
	consecutive(t, quick.seqs(t), 1, n)
	if _, ok := f.l.recent.get(1); ok {
		t.Fatal("the first event is still in memory: the test does not reach the store")
	}
	stalled.drain(t, 64<<10)
	consecutive(t, stalled.seqs(t), 1, n)
	// Once every subscriber has every event, the next delivery lets
	// them go: memory holds the new one only.
	f.write(t, "last")
	if f.l.recent.len() != 1 {
		t.Fatalf("%d events kept after every subscriber read them", f.l.recent.len())
	}
}

// An event larger than the client's frame limit reaches it cut to fit;
// the whole event stays in the store.
func TestFrameCutToTheClientsLimit(t *testing.T) {
	f := newFixture(t)
	c := newClient()
	c.max = 4096
	f.attach(t, c)
	long := strings.Repeat("y", 20000)
	f.write(t, long)
	c.drain(t, 64<<10)
	if len(c.frames) != 1 || len(c.frames[0]) > c.max || !json.Valid(c.frames[0]) {
		t.Fatalf("frame of %d bytes (limit %d), valid %v", len(c.frames[0]), c.max, json.Valid(c.frames[0]))
	}
	evs, _ := f.st.Events(context.Background(), "s", 0, 0, 1<<20)
	if len(evs) != 1 || !bytes.Contains(evs[0].Body, []byte(long)) {
		t.Fatal("the stored event is not whole")
	}
}

// A write that fails breaks the log: nothing past the last stored event
// is delivered, the owner is told once, every later write and wait says
// so; mended from the store, the log numbers on from what is stored.
func TestFailureBreaksTheLogUntilMended(t *testing.T) {
	f := newFixture(t)
	c := newClient()
	f.attach(t, c)
	for range 3 {
		f.write(t, "ok")
	}
	db, err := sql.Open("sqlite", "file:"+f.path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER f BEFORE INSERT ON segments WHEN NEW.last_seq > 3 BEGIN SELECT RAISE(ABORT, 'no room'); END`); err != nil {
		t.Fatal(err)
	}
	seq := f.l.Write(protocol.AgentMessageChunkEvent{Text: "lost"}, nil, nil)
	if err := f.l.Await(context.Background(), seq); err == nil || f.l.Failure() != err {
		t.Fatalf("await of a failed write: %v (failure %v)", err, f.l.Failure())
	}
	if got := f.l.Write(protocol.AgentMessageChunkEvent{Text: "more"}, nil, nil); got != 0 {
		t.Fatalf("a broken log wrote seq %d", got)
	}
	// The owner is told the first failure (on the store's writer, once
	// it recorded it), and not a later one (told, if at all, within Fail).
	if told := <-f.told; told != f.l.Failure() {
		t.Fatalf("owner told %v, failure %v", told, f.l.Failure())
	}
	f.l.Fail(errors.New("a second failure"))
	if len(f.told) != 0 || strings.Contains(f.l.Failure().Error(), "second") {
		t.Fatalf("a second failure was told (%d) or kept (%v)", len(f.told), f.l.Failure())
	}
	f.l.InOrder(func(writable bool) {
		if writable {
			t.Error("a broken log is writable")
		}
	})
	if err := f.l.CaughtUp(context.Background()); err == nil {
		t.Fatal("caught up on a broken log")
	}
	c.drain(t, 64<<10)
	consecutive(t, c.seqs(t), 1, 3)

	if _, err := db.Exec(`DROP TRIGGER f`); err != nil {
		t.Fatal(err)
	}
	last, _, err := f.st.Resume("s")
	if err != nil || last != 3 {
		t.Fatalf("stored last seq %d: %v", last, err)
	}
	restored := false
	f.l.Mend(last, func() {
		restored = true
		if f.l.Failure() == nil {
			t.Error("the failure was cleared before the owner's state was restored")
		}
	})
	if !restored || f.l.Failure() != nil {
		t.Fatalf("mend: restored %v, failure %v", restored, f.l.Failure())
	}
	if seq := f.write(t, "again"); seq != 4 {
		t.Fatalf("after the mend: seq %d, want 4", seq)
	}
	c.drain(t, 64<<10)
	consecutive(t, c.seqs(t), 1, 4)
}

// A fenced log writes nothing more.
func TestFenceStopsWrites(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a")
	f.l.Fence()
	if seq := f.l.Write(protocol.AgentMessageChunkEvent{Text: "b"}, nil, nil); seq != 0 {
		t.Fatalf("a fenced log wrote seq %d", seq)
	}
	f.l.InOrder(func(writable bool) {
		if writable {
			t.Error("a fenced log is writable")
		}
	})
	if err := f.l.CaughtUp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A wait for a seq that is not coming ends with its context.
func TestAwaitEndsWithItsContext(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.l.Await(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("await: %v", err)
	}
}

// A stored session's log goes on after its last stored seq, and a
// subscriber attached then reads the earlier events from the store.
func TestResumeGoesOnAfterTheStoredSeq(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a")
	f.write(t, "b")
	l := New(f.st, "s", nil)
	l.Resume(2)
	c := newClient()
	last, added, ok := l.Attach(c, join)
	if last != 2 || !added || !ok {
		t.Fatalf("attach: %d %v %v", last, added, ok)
	}
	seq := l.Write(protocol.AgentMessageChunkEvent{Text: "c"}, nil, nil)
	if err := l.Await(context.Background(), seq); err != nil || seq != 3 {
		t.Fatalf("seq %d: %v", seq, err)
	}
	c.drain(t, 64<<10)
	consecutive(t, c.seqs(t), 3, 3)
}

// Attaching again changes nothing; a join that refuses leaves the
// subscriber out; one that gives the client's earlier subscription
// attaches that one.
func TestAttachAndDetach(t *testing.T) {
	f := newFixture(t)
	a, b, closed := newClient(), newClient(), newClient()
	f.attach(t, a)
	f.write(t, "1")
	if last, added, ok := f.l.Attach(a, join); last != 0 || added || !ok {
		t.Fatalf("attach again: %d %v %v", last, added, ok)
	}
	if _, added, ok := f.l.Attach(closed, func(*Sub) *Sub { return nil }); added || ok {
		t.Fatalf("a refused attach: %v %v", added, ok)
	}
	var kept *Sub
	f.l.Attach(b, func(sb *Sub) *Sub { kept = sb; return sb })
	if f.l.Attached() != 2 || len(f.l.Subscribers()) != 2 {
		t.Fatalf("%d attached", f.l.Attached())
	}
	if !f.l.Detach(b) || f.l.Detach(b) || f.l.Detach(closed) {
		t.Fatal("detach says attached wrongly")
	}
	f.l.Attach(b, func(*Sub) *Sub { return kept }) // b still holds its earlier one
	f.write(t, "2")
	// Detached with a pull queued: it writes nothing.
	var subs []Subscriber
	f.l.DetachAll(func(c Subscriber) { subs = append(subs, c) })
	if len(subs) != 2 || f.l.Attached() != 0 || f.l.recent.len() != 0 {
		t.Fatalf("detach all: %d returned, %d attached, %d recent", len(subs), f.l.Attached(), f.l.recent.len())
	}
	a.drain(t, 64<<10)
	b.drain(t, 64<<10)
	if len(a.frames)+len(b.frames) != 0 {
		t.Fatalf("detached subscribers were written %d and %d frames", len(a.frames), len(b.frames))
	}
}

// A subscriber whose next event is neither in memory nor in the store
// is told so, not skipped past it.
func TestMissingEventIsAnError(t *testing.T) {
	f := newFixture(t)
	c := newClient()
	f.attach(t, c)
	f.l.Committed(2, []byte(`{}`), nil) // seq 1 never was
	c.mu.Lock()
	src := c.queue[0]
	c.mu.Unlock()
	if _, _, err := src.AppendFrames(nil, true, 64<<10); !errors.Is(err, errEventsGone) {
		t.Fatalf("pull: %v", err)
	}
}
