package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func mustCreate(t *testing.T, s *Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := s.CreateSession(&Session{ID: id, AgentAlias: "default", Mode: "chat", Cwd: "/", Owner: "c"}); err != nil {
			t.Fatal(err)
		}
	}
}

// appendAll queues events first..last of sid and returns a function that
// waits for their callbacks and returns their errors by seq.
func appendAll(s *Store, sid string, first, last int64) func() map[int64]error {
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := map[int64]error{}
	for seq := first; seq <= last; seq++ {
		wg.Add(1)
		s.AppendEvent(sid, Event{Seq: seq, Type: "t", Body: fmt.Appendf(nil, `{"seq":%d}`, seq)}, func(err error) {
			mu.Lock()
			errs[seq] = err
			mu.Unlock()
			wg.Done()
		})
	}
	return func() map[int64]error { wg.Wait(); return errs }
}

// invariants checks what must hold after anything.
func invariants(t *testing.T, path string) {
	t.Helper()
	if err := VerifyFile(context.Background(), path); err != nil {
		t.Error(err)
	}
}

// A write that a trigger aborts fails alone: the other sessions of its
// batch commit, the failed session stays broken (no later event of it
// commits past the gap) until Resume, and then goes on from what is
// stored.
func TestFailedWriteFailsOnlyItsSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	mustCreate(t, s, "bad", "good")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER abort_bad BEFORE INSERT ON segments WHEN NEW.session_id = 'bad' AND NEW.first_seq <= 50 AND NEW.last_seq >= 50
		BEGIN SELECT RAISE(ABORT, 'injected fault'); END`); err != nil {
		t.Fatal(err)
	}
	// Interleave the two sessions so they share batches.
	waits := []func() map[int64]error{}
	for i := int64(0); i < 10; i++ {
		waits = append(waits, appendAll(s, "good", i*100+1, i*100+100), appendAll(s, "bad", i*10+1, i*10+10))
	}
	goodErrs, badErrs := map[int64]error{}, map[int64]error{}
	for i, w := range waits {
		for seq, err := range w() {
			if i%2 == 0 {
				goodErrs[seq] = err
			} else {
				badErrs[seq] = err
			}
		}
	}
	for seq, err := range goodErrs {
		if err != nil {
			t.Fatalf("good seq %d failed: %v", seq, err)
		}
	}
	if badErrs[50] == nil {
		t.Fatal("the aborted insert reported success")
	}
	for seq := int64(51); seq <= 100; seq++ {
		if badErrs[seq] == nil {
			t.Fatalf("bad seq %d committed after the failed seq 50", seq)
		}
	}
	rec, _ := s.GetSession(context.Background(), "bad")
	for seq := int64(1); seq <= rec.LastSeq; seq++ {
		if badErrs[seq] != nil {
			t.Fatalf("seq %d failed but last_seq is %d", seq, rec.LastSeq)
		}
	}
	if rec.LastSeq >= 50 {
		t.Fatalf("last_seq %d, want < 50", rec.LastSeq)
	}
	// Until Resume the session's writes fail; after it they follow what
	// is stored.
	if err := appendAll(s, "bad", rec.LastSeq+1, rec.LastSeq+1)()[rec.LastSeq+1]; err == nil {
		t.Fatal("a broken session's write went through before Resume")
	}
	if _, err := db.Exec(`DROP TRIGGER abort_bad`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	last, _, err := s.Resume("bad")
	if err != nil || last != rec.LastSeq {
		t.Fatalf("resume: last %d %v, want %d", last, err, rec.LastSeq)
	}
	for seq, err := range appendAll(s, "bad", last+1, last+60)() {
		if err != nil {
			t.Fatalf("seq %d after resume: %v", seq, err)
		}
	}
	s.Close()
	invariants(t, path)
}

func TestOutOfOrderWritesAreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	defer s.Close()
	mustCreate(t, s, "a")
	if err := appendAll(s, "a", 2, 2)()[2]; !errors.Is(err, ErrSequence) {
		t.Fatalf("seq 2 before 1: %v", err)
	}
	if _, _, err := s.Resume("a"); err != nil {
		t.Fatal(err)
	}
	if err := appendAll(s, "nobody", 1, 1)()[1]; !errors.Is(err, ErrSequence) {
		t.Fatalf("event of a missing session: %v", err)
	}
	errc := make(chan error, 1)
	s.AppendMessage("a", 1, []byte(`{}`), func(err error) { errc <- err })
	if err := <-errc; !errors.Is(err, ErrSequence) {
		t.Fatalf("message 1 before 0: %v", err)
	}
	if _, _, err := s.Resume("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("resume of a missing session: %v", err)
	}
	s.Close()
	invariants(t, path)
}

// tmpfs mounts a small tmpfs for a test (root only).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root: skipped (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// On a full disk every write fails with ErrDiskFull naming the file, no
// event commits past a failed one, reads go on, and once space is back
// the session resumes from what is stored.
func TestDiskFull(t *testing.T) {
	dir := tmpfs(t, "1m")
	path := filepath.Join(dir, "zc.db")
	s := open(t, path)
	mustCreate(t, s, "s")
	body := make([]byte, 2000)
	for i := range body {
		body[i] = 'x'
	}
	var failed error
	var lastOK int64
	for seq := int64(1); seq < 2000 && failed == nil; seq++ {
		errc := make(chan error, 1)
		s.AppendEvent("s", Event{Seq: seq, Type: "t", Body: fmt.Appendf(nil, `{"seq":%d,"pad":"%s"}`, seq, body)}, func(err error) { errc <- err })
		if err := <-errc; err != nil {
			failed = err
		} else {
			lastOK = seq
		}
	}
	if !errors.Is(failed, ErrDiskFull) || failed.Error() != "disk full: "+path {
		t.Fatalf("write on a full disk: %v, want %q", failed, "disk full: "+path)
	}
	rec, err := s.GetSession(context.Background(), "s")
	if err != nil || rec.LastSeq != lastOK {
		t.Fatalf("after the failure: %+v %v, want last_seq %d", rec, err, lastOK)
	}
	// Make room: delete the filler the test made beside it? There is none;
	// remount larger instead.
	if out, err := exec.Command("mount", "-o", "remount,size=8m", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	last, _, err := s.Resume("s")
	if err != nil || last != lastOK {
		t.Fatalf("resume: %d %v, want %d", last, err, lastOK)
	}
	for seq, err := range appendAll(s, "s", last+1, last+10)() {
		if err != nil {
			t.Fatalf("seq %d after space came back: %v", seq, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	invariants(t, path)
}

// A database on a read-only file system is refused at start with a
// clear error; one that turns read-only while open fails its writes with
// ErrReadOnly and keeps serving reads.
func TestReadOnlyDatabase(t *testing.T) {
	dir := tmpfs(t, "8m")
	path := filepath.Join(dir, "zc.db")
	s := open(t, path)
	mustCreate(t, s, "s")
	if err := appendAll(s, "s", 1, 5)()[5]; err != nil {
		t.Fatal(err)
	}
	// Read-only while open: SQLite's query_only is the same refusal
	// (SQLITE_READONLY) a file that lost its write permission gives.
	if err := s.do("", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, "PRAGMA query_only = 1")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err := appendAll(s, "s", 6, 6)()[6]
	if !errors.Is(err, ErrReadOnly) || err.Error() != "database is read-only: "+path {
		t.Fatalf("write to a read-only database: %v, want ErrReadOnly naming the file", err)
	}
	evs, err := s.Events(context.Background(), "s", 0, 0, 0)
	if err != nil || len(evs) != 5 {
		t.Fatalf("read from a read-only database: %d events, %v", len(evs), err)
	}
	s.Close()
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v %s", err, out)
	}
	if _, err := Open(path); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("open on a read-only file system: %v, want ErrReadOnly", err)
	}
}

// Verify finds what it promises to find.
func TestVerifyFindsDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	mustCreate(t, s, "a")
	for i := int64(0); i < 3; i++ {
		appendAll(s, "a", i*10+1, i*10+10)() // three batches, three segments
	}
	s.AppendMessage("a", 0, []byte(`{}`), nil)
	s.Close()
	if err := VerifyFile(context.Background(), path); err != nil {
		t.Fatalf("a sound database: %v", err)
	}
	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	db.Exec(`DELETE FROM segments WHERE first_seq = 11`)
	db.Exec(`INSERT INTO messages (session_id, idx, body) VALUES ('gone', 0, '{}')`)
	err := VerifyFile(context.Background(), path)
	for _, want := range []string{"last_seq", "do not follow", "messages without a session"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("damage not found: %v, want %q", err, want)
		}
	}
}

// Deleting goes top down in bounded steps: after every step (where a
// crash could stop it) the store's invariants hold, and between steps
// other sessions' writes commit.
func TestDeleteStepsKeepInvariants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	defer s.Close()
	mustCreate(t, s, "big", "other")
	for i := int64(0); i < 300; i++ {
		appendAll(s, "big", i*10+1, i*10+10)() // 300 segments
	}
	for i := int64(0); i < 2100; i++ {
		s.AppendMessage("big", i, []byte(`{}`), nil)
	}
	s.Sync()
	var segs int
	s.do("", func(ctx context.Context, c *sql.Conn) error {
		return c.QueryRowContext(ctx, `SELECT count(*) FROM segments WHERE session_id = 'big'`).Scan(&segs)
	})
	steps := 0
	for done := false; !done; steps++ {
		if err := s.do("big", func(ctx context.Context, c *sql.Conn) error {
			var err error
			done, _, err = deleteStep(ctx, c, "big")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(context.Background()); err != nil {
			t.Fatalf("after step %d: %v", steps, err)
		}
		// Another session writes between the steps.
		if err := appendAll(s, "other", int64(steps)+1, int64(steps)+1)()[int64(steps)+1]; err != nil {
			t.Fatal(err)
		}
	}
	if want := (segs+deleteSegments-1)/deleteSegments + (2100+deleteMessages-1)/deleteMessages + 1; steps != want {
		t.Errorf("%d steps, want %d", steps, want)
	}
	if _, err := s.GetSession(context.Background(), "big"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the last step: %v", err)
	}
	if ok, err := s.DeleteSession("other"); !ok || err != nil {
		t.Fatalf("DeleteSession: %v %v", ok, err)
	}
}

// Deleting a session gives its pages back: the database file shrinks.
func TestDeleteGivesSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	defer s.Close()
	mustCreate(t, s, "big", "small")
	body := []byte(strings.Repeat("x", 1000))
	var wg sync.WaitGroup
	for seq := int64(1); seq <= 20000; seq++ {
		wg.Add(1)
		s.AppendEvent("big", Event{Seq: seq, Type: "t", Body: body}, func(error) { wg.Done() })
	}
	wg.Wait()
	pages := func() (n int64) {
		s.do("", func(ctx context.Context, c *sql.Conn) error {
			return c.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&n)
		})
		return n
	}
	before := pages()
	if ok, err := s.DeleteSession("big"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if after := pages(); after*4 > before {
		t.Fatalf("%d pages before the delete, %d after: space not given back", before, after)
	}
}

// A broken session's Resume mends it even when writes of the session
// queued before it share its batch: they fail with the break, Resume
// runs (it used to fail with them, leaving the session broken).
func TestResumeMendsInABatchWithEarlierWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	s := open(t, path)
	defer s.Close()
	mustCreate(t, s, "bad")
	s.broken["bad"] = errors.New("injected break") // the writer's own state: nothing runs meanwhile
	// Hold the writer in a batch of its own, queue a write and a Resume
	// behind it, then let it go: the two share the next batch.
	release, held := make(chan struct{}), make(chan struct{})
	s.enqueue(op{sid: "other", control: true, run: func(context.Context, *sql.Conn) error { close(held); <-release; return nil }})
	<-held
	stateErr := make(chan error, 1)
	s.SetState("bad", StateIdle, func(err error) { stateErr <- err })
	resumed := make(chan error, 1)
	go func() { _, _, err := s.Resume("bad"); resumed <- err }()
	for len(s.ops) < 2 {
		runtime.Gosched() // both queued behind the held batch
	}
	close(release)
	if err := <-stateErr; err == nil || !strings.Contains(err.Error(), "injected break") {
		t.Errorf("the write before the Resume: %v", err)
	}
	if err := <-resumed; err != nil {
		t.Fatalf("Resume: %v", err)
	}
	done := make(chan error, 1)
	s.SetState("bad", StateIdle, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Errorf("a write after the Resume: %v", err)
	}
}
