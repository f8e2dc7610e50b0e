package turnslot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// client and job stand in for the session's.
type client struct{ id, name string }

func (c *client) ID() string   { return c.id }
func (c *client) Name() string { return c.name }

type job struct {
	slot   Ticket
	text   string
	images []provider.Image
	from   *client
	cmid   string
	noAsk  bool
}

func (j *job) Ticket() *Ticket { return &j.slot }
func (j *job) AsSteer() Steer[*client] {
	return Steer[*client]{Text: j.text, Images: j.images, Client: j.from}
}
func (j *job) ClientMessageID() string { return j.cmid }
func (j *job) NoAsk() bool             { return j.noAsk }

type slot = Slot[*job, *client]

func newJob(x Steer[*client]) *job { return &job{text: x.Text, images: x.Images, from: x.Client} }

// turn records the cancels of a running turn.
type turn struct {
	mu     sync.Mutex
	causes []error
}

func (c *turn) cancel(cause error) {
	c.mu.Lock()
	c.causes = append(c.causes, cause)
	c.mu.Unlock()
}

func (c *turn) cancelled() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.causes)
}

func texts(js []*job) []string {
	var out []string
	for _, j := range js {
		out = append(out, j.text)
	}
	return out
}

// Prompts wait in order behind the one that holds the slot, up to the
// limit; each is handed the slot in turn as its holder lets go, and
// the slot is free once none waits.
func TestQueueInOrder(t *testing.T) {
	var s slot
	if !s.Idle() || s.Queued() || len(s.Items()) != 0 {
		t.Fatal("the zero slot is not free and empty")
	}
	alice := &client{"c1", "alice"}
	first := &job{text: "first", from: alice}
	if start, err := s.Enqueue(first, 2); !start || err != nil {
		t.Fatalf("the first prompt: start %v, err %v", start, err)
	}
	if s.Idle() || s.Queued() {
		t.Fatal("held by the first prompt, the slot should be busy with nothing queued")
	}
	two, three := &job{text: "two\nand more", from: alice}, &job{text: "  three" + strings.Repeat("é", MaxItemText)}
	for _, j := range []*job{two, three} {
		if start, err := s.Enqueue(j, 2); start || err != nil {
			t.Fatalf("%q: start %v, err %v", j.text, start, err)
		}
	}
	_, err := s.Enqueue(&job{text: "four"}, 2)
	if !errors.Is(err, ErrBusy) || err.Error() != "session busy: 2 prompts already queued" {
		t.Fatalf("past the limit: %v", err)
	}
	items := s.Items()
	if len(items) != 2 {
		t.Fatalf("items: %+v", items)
	}
	if got := items[0]; got.ID != two.slot.id || got.Text != "two" || got.ClientID != "c1" || got.ClientName != "alice" || got.QueuedMs != two.slot.queued.UnixMilli() {
		t.Errorf("the first item: %+v", got)
	}
	// A first line past MaxItemText is told cut.
	if got := items[1]; got.Text != "three"+strings.Repeat("é", (MaxItemText-len("three"))/2)+"…" || got.ClientID != "" || got.ClientName != "" {
		t.Errorf("a daemon's prompt: %+v", got)
	}
	if items[0].ID == items[1].ID || len(items[0].ID) != len("q_")+12 {
		t.Errorf("queue ids: %q %q", items[0].ID, items[1].ID)
	}
	_, done := s.State()
	var got []string
	for j := first; j != nil; {
		next, waiters, dropped := s.Release()
		if len(waiters) != 0 || len(dropped) != 0 {
			t.Fatalf("released %q: waiters %v, dropped %v", j.text, waiters, dropped)
		}
		select {
		case <-done:
		default:
			t.Fatalf("released %q, its done is still open", j.text)
		}
		if next != nil {
			got = append(got, next.text)
			if _, done = s.State(); s.Idle() {
				t.Fatalf("%q took the slot, which is free", next.text)
			}
		}
		j = next
	}
	if want := []string{"two\nand more", three.text}; !slices.Equal(got, want) {
		t.Errorf("handed the slot: %q, want %q", got, want)
	}
	if !s.Idle() || s.Queued() {
		t.Error("with none waiting, the slot is not free")
	}
}

// Closing: what waits is returned to be answered, nothing more is
// queued or borrowed, and a release drops what was queued since.
func TestClosing(t *testing.T) {
	var s slot
	s.Enqueue(&job{text: "running"}, 5)
	s.Enqueue(&job{text: "a"}, 5)
	s.Enqueue(&job{text: "b"}, 5)
	if s.Shutting() {
		t.Fatal("shutting before the close")
	}
	if got := texts(s.Drain()); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("drained %q", got)
	}
	if !s.Shutting() || s.Queued() {
		t.Error("after the drain: not shutting, or still queued")
	}
	if _, err := s.Enqueue(&job{text: "late"}, 5); !errors.Is(err, ErrClosed) {
		t.Errorf("queued while closing: %v", err)
	}
	// The turn still runs, but the close comes first.
	if err := s.Borrow(context.Background(), false, errors.New("busy")); !errors.Is(err, ErrClosed) {
		t.Errorf("borrowed while closing, a turn running: %v", err)
	}
	if next, _, dropped := s.Release(); next != nil || len(dropped) != 0 || !s.Idle() {
		t.Errorf("the last release: next %v, dropped %v, idle %v", next, dropped, s.Idle())
	}
	if err := s.Borrow(context.Background(), false, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("borrowed while closing: %v", err)
	}

	// Close (no drain): what is queued waits until the holder lets go,
	// and is dropped then instead of run.
	var c slot
	c.Enqueue(&job{text: "running"}, 5)
	c.Enqueue(&job{text: "queued"}, 5)
	c.Close()
	next, _, dropped := c.Release()
	if next != nil || !slices.Equal(texts(dropped), []string{"queued"}) || !c.Idle() {
		t.Errorf("released after the close: next %v, dropped %q", next, texts(dropped))
	}
}

// A withdrawn prompt leaves the queue while it waits; once it holds the
// slot its turn is cancelled while it runs, or as soon as it begins.
func TestWithdraw(t *testing.T) {
	var s slot
	running, waiting, next := &job{text: "running"}, &job{text: "waiting"}, &job{text: "next"}
	s.Enqueue(running, 5)
	s.Enqueue(waiting, 5)
	s.Enqueue(next, 5)
	if !s.Withdraw(waiting) {
		t.Error("a waiting prompt was not removed")
	}
	if got := texts(s.Remove("")); !slices.Equal(got, []string{"next"}) {
		t.Errorf("left queued: %q", got)
	}
	s.Enqueue(next, 5)

	var tr turn
	s.Begin(running, "turn_1", tr.cancel)
	if s.Withdraw(running) || tr.cancelled() != 1 {
		t.Errorf("the running prompt withdrawn: cancels %d", tr.cancelled())
	}
	s.End(newJob)
	got, _, _ := s.Release()
	if got != next {
		t.Fatalf("the slot went to %v", got)
	}
	// Given up after it took the slot, before its turn began.
	if s.Withdraw(next) || tr.cancelled() != 1 {
		t.Error("withdrawn between its release and its begin: removed, or the ended turn cancelled")
	}
	var nt turn
	s.Begin(next, "turn_2", nt.cancel)
	if nt.cancelled() != 1 || nt.causes[0] != nil {
		t.Errorf("a withdrawn prompt's turn began: cancels %v", nt.causes)
	}
}

// Remove takes one queued prompt by its queue id, or all.
func TestRemove(t *testing.T) {
	var s slot
	s.Enqueue(&job{text: "running"}, 5)
	for _, x := range []string{"a", "b", "c"} {
		s.Enqueue(&job{text: x}, 5)
	}
	items := s.Items()
	if gone := s.Remove("q_none"); len(gone) != 0 {
		t.Errorf("removed by an unknown id: %q", texts(gone))
	}
	if gone := s.Remove(items[1].ID); !slices.Equal(texts(gone), []string{"b"}) {
		t.Errorf("removed by id: %q", texts(gone))
	}
	if gone := s.Remove(""); !slices.Equal(texts(gone), []string{"a", "c"}) {
		t.Errorf("cleared: %q", texts(gone))
	}
	if s.Queued() {
		t.Error("still queued after the clear")
	}
}

// A steer joins the running turn, or is not taken when none runs that
// takes steers; a steer for another turn is a mismatch, a busy error.
func TestSteer(t *testing.T) {
	var s slot
	bob := &client{"c2", "bob"}
	if turn, err := s.Steer(Steer[*client]{Text: "x"}, ""); turn != "" || err != nil {
		t.Errorf("no turn runs: %q %v", turn, err)
	}
	var mm *TurnMismatch
	_, err := s.Steer(Steer[*client]{Text: "x"}, "turn_a")
	if !errors.As(err, &mm) || mm.Running != "" || !errors.Is(err, ErrBusy) || err.Error() != "turn turn_a is not running (no turn is)" {
		t.Errorf("expected a turn, none runs: %v", err)
	}

	j := &job{text: "prompt", from: bob, noAsk: true}
	s.Enqueue(j, 5)
	var tr turn
	s.Begin(j, "turn_1", tr.cancel)
	if s.RunningTurn() != "turn_1" || s.Current() != j || s.TurnClient() != bob || !s.NoAsk() {
		t.Errorf("running: turn %q, current %v, client %v, noAsk %v", s.RunningTurn(), s.Current(), s.TurnClient(), s.NoAsk())
	}
	_, err = s.Steer(Steer[*client]{Text: "x"}, "turn_a")
	if !errors.As(err, &mm) || mm.Running != "turn_1" || err.Error() != "turn turn_a is not running; turn turn_1 is" {
		t.Errorf("expected another turn: %v", err)
	}
	for _, x := range []string{"one", "two"} {
		if turn, err := s.Steer(Steer[*client]{Text: x, Client: bob}, "turn_1"); turn != "turn_1" || err != nil {
			t.Errorf("steer %q: %q %v", x, turn, err)
		}
	}
	if st := s.TakeSteers(false); len(st) != 2 || st[0].Text != "one" || st[1].Client != bob {
		t.Errorf("taken: %+v", st)
	}
	if st := s.TakeSteers(false); len(st) != 0 || s.RunningTurn() != "turn_1" {
		t.Errorf("taken again: %+v; running %q", st, s.RunningTurn())
	}
	// The turn would end: with none waiting, it takes no more.
	s.TakeSteers(true)
	if turn, err := s.Steer(Steer[*client]{Text: "late"}, ""); turn != "" || err != nil || s.RunningTurn() != "" {
		t.Errorf("a steer for an ending turn: %q %v (running %q)", turn, err, s.RunningTurn())
	}
	if _, err := s.Steer(Steer[*client]{Text: "late"}, "turn_1"); !errors.As(err, &mm) || mm.Running != "" {
		t.Errorf("expected an ending turn: %v", err)
	}
	if !s.CancelTurn(context.Canceled) || tr.causes[0] != context.Canceled {
		t.Errorf("cancelled with a cause: %v", tr.causes)
	}
	s.End(newJob)
	if s.CancelTurn(nil) || s.Current() != nil || s.TurnClient() != nil || s.NoAsk() {
		t.Error("after the end, a turn still runs")
	}
}

// The steers a turn took but never showed the model become the next
// prompt, first in the queue: their texts joined, their images, the
// first one's client. Not while the session closes.
func TestEndRequeuesSteers(t *testing.T) {
	var s slot
	ann, bob := &client{"c1", "ann"}, &client{"c2", "bob"}
	j := &job{text: "prompt"}
	s.Enqueue(j, 5)
	s.Enqueue(&job{text: "queued"}, 5)
	s.Begin(j, "turn_1", (&turn{}).cancel)
	s.Steer(Steer[*client]{Text: "one", Images: []provider.Image{{MimeType: "image/png"}}, Client: ann}, "")
	s.Steer(Steer[*client]{Text: "two", Images: []provider.Image{{MimeType: "image/jpeg"}}, Client: bob}, "")
	s.End(newJob)
	items := s.Items()
	if len(items) != 2 || items[0].Text != "one" || items[0].ClientID != "c1" || items[1].Text != "queued" {
		t.Fatalf("the queue after the end: %+v", items)
	}
	next, _, _ := s.Release()
	if next.text != "one\n\ntwo" || len(next.images) != 2 || next.images[1].MimeType != "image/jpeg" || next.from != ann {
		t.Errorf("the steers' prompt: %+v", next)
	}
	if next.slot.id != items[0].ID {
		t.Errorf("its queue id %q, listed %q", next.slot.id, items[0].ID)
	}

	s.Begin(next, "turn_2", (&turn{}).cancel)
	s.Steer(Steer[*client]{Text: "lost"}, "")
	s.Close()
	s.End(newJob)
	if items := s.Items(); len(items) != 1 || items[0].Text != "queued" {
		t.Errorf("closing, the steers left were queued: %+v", items)
	}
}

// A queued prompt moved into the running turn becomes its steer, and
// its caller waits for the turn's answer; with no turn taking steers it
// stays queued.
func TestQueueSteer(t *testing.T) {
	var s slot
	ann := &client{"c1", "ann"}
	j := &job{text: "prompt"}
	s.Enqueue(j, 5)
	moved := &job{text: "move me", from: ann, cmid: "m1"}
	s.Enqueue(moved, 5)
	qid := s.Items()[0].ID
	if got := s.QueuedID("m1"); got != qid {
		t.Errorf("by clientMessageId: %q, want %q", got, qid)
	}
	if got := s.QueuedID("m2"); got != "" {
		t.Errorf("an unknown clientMessageId: %q", got)
	}
	var pe *protocol.ParamsError
	if _, _, err := s.QueueSteer("q_none"); !errors.As(err, &pe) || pe.Field != "id" {
		t.Errorf("an unknown queue id: %v", err)
	}
	if turn, got, err := s.QueueSteer(qid); turn != "" || got != nil || err != nil || !s.Queued() {
		t.Errorf("no turn runs: %q %v %v", turn, got, err)
	}
	s.Begin(j, "turn_1", (&turn{}).cancel)
	if turn, got, err := s.QueueSteer(qid); turn != "turn_1" || got != moved || err != nil || s.Queued() {
		t.Errorf("moved: %q %v %v", turn, got, err)
	}
	if st := s.TakeSteers(false); len(st) != 1 || st[0].Text != "move me" || st[0].Client != ann {
		t.Errorf("its steer: %+v", st)
	}
	s.End(newJob)
	if _, waiters, _ := s.Release(); len(waiters) != 1 || waiters[0] != moved {
		t.Errorf("waiters: %v", waiters)
	}
	s.Enqueue(&job{text: "after"}, 5)
	if _, waiters, _ := s.Release(); len(waiters) != 0 {
		t.Errorf("waiters told twice: %v", waiters)
	}
}

// A borrower waits for the running turn and those queued behind it, or
// is busy at once; while it holds the slot, prompts queue.
func TestBorrow(t *testing.T) {
	busy := errors.New("busy")
	synctest.Test(t, func(t *testing.T) {
		var s slot
		s.Enqueue(&job{text: "running"}, 5)
		s.Enqueue(&job{text: "queued"}, 5)
		if err := s.Borrow(context.Background(), false, busy); err != busy {
			t.Errorf("without waiting: %v", err)
		}
		got := make(chan error, 1)
		go func() { got <- s.Borrow(context.Background(), true, busy) }()
		synctest.Wait()
		next, _, _ := s.Release()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("borrowed before the queued turn ran: %v", err)
		default:
		}
		if next == nil || next.text != "queued" {
			t.Fatalf("the slot went to %v", next)
		}
		if next, _, _ := s.Release(); next != nil {
			t.Fatalf("the slot went to %v", next)
		}
		if err := <-got; err != nil {
			t.Fatalf("borrowed: %v", err)
		}
		if start, _ := s.Enqueue(&job{text: "meanwhile"}, 5); start {
			t.Error("a prompt started while the slot was borrowed")
		}
		if next, _, _ := s.Release(); next == nil || next.text != "meanwhile" {
			t.Errorf("the borrower let go to %v", next)
		}
	})

	var s slot
	s.Enqueue(&job{text: "running"}, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Borrow(ctx, true, busy); err != context.Canceled {
		t.Errorf("given up while waiting: %v", err)
	}
	s.Release()
	if err := s.Borrow(context.Background(), false, busy); err != nil || s.Idle() {
		t.Errorf("the free slot borrowed: %v", err)
	}
}

// An approval is answered once: the first answer takes it; the first
// open one by id is the one asked about.
func TestApprovals(t *testing.T) {
	var s slot
	if s.Asking() != "" || s.ApprovalOptions("apr_a") != nil {
		t.Fatal("an approval open in a new slot")
	}
	if _, ok := s.Answer("apr_a"); ok {
		t.Error("an unknown approval answered")
	}
	b := &Approval[*client]{Options: []string{"allow_once"}, Answer: make(chan Answer[*client], 1)}
	s.Ask("apr_b", b)
	s.Ask("apr_a", &Approval[*client]{Options: protocol.Decisions})
	if s.Asking() != "apr_a" {
		t.Errorf("asking %q", s.Asking())
	}
	if got := s.ApprovalOptions("apr_b"); !slices.Equal(got, []string{"allow_once"}) {
		t.Errorf("options: %v", got)
	}
	if a, ok := s.Answer("apr_b"); !ok || a != b {
		t.Errorf("the first answer: %v %v", a, ok)
	}
	if _, ok := s.Answer("apr_b"); ok {
		t.Error("answered twice")
	}
	s.Answer("apr_a")
	if s.Asking() != "" {
		t.Errorf("still asking %q", s.Asking())
	}
}

// Touch and Used say when the session was last used: touched, a
// prompt queued, a turn ended.
func TestUsed(t *testing.T) {
	var s slot
	if !s.Used().IsZero() {
		t.Error("a new slot was used")
	}
	s.Touch()
	if s.Used().IsZero() {
		t.Error("touched, not used")
	}
	s.lastUsed = time.Time{}
	s.Enqueue(&job{text: "x"}, 1)
	if s.Used().IsZero() {
		t.Error("a prompt queued, not used")
	}
	s.lastUsed = time.Time{}
	s.Release()
	if s.Used().IsZero() {
		t.Error("its turn ended, not used")
	}
}

// Every steer sent while a turn runs is taken by the turn or refused,
// exactly once, however it races the turn's end.
func TestSteersExactlyOnce(t *testing.T) {
	for round := range 50 {
		var s slot
		j := &job{text: "prompt"}
		s.Enqueue(j, 1)
		s.Begin(j, "turn_1", (&turn{}).cancel)
		const n = 40
		var wg sync.WaitGroup
		taken := make(chan string, n)
		for i := range n {
			wg.Go(func() {
				x := fmt.Sprint(i)
				if turn, _ := s.Steer(Steer[*client]{Text: x}, ""); turn != "" {
					taken <- x
				}
			})
		}
		var seen []string
		for i := 0; ; i++ {
			st := s.TakeSteers(i > n/4)
			for _, x := range st {
				seen = append(seen, x.Text)
			}
			if i > n/4 && len(st) == 0 {
				break
			}
		}
		wg.Wait()
		close(taken)
		var want []string
		for x := range taken {
			want = append(want, x)
		}
		slices.Sort(seen)
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Fatalf("round %d: the turn saw %q, the steers taken were %q", round, seen, want)
		}
		s.End(newJob)
		if s.Queued() {
			t.Fatalf("round %d: a steer taken after the turn's last look was requeued", round)
		}
	}
}
