package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEventsCommittedBeforeCallbackAndKeptAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "zc.db")
	s := open(t, path)
	if err := s.CreateSession(&Session{ID: "s1", AgentAlias: "default", Mode: "code", Cwd: "/tmp", Owner: "cl_1"}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int64
	var wg sync.WaitGroup
	for i := int64(1); i <= 2000; i++ {
		wg.Add(1)
		seq := i
		s.AppendEvent("s1", Event{Seq: seq, Type: "agent_message_chunk", Body: fmt.Appendf(nil, `{"seq":%d}`, seq)}, func(err error) {
			defer wg.Done()
			if err != nil {
				t.Error(err)
			}
			// Committed: a reader on another connection sees it now.
			evs, err := s.Events(context.Background(), "s1", seq-1, 1, 0)
			if err != nil || len(evs) != 1 || evs[0].Seq != seq {
				t.Errorf("event %d not readable in its callback: %v %v", seq, evs, err)
			}
			mu.Lock()
			order = append(order, seq)
			mu.Unlock()
		})
	}
	s.AppendMessage("s1", 0, []byte(`{"role":"user"}`), nil)
	s.AppendMessage("s1", 1, []byte(`{"role":"assistant"}`), nil)
	wg.Wait()
	for i, seq := range order {
		if seq != int64(i+1) {
			t.Fatalf("callback %d was for seq %d: callbacks out of order", i, seq)
		}
	}
	s.SetState("s1", StateRunning, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("db file mode %v %v, want 0600", fi.Mode(), err)
	}

	s = open(t, path)
	defer s.Close()
	ids, err := s.MarkInterrupted()
	if err != nil || len(ids) != 1 || ids[0] != "s1" {
		t.Fatalf("interrupted %v %v, want [s1]", ids, err)
	}
	ss, err := s.GetSession(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if ss.LastSeq != 2000 || ss.MessageCount != 2 || ss.State != StateInterrupted || ss.Owner != "cl_1" {
		t.Errorf("session after reopen %+v", ss)
	}
	evs, err := s.Events(context.Background(), "s1", 1990, 0, 0)
	if err != nil || len(evs) != 10 || evs[0].Seq != 1991 || string(evs[9].Body) != `{"seq":2000}` {
		t.Fatalf("events since 1990: %v %v", evs, err)
	}
	msgs, err := s.Messages(context.Background(), "s1")
	if err != nil || len(msgs) != 2 || string(msgs[1]) != `{"role":"assistant"}` {
		t.Fatalf("messages %q %v", msgs, err)
	}
}

func TestDuplicateSeqFails(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "zc.db"))
	defer s.Close()
	if err := s.CreateSession(&Session{ID: "s", AgentAlias: "default", Mode: "chat", Cwd: "/", Owner: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(&Session{ID: "s", AgentAlias: "default", Mode: "chat", Cwd: "/", Owner: "c"}); err == nil {
		t.Fatal("a second session with the same id was stored")
	}
	errs := make(chan error, 2)
	s.AppendEvent("s", Event{Seq: 1, Type: "x", Body: []byte(`{}`)}, func(err error) { errs <- err })
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	s.AppendEvent("s", Event{Seq: 1, Type: "x", Body: []byte(`{}`)}, func(err error) { errs <- err })
	if err := <-errs; !errors.Is(err, ErrSequence) {
		t.Fatalf("duplicate seq: %v, want ErrSequence", err)
	}
}

func TestListDeleteAndNotFound(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "zc.db"))
	defer s.Close()
	for i, id := range []string{"a", "b", "c"} {
		if err := s.CreateSession(&Session{ID: id, AgentAlias: "default", Mode: "chat", Cwd: "/", Owner: "c", CreatedMs: int64(100 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	list, total, err := s.ListSessions(context.Background(), 0, 2)
	if err != nil || total != 3 || len(list) != 2 || list[0].ID != "c" || list[1].ID != "b" {
		t.Fatalf("page 1: %v total %d %v", list, total, err)
	}
	list, _, _ = s.ListSessions(context.Background(), 2, 2)
	if len(list) != 1 || list[0].ID != "a" {
		t.Fatalf("page 2: %v", list)
	}
	s.AppendEvent("b", Event{Seq: 1, Type: "x", Body: []byte(`{}`)}, nil)
	if ok, err := s.DeleteSession("b"); !ok || err != nil {
		t.Fatalf("delete b: %v %v", ok, err)
	}
	if ok, _ := s.DeleteSession("b"); ok {
		t.Fatal("deleted b twice")
	}
	if _, err := s.GetSession(context.Background(), "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if evs, _ := s.Events(context.Background(), "b", 0, 0, 0); len(evs) != 0 {
		t.Fatalf("events of a deleted session: %v", evs)
	}
}

func TestSchemaVersioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	db.QueryRow(`PRAGMA user_version`).Scan(&v)
	if v != SchemaVersion || v < 1 {
		t.Fatalf("user_version %d, want %d", v, SchemaVersion)
	}
	db.Exec(`PRAGMA user_version = 99`)
	db.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("open of a newer schema: %v", err)
	}
}

func TestClosedStoreFailsWrites(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "zc.db"))
	s.Close()
	errs := make(chan error, 1)
	s.AppendEvent("s", Event{Seq: 1}, func(err error) { errs <- err })
	if err := <-errs; err == nil {
		t.Fatal("write after close succeeded")
	}
}

// A schema 1 database (one row per event) opens with its events moved
// into segments, every one readable as before, and rebuilt in
// incremental vacuum mode, the space of the old rows given back.
func TestMigrationToSegments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations[0].sql); err != nil {
		t.Fatal(err)
	}
	db.Exec(`PRAGMA user_version = 1`)
	tx, _ := db.Begin()
	for _, id := range []string{"a", "b"} {
		tx.Exec(`INSERT INTO sessions (id, agent_alias, mode, cwd, owner, created_ms, updated_ms, last_seq) VALUES (?, 'default', 'chat', '/', 'c', 1, 1, 3000)`, id)
		for seq := 1; seq <= 3000; seq++ {
			if _, err := tx.Exec(`INSERT INTO events (session_id, seq, type, body) VALUES (?, ?, 't', ?)`, id, seq, fmt.Sprintf(`{"seq":%d,"pad":"%0200d"}`, seq, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tx.Commit()
	var mode int
	db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode)
	db.Close()
	fi, err := os.Stat(path)
	if err != nil || mode != 0 {
		t.Fatalf("the old database: auto_vacuum %d, %v", mode, err)
	}
	defer func(n int) { migrateRows = n }(migrateRows)
	migrateRows = 1000 // several pages, a session across a page boundary
	s := open(t, path)
	defer s.Close()
	for _, id := range []string{"a", "b"} {
		evs, err := s.Events(context.Background(), id, 0, 0, 0)
		if err != nil || len(evs) != 3000 {
			t.Fatalf("%s: %d events %v", id, len(evs), err)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) || e.Type != "t" || !strings.HasPrefix(string(e.Body), fmt.Sprintf(`{"seq":%d,`, i+1)) {
				t.Fatalf("%s event %d: %d %s %.20s", id, i, e.Seq, e.Type, e.Body)
			}
		}
		if ev, err := s.Event(context.Background(), id, 2999); err != nil || !strings.HasPrefix(string(ev.Body), `{"seq":2999,`) {
			t.Fatalf("event 2999: %v %.20s", err, ev.Body)
		}
	}
	var free int64
	s.do("", func(ctx context.Context, c *sql.Conn) error {
		if err := c.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
			return err
		}
		return c.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free)
	})
	s.Close()
	invariants(t, path)
	after, err := os.Stat(path)
	if err != nil || mode != 2 || free != 0 || after.Size() > fi.Size() {
		t.Fatalf("auto_vacuum %d, %d free pages, %d bytes before, %d after (%v)", mode, free, fi.Size(), after.Size(), err)
	}
}

// Keyset paging visits every session once, in the order of offset
// paging, ties of updated_ms included.
func TestListAfterVisitsEverySessionOnce(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "zc.db"))
	defer s.Close()
	for i := range 1200 {
		if err := s.CreateSession(&Session{ID: fmt.Sprintf("s%04d", i), AgentAlias: "a", Mode: "chat", Cwd: "/", Owner: "c",
			CreatedMs: 1, UpdatedMs: int64(i / 7)}); err != nil { // ties: seven share a time
			t.Fatal(err)
		}
	}
	all, total, err := s.ListSessions(context.Background(), 0, 5000)
	if err != nil || total != 1200 || len(all) != 1200 {
		t.Fatalf("offset list: %d of %d, %v", len(all), total, err)
	}
	var got []string
	var ms int64
	id := ""
	for {
		page, err := s.ListAfter(context.Background(), ms, id, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			got = append(got, r.ID)
		}
		if len(page) < 50 {
			break
		}
		ms, id = page[len(page)-1].UpdatedMs, page[len(page)-1].ID
	}
	if len(got) != len(all) {
		t.Fatalf("keyset paging gave %d sessions, want %d", len(got), len(all))
	}
	for i := range got {
		if got[i] != all[i].ID {
			t.Fatalf("position %d: %s, want %s", i, got[i], all[i].ID)
		}
	}
}

// committer is a store.Committer for tests: it counts what committed.
type committer struct {
	mu   sync.Mutex
	last int64
	err  error
	done chan struct{}
	want int64
}

func (c *committer) Committed(seq int64, _ []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil && c.err == nil {
		c.err = err
	}
	c.last = seq
	if seq == c.want {
		close(c.done)
	}
}

// A long stream keeps the WAL bounded: its pages are checkpointed back
// into the database file while the store is open (not all at its close),
// so the WAL stays at about what is written between two checkpoints.
// (A checkpointer beside the writer was tried for issue 40: PASSIVE
// checkpoints racing a writer that never pauses never let the WAL start
// over, and it grew with the stream; this test caught it.)
func TestALongStreamKeepsTheWALBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	defer s.Close()
	if err := s.CreateSession(&Session{ID: "s1", AgentAlias: "default", Mode: "code", Cwd: "/tmp", Owner: "cl_1"}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"text":"` + strings.Repeat("x", 1000) + `"}`)
	const n = 40000 // 40 MB: ten checkpoints' worth
	c := &committer{done: make(chan struct{}), want: n}
	for seq := int64(1); seq <= n; seq++ {
		s.AppendEventTo("s1", Event{Seq: seq, Type: "agent_message_chunk", Body: body}, c)
	}
	<-c.done
	if c.err != nil || c.last != n {
		t.Fatalf("committed up to %d: %v", c.last, c.err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		db, err1 := os.Stat(path)
		wal, err2 := os.Stat(path + "-wal")
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if db.Size() > 30<<20 {
			if wal.Size() > 20<<20 {
				t.Errorf("the WAL grew to %d bytes: checkpoints did not keep it down", wal.Size())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes after 40 MB of events (WAL %d): nothing was checkpointed", db.Size(), wal.Size())
		}
	}
}
