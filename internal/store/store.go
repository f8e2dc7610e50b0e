// Package store keeps sessions, their events and their transcripts in one
// SQLite file (WAL). Every write goes through one writer goroutine that
// groups what is queued into a transaction, so a stream of events costs one
// commit per batch, and each write's completion callback runs only once it
// is committed: what a client is shown is already on disk.
//
// A failed write fails only itself and the writes of the same session
// after it: each session's writes in a batch run inside their own
// savepoint, and a session whose write failed is "broken" until Resume, so
// no later event of it can commit past the gap. The schema's own checks
// (seq follows last_seq, message idx follows message_count, the session
// row exists) keep seq 1..N gapless per session, last_seq = max(seq) and
// no orphan rows, whatever the callers do.
package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Session states as stored.
const (
	StateIdle        = "idle"
	StateRunning     = "running"
	StateInterrupted = "interrupted" // a turn was running when the daemon died
)

// Session is one stored session.
type Session struct {
	ID           string
	AgentAlias   string
	Mode         string
	Cwd          string
	Owner        string // the clientId that created it
	Title        string
	State        string
	CreatedMs    int64
	UpdatedMs    int64
	LastSeq      int64
	MessageCount int64
	// Model, Risk and Reasoning are the session's own settings
	// (session/configure); "" means the agent's.
	Model     string
	Risk      string
	Reasoning string
	// Usage sums the session's model calls.
	Usage Usage
	// ForkedFrom and ForkedSeq: the session and seq it was forked from.
	ForkedFrom string
	ForkedSeq  int64
	// Sandbox and NoNetwork: how the session tightened its sandbox.
	Sandbox   string
	NoNetwork bool
	// ParentID, ParentToolCallID, Depth and Description: a sub-agent's
	// session, the session and tool call that started it, how deep it
	// is (a top-level session is 0) and what it was asked to do.
	ParentID         string
	ParentToolCallID string
	Depth            int
	Description      string
	// InterruptTold: its parent was told the last daemon's death cut it.
	InterruptTold bool
	// TaskState and TaskSummary: how a sub-agent's last task ended
	// (completed, failed or cancelled; "" while none ended) and its
	// answer or failure, cut.
	TaskState, TaskSummary string
	// Goal is the session's goal (JSON; nil: none).
	Goal []byte
}

// Usage is what model calls used, and what those whose price was known
// cost (Priced: there was one).
type Usage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64
	CostUSD                                                      float64
	Priced                                                       bool
}

// cost is u's cost as a nullable column.
func (u Usage) cost() sql.NullFloat64 { return sql.NullFloat64{Float64: u.CostUSD, Valid: u.Priced} }

// Event is one stored session/update: its params exactly as sent.
type Event struct {
	Seq  int64
	Type string
	Body []byte
}

// Errors callers branch on. A write that fails for lack of space or
// permission wraps ErrDiskFull or ErrReadOnly and names the database file:
// "disk full: /home/u/.zeroclaw/data/zeroclaw.db".
var (
	ErrNotFound = errors.New("session not found")
	ErrDiskFull = errors.New("disk full")
	ErrReadOnly = errors.New("database is read-only")
	ErrClosed   = errors.New("store: closed")
	// ErrSequence is a write that does not follow the session's last one
	// (a seq or transcript index out of order, or a deleted session).
	ErrSequence = errors.New("store: write out of sequence")
)

// Store is an open database.
type Store struct {
	path string
	wdb  *sql.DB // one connection, used only by the writer goroutine
	rdb  *sql.DB // readers

	ops    chan op
	done   chan struct{}
	closed sync.Once
	mu     sync.RWMutex // guards stopping against late writes
	stop   bool

	// Writer only.
	wc        *sql.Conn
	insertSeg *sql.Stmt
	seg       []byte           // the segment being packed
	broken    map[string]error // sessions whose write failed, until Resume

	// OnCommit, when set before the first write, is told how long each
	// batch's transaction took (the daemon's metrics).
	OnCommit func(time.Duration)
}

// op is one queued write. An event append has isEvent and ev set: the writer inserts
// runs of them with multi-row statements, the streaming hot path. Other
// writes have run. sid names the session the write belongs to ("" for
// none); a control op runs alone in its own savepoint, last in its batch.
// after, if set, runs once the batch is committed, with this write's error.
type op struct {
	sid     string
	ev      Event
	isEvent bool
	// with (an event's) runs in the event's transaction, after it.
	with    func(ctx context.Context, c *sql.Conn) error
	run     func(ctx context.Context, c *sql.Conn) error
	control bool
	after   func(error)
	// sink, for an event written by AppendEventTo, is told instead of
	// after (no closure per event on the streaming path).
	sink Committer
}

// Committer is told when an event written by AppendEventTo has
// committed (err nil) or failed, on the writer, in commit order.
type Committer interface {
	Committed(seq int64, body []byte, err error)
}

// batchMax bounds the writes grouped into one transaction.
const batchMax = 1024

// Open opens (creating if needed) the database at path and brings its
// schema up to date.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	// SQLite cannot open a WAL database on a read-only file system at all:
	// say so plainly instead of "unable to open database file".
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if errors.Is(err, syscall.EROFS) || errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("%w: %s (%v)", ErrReadOnly, path, err)
		}
		return nil, fmt.Errorf("store: %w", err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if fi.Size() == 0 {
		// A new database gives deleted sessions' pages back to the file
		// system (DeleteSession runs incremental_vacuum). The mode can be
		// set only before the header is written, which journal_mode=WAL
		// does: one plain connection first. (An older database keeps its
		// mode until a full VACUUM.)
		db, err := sql.Open("sqlite", "file:"+path)
		if err == nil {
			_, err = db.Exec(`PRAGMA auto_vacuum = INCREMENTAL; PRAGMA journal_mode = WAL`)
			db.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", path, err)
		}
	}
	dsn := "file:" + path + "?" + q.Encode()
	wdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	s := &Store{path: path, wdb: wdb, ops: make(chan op, 4*batchMax), done: make(chan struct{}),
		broken: map[string]error{}}
	fail := func(err error) (*Store, error) {
		if s.wc != nil {
			s.wc.Close()
		}
		wdb.Close()
		if s.rdb != nil {
			s.rdb.Close()
		}
		return nil, fmt.Errorf("store %s: %w", path, s.classify(err))
	}
	if err := migrate(wdb); err != nil {
		return fail(err)
	}
	incremental(wdb)
	if s.rdb, err = sql.Open("sqlite", dsn); err != nil {
		return fail(err)
	}
	s.rdb.SetMaxOpenConns(4)
	// The daemon's umask keeps new files private; an older database is
	// made private here, with its journal files. (Windows has no modes:
	// the files inherit the ACL of the user's profile directory.)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if runtime.GOOS == "windows" {
			break
		}
		if err := os.Chmod(f, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(err)
		}
	}
	if s.wc, err = wdb.Conn(context.Background()); err != nil {
		return fail(err)
	}
	if err := s.prepare(); err != nil {
		return fail(err)
	}
	go s.writer()
	return s, nil
}

// incremental rebuilds, once, a database made before new ones were
// created in auto_vacuum=INCREMENTAL mode, so that deleting sessions
// gives space back there too (the mode changes only by a full VACUUM).
// VACUUM rewrites the file and needs free disk space of its size; when it
// fails (a full disk) the database is used as it is and the next start
// tries again.
func incremental(db *sql.DB) {
	var mode int
	if err := db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 0 {
		return
	}
	if _, err := db.Exec(`PRAGMA auto_vacuum = INCREMENTAL`); err == nil {
		db.Exec(`VACUUM`)
	}
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Close commits what is queued and closes the database.
func (s *Store) Close() error {
	s.closed.Do(func() {
		s.mu.Lock()
		s.stop = true
		close(s.ops)
		s.mu.Unlock()
		<-s.done
		s.insertSeg.Close()
		s.wc.Close()
	})
	err := s.wdb.Close()
	if e := s.rdb.Close(); err == nil {
		err = e
	}
	return err
}

// classify turns SQLite's errors for a full disk or a read-only file into
// ErrDiskFull and ErrReadOnly naming the database.
func (s *Store) classify(err error) error {
	var se *sqlite.Error
	if err == nil || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff {
	case 13: // SQLITE_FULL
		return fmt.Errorf("%w: %s", ErrDiskFull, s.path)
	case 8: // SQLITE_READONLY
		return fmt.Errorf("%w: %s", ErrReadOnly, s.path)
	case 10: // SQLITE_IOERR: ENOSPC surfaces as a failed write too
		if strings.Contains(se.Error(), "full") || strings.Contains(strings.ToLower(se.Error()), "no space") {
			return fmt.Errorf("%w: %s", ErrDiskFull, s.path)
		}
	}
	return err
}

// local reports whether err leaves the transaction usable after a
// rollback to the savepoint: a constraint failure or our own sequence
// check. Any other error (a full disk, I/O) may have rolled back the whole
// transaction already, so the batch is abandoned.
func local(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return true // ours (ErrSequence, no rows): SQLite is fine
	}
	return se.Code()&0xff == 19 // SQLITE_CONSTRAINT, a trigger's RAISE(ABORT) included
}

// enqueue queues a write. It blocks while the queue is full, which slows a
// producer down to the disk's pace instead of growing memory.
func (s *Store) enqueue(o op) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.stop {
		switch {
		case o.sink != nil:
			o.sink.Committed(o.ev.Seq, o.ev.Body, ErrClosed)
		case o.after != nil:
			o.after(ErrClosed)
		}
		return
	}
	s.ops <- o
}

// do runs a control write through the writer and waits for its commit.
func (s *Store) do(sid string, run func(ctx context.Context, c *sql.Conn) error) error {
	ch := make(chan error, 1)
	s.enqueue(op{sid: sid, run: run, control: true, after: func(err error) { ch <- err }})
	return <-ch
}

func (s *Store) writer() {
	defer close(s.done)
	batch := make([]op, 0, batchMax)
	errs := make([]error, 0, batchMax)
	for o := range s.ops {
		batch = append(batch[:0], o)
	fill:
		for len(batch) < batchMax && !o.control {
			select {
			case o2, ok := <-s.ops:
				if !ok {
					break fill
				}
				batch = append(batch, o2)
				if o2.control {
					break fill
				}
			default:
				break fill
			}
		}
		errs = s.commit(batch, errs[:0])
		for i, o := range batch {
			switch {
			case o.sink != nil:
				o.sink.Committed(o.ev.Seq, o.ev.Body, errs[i])
			case o.after != nil:
				o.after(errs[i])
			}
		}
		clear(batch) // drop references to bodies and callbacks
	}
}

// commit writes one batch in one transaction and returns each write's
// error. Each session's writes run in their own savepoint, in order.
func (s *Store) commit(batch []op, errs []error) []error {
	errs = append(errs, make([]error, len(batch))...)
	ctx := context.Background()
	failAll := func(err error) []error {
		err = s.classify(err)
		for i, o := range batch {
			if errs[i] == nil {
				errs[i] = err
			}
			if o.sid != "" {
				s.broken[o.sid] = err
			}
		}
		return errs
	}
	if s.OnCommit != nil {
		t0 := time.Now()
		defer func() { s.OnCommit(time.Since(t0)) }()
	}
	if _, err := s.wc.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return failAll(err)
	}
	abort := func(err error) []error {
		s.wc.ExecContext(ctx, "ROLLBACK") // fails harmlessly if SQLite rolled back already
		return failAll(err)
	}
	// Group by session, keeping each session's order; writes of no
	// session are groups of their own.
	var order []string
	groups := map[string][]int{}
	var loose []int
	for i, o := range batch {
		if o.sid == "" {
			loose = append(loose, i)
			continue
		}
		if _, ok := groups[o.sid]; !ok {
			order = append(order, o.sid)
		}
		groups[o.sid] = append(groups[o.sid], i)
	}
	for _, sid := range order {
		if err := s.group(ctx, sid, batch, groups[sid], errs); err != nil {
			return abort(err)
		}
	}
	for _, i := range loose {
		if err := s.group(ctx, "", batch, []int{i}, errs); err != nil {
			return abort(err)
		}
	}
	if _, err := s.wc.ExecContext(ctx, "COMMIT"); err != nil {
		return abort(err)
	}
	return errs
}

// group runs one session's writes of a batch inside a savepoint. A write
// that fails locally rolls back that savepoint only: the session's writes
// of this batch fail, and the session is broken until Resume. Any other
// failure is returned, and the caller abandons the batch.
func (s *Store) group(ctx context.Context, sid string, batch []op, idx []int, errs []error) error {
	if err := s.broken[sid]; err != nil && sid != "" {
		// Control writes (Resume, Delete, Create) mend or replace a
		// broken session; everything before them fails with the break.
		// A control write is last in its batch, but the session's
		// writes queued before it may share the batch: they fail, it
		// runs.
		c := 0
		for c < len(idx) && !batch[idx[c]].control {
			errs[idx[c]] = err
			c++
		}
		if c == len(idx) {
			return nil
		}
		idx = idx[c:]
	}
	if _, err := s.wc.ExecContext(ctx, "SAVEPOINT g"); err != nil {
		return err
	}
	err := s.apply(ctx, sid, batch, idx)
	if err == nil {
		_, err = s.wc.ExecContext(ctx, "RELEASE g")
		if err == nil {
			if batch[idx[0]].control {
				delete(s.broken, sid)
			}
			return nil
		}
	}
	if !local(err) {
		return err
	}
	if _, rerr := s.wc.ExecContext(ctx, "ROLLBACK TO g"); rerr != nil {
		return rerr
	}
	if _, rerr := s.wc.ExecContext(ctx, "RELEASE g"); rerr != nil {
		return rerr
	}
	err = s.classify(err)
	for _, i := range idx {
		errs[i] = err
	}
	if sid != "" && !batch[idx[0]].control {
		s.broken[sid] = err
	}
	return nil
}

func (s *Store) apply(ctx context.Context, sid string, batch []op, idx []int) error {
	for k := 0; k < len(idx); {
		o := batch[idx[k]]
		if !o.isEvent {
			if err := o.run(ctx, s.wc); err != nil {
				return err
			}
			k++
			continue
		}
		j := k
		for j < len(idx) && batch[idx[j]].isEvent {
			j++
		}
		if err := s.insertEvents(ctx, sid, batch, idx[k:j]); err != nil {
			return err
		}
		for ; k < j; k++ {
			if w := batch[idx[k]].with; w != nil {
				if err := w(ctx, s.wc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// insertEvents stores a run of one session's events as segments, after
// moving its last_seq: the update succeeds only if the run follows the
// stored last_seq and the session exists.
func (s *Store) insertEvents(ctx context.Context, sid string, batch []op, idx []int) error {
	first := batch[idx[0]].ev.Seq
	for k, i := range idx {
		if batch[i].ev.Seq != first+int64(k) {
			return fmt.Errorf("%w: session %s: seq %d after %d", ErrSequence, sid, batch[i].ev.Seq, first+int64(k)-1)
		}
	}
	last := first + int64(len(idx)) - 1
	r, err := s.wc.ExecContext(ctx, `UPDATE sessions SET last_seq = ?, updated_ms = ? WHERE id = ? AND last_seq = ?`, last, nowMs(), sid, first-1)
	if err != nil {
		return err
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%w: session %s: seq %d does not follow the stored last seq (or the session is gone)", ErrSequence, sid, first)
	}
	for len(idx) > 0 {
		s.seg = s.seg[:0]
		n := 0
		for n < len(idx) && (n == 0 || len(s.seg) < segmentBytes) {
			s.seg = appendPacked(s.seg, batch[idx[n]].ev)
			n++
		}
		from, to := batch[idx[0]].ev.Seq, batch[idx[n-1]].ev.Seq
		if _, err := s.insertSeg.ExecContext(ctx, sid, from, to, s.seg); err != nil {
			return err
		}
		idx = idx[n:]
	}
	if cap(s.seg) > 4*segmentBytes {
		s.seg = nil
	}
	return nil
}

// segmentBytes is the size past which a run of events starts a new
// segment; an event bigger than it has a segment of its own.
const segmentBytes = 256 << 10

// appendPacked appends one event to a segment's body:
// uvarint seq delta is implied (segments are consecutive), so each event
// is uvarint len(type), type, uvarint len(body), body.
func appendPacked(b []byte, ev Event) []byte {
	b = binary.AppendUvarint(b, uint64(len(ev.Type)))
	b = append(b, ev.Type...)
	b = binary.AppendUvarint(b, uint64(len(ev.Body)))
	return append(b, ev.Body...)
}

// unpack calls f for each event of a segment starting at seq first,
// until f returns false.
func unpack(body []byte, first int64, f func(Event) bool) error {
	for seq := first; len(body) > 0; seq++ {
		n, k := binary.Uvarint(body)
		if k <= 0 || uint64(len(body)-k) < n {
			return errors.New("store: damaged segment")
		}
		typ := body[k : k+int(n)]
		body = body[k+int(n):]
		n, k = binary.Uvarint(body)
		if k <= 0 || uint64(len(body)-k) < n {
			return errors.New("store: damaged segment")
		}
		ev := Event{Seq: seq, Type: string(typ), Body: body[k : k+int(n) : k+int(n)]}
		body = body[k+int(n):]
		if !f(ev) {
			return nil
		}
	}
	return nil
}

func (s *Store) prepare() error {
	st, err := s.wc.PrepareContext(context.Background(), `INSERT INTO segments (session_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	s.insertSeg = st
	return nil
}

func nowMs() int64 { return time.Now().UnixMilli() }

// CreateSession stores a new session; its CreatedMs and UpdatedMs are set
// to now when zero.
func (s *Store) CreateSession(ss *Session) error {
	if ss.CreatedMs == 0 {
		ss.CreatedMs = nowMs()
	}
	if ss.UpdatedMs == 0 {
		ss.UpdatedMs = ss.CreatedMs
	}
	if ss.State == "" {
		ss.State = StateIdle
	}
	return s.do(ss.ID, func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO sessions (id, agent_alias, mode, cwd, owner, title, state, created_ms, updated_ms, last_seq, message_count, model, risk, reasoning, forked_from, forked_seq,
			sandbox, no_network, parent_id, parent_tool_call_id, depth, description)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ss.ID, ss.AgentAlias, ss.Mode, ss.Cwd, ss.Owner, ss.Title, ss.State, ss.CreatedMs, ss.UpdatedMs, ss.LastSeq, ss.MessageCount, ss.Model, ss.Risk, ss.Reasoning, ss.ForkedFrom, ss.ForkedSeq,
			ss.Sandbox, ss.NoNetwork, ss.ParentID, ss.ParentToolCallID, ss.Depth, ss.Description)
		return err
	})
}

// update queues a write of one session; after (if not nil) gets its
// error once committed or failed.
func (s *Store) update(sid string, after func(error), q string, args ...any) {
	s.enqueue(op{sid: sid, after: after, run: func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: session %s is not stored", ErrSequence, sid)
		}
		return nil
	}})
}

// SetState records a session's state.
func (s *Store) SetState(id, state string, after func(error)) {
	s.update(id, after, `UPDATE sessions SET state = ?, updated_ms = ? WHERE id = ?`, state, nowMs(), id)
}

// SetConfig records a session's own model and risk ("": the agent's),
// and waits for the commit.
func (s *Store) SetConfig(id, model, risk, reasoning string) error {
	ch := make(chan error, 1)
	s.update(id, func(err error) { ch <- err }, `UPDATE sessions SET model = ?, risk = ?, reasoning = ?, updated_ms = ? WHERE id = ?`, model, risk, reasoning, nowMs(), id)
	return <-ch
}

// SetSandbox records how a session tightened its sandbox, and waits for
// the commit.
func (s *Store) SetSandbox(id, mode string, noNetwork bool) error {
	ch := make(chan error, 1)
	s.update(id, func(err error) { ch <- err }, `UPDATE sessions SET sandbox = ?, no_network = ? WHERE id = ?`, mode, noNetwork, id)
	return <-ch
}

// AutoTitle records a session's title unless it has one (a name the
// user gave it stays).
func (s *Store) AutoTitle(id, title string, after func(error)) {
	s.enqueue(op{sid: id, after: after, run: func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ? AND title = ''`, title, id)
		return err
	}})
}

// Rename sets a session's title, and waits for the commit; false when
// no session has that id.
func (s *Store) Rename(id, title string) (bool, error) {
	var n int64
	err := s.do(id, func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, `UPDATE sessions SET title = ? WHERE id = ?`, title, id)
		if err == nil {
			n, err = r.RowsAffected()
		}
		return err
	})
	return n == 1, err
}

// AppendEvent queues one event; after (if not nil) runs once it is
// committed, with the commit's error. Events of a session must come with
// consecutive seqs following the stored last_seq.
func (s *Store) AppendEvent(sessionID string, ev Event, after func(error)) {
	s.enqueue(op{sid: sessionID, ev: ev, isEvent: true, after: after})
}

// AppendEventTo is AppendEvent that tells sink, not a callback: the
// streaming path's, which makes no closure per event.
func (s *Store) AppendEventTo(sessionID string, ev Event, sink Committer) {
	s.enqueue(op{sid: sessionID, ev: ev, isEvent: true, sink: sink})
}

// AppendMessage queues one transcript message (JSON) at index idx, which
// must be the session's message count; after (if not nil) gets its error.
func (s *Store) AppendMessage(sessionID string, idx int64, body []byte, after func(error)) {
	s.enqueue(op{sid: sessionID, after: after, run: func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, `UPDATE sessions SET message_count = ? WHERE id = ? AND message_count = ?`, idx+1, sessionID, idx)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: session %s: message %d does not follow the stored transcript", ErrSequence, sessionID, idx)
		}
		_, err = c.ExecContext(ctx, `INSERT INTO messages (session_id, idx, body) VALUES (?, ?, ?)`, sessionID, idx, body)
		return err
	}})
}

// ReplaceMessages rewrites a session's transcript from index from on
// with bodies (a repaired transcript: results given to tool calls an
// interrupted turn left without one), and waits for it.
func (s *Store) ReplaceMessages(sessionID string, from int64, bodies [][]byte) error {
	ch := make(chan error, 1)
	s.enqueue(op{sid: sessionID, after: func(err error) { ch <- err }, run: func(ctx context.Context, c *sql.Conn) error {
		if _, err := c.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND idx >= ?`, sessionID, from); err != nil {
			return err
		}
		for i, b := range bodies {
			if _, err := c.ExecContext(ctx, `INSERT INTO messages (session_id, idx, body) VALUES (?, ?, ?)`, sessionID, from+int64(i), b); err != nil {
				return err
			}
		}
		r, err := c.ExecContext(ctx, `UPDATE sessions SET message_count = ? WHERE id = ?`, from+int64(len(bodies)), sessionID)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: session %s is not stored", ErrSequence, sessionID)
		}
		return nil
	}})
	return <-ch
}

// Sync waits until every write queued before it is committed (or failed).
func (s *Store) Sync() error { return s.do("", func(context.Context, *sql.Conn) error { return nil }) }

// Resume mends a session after a failed write: writes queued before it
// have failed or committed; it returns what is stored (last_seq and
// message count), from which the session goes on, and lets its writes
// through again.
func (s *Store) Resume(id string) (lastSeq, messages int64, err error) {
	err = s.do(id, func(ctx context.Context, c *sql.Conn) error {
		return c.QueryRowContext(ctx, `SELECT last_seq, message_count FROM sessions WHERE id = ?`, id).Scan(&lastSeq, &messages)
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	return lastSeq, messages, err
}

// DeleteSession removes a session with its events and transcript. It
// deletes in bounded steps, each its own transaction, so the writes of
// other sessions go on between them (a session of a million events does
// not stall every other turn), and from the top down: each step removes
// the newest events (or messages) and lowers last_seq (message_count) in
// the same commit, so a crash mid-delete leaves a shorter session whose
// invariants hold, never a gap or an orphan.
func (s *Store) DeleteSession(id string) (bool, error) {
	for {
		var done, found bool
		err := s.do(id, func(ctx context.Context, c *sql.Conn) error {
			var err error
			done, found, err = deleteStep(ctx, c, id)
			return err
		})
		if err != nil || done {
			if err == nil {
				s.vacuum()
			}
			return found, err
		}
	}
}

// vacuum gives free pages back to the file system in bounded steps (a
// database in auto_vacuum=INCREMENTAL mode; elsewhere it does nothing),
// each its own transaction, so other writes go on between them.
func (s *Store) vacuum() {
	for range 1 << 20 {
		var free int64
		err := s.do("", func(ctx context.Context, c *sql.Conn) error {
			if _, err := c.ExecContext(ctx, `PRAGMA incremental_vacuum(256)`); err != nil {
				return err
			}
			return c.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free)
		})
		if err != nil || free == 0 {
			return
		}
	}
}

// Bounds of one delete step.
const (
	deleteSegments = 64
	deleteMessages = 1024
)

// deleteStep removes the newest segments, else the newest messages, else
// the session row; done once the row is gone (found: it existed).
func deleteStep(ctx context.Context, c *sql.Conn, id string) (done, found bool, err error) {
	var cut sql.NullInt64
	if err := c.QueryRowContext(ctx, `SELECT min(first_seq) FROM (SELECT first_seq FROM segments WHERE session_id = ? ORDER BY last_seq DESC LIMIT ?)`,
		id, deleteSegments).Scan(&cut); err != nil {
		return false, false, err
	}
	if cut.Valid {
		if _, err := c.ExecContext(ctx, `DELETE FROM segments WHERE session_id = ? AND first_seq >= ?`, id, cut.Int64); err != nil {
			return false, false, err
		}
		_, err := c.ExecContext(ctx, `UPDATE sessions SET last_seq = ? WHERE id = ?`, cut.Int64-1, id)
		return false, true, err
	}
	if err := c.QueryRowContext(ctx, `SELECT min(idx) FROM (SELECT idx FROM messages WHERE session_id = ? ORDER BY idx DESC LIMIT ?)`,
		id, deleteMessages).Scan(&cut); err != nil {
		return false, false, err
	}
	if cut.Valid {
		if _, err := c.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND idx >= ?`, id, cut.Int64); err != nil {
			return false, false, err
		}
		_, err := c.ExecContext(ctx, `UPDATE sessions SET message_count = ? WHERE id = ?`, cut.Int64, id)
		return false, true, err
	}
	if _, err := c.ExecContext(ctx, `DELETE FROM inputs WHERE session_id = ?`, id); err != nil {
		return false, false, err
	}
	r, err := c.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return false, false, err
	}
	n, err := r.RowsAffected()
	return true, n > 0, err
}

// MarkInterrupted marks every session stored as running as interrupted
// (their daemon died mid-turn) and returns their ids.
func (s *Store) MarkInterrupted() ([]string, error) {
	var ids []string
	err := s.do("", func(ctx context.Context, c *sql.Conn) error {
		rows, err := c.QueryContext(ctx, `SELECT id FROM sessions WHERE state = ?`, StateRunning)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = c.ExecContext(ctx, `UPDATE sessions SET state = ?, interrupt_told = 0 WHERE state = ?`, StateInterrupted, StateRunning)
		return err
	})
	return ids, err
}

const sessionCols = `id, agent_alias, mode, cwd, owner, title, state, created_ms, updated_ms, last_seq, message_count, model, risk, reasoning,
	input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, forked_from, forked_seq, sandbox, no_network,
	parent_id, parent_tool_call_id, depth, description, interrupt_told, task_state, task_summary, goal`

func scanSession(sc interface{ Scan(...any) error }) (*Session, error) {
	var ss Session
	var cost sql.NullFloat64
	u := &ss.Usage
	err := sc.Scan(&ss.ID, &ss.AgentAlias, &ss.Mode, &ss.Cwd, &ss.Owner, &ss.Title, &ss.State, &ss.CreatedMs, &ss.UpdatedMs, &ss.LastSeq, &ss.MessageCount, &ss.Model, &ss.Risk, &ss.Reasoning,
		&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &cost, &ss.ForkedFrom, &ss.ForkedSeq, &ss.Sandbox, &ss.NoNetwork,
		&ss.ParentID, &ss.ParentToolCallID, &ss.Depth, &ss.Description, &ss.InterruptTold, &ss.TaskState, &ss.TaskSummary, &ss.Goal)
	u.CostUSD, u.Priced = cost.Float64, cost.Valid
	return &ss, err
}

// Charge adds u to a session's usage and to day's (YYYY-MM-DD), in one
// commit queued behind the session's earlier writes; after (if not nil)
// gets its error.
func (s *Store) Charge(sessionID, day string, u Usage, after func(error)) {
	s.enqueue(op{sid: sessionID, after: after, run: func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
			cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
			cost_usd = CASE WHEN ? IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ? END WHERE id = ?`,
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.cost(), u.cost(), sessionID)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: session %s is not stored", ErrSequence, sessionID)
		}
		_, err = c.ExecContext(ctx, `INSERT INTO spend (day, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (day) DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens,
				output_tokens = output_tokens + excluded.output_tokens,
				cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
				cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
				cost_usd = CASE WHEN excluded.cost_usd IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + excluded.cost_usd END`,
			day, u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.cost())
		return err
	}})
}

// ChargeSession adds u to a session's usage only (a sub-agent's, to its
// ancestors: the day's was charged once, with the sub-agent's own).
func (s *Store) ChargeSession(sessionID string, u Usage, after func(error)) {
	s.update(sessionID, after, `UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
		cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
		cost_usd = CASE WHEN ? IS NULL THEN cost_usd ELSE coalesce(cost_usd, 0) + ? END WHERE id = ?`,
		u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.cost(), u.cost(), sessionID)
}

// Spent is what day's (YYYY-MM-DD) model calls used and cost, as
// committed.
func (s *Store) Spent(ctx context.Context, day string) (Usage, error) {
	var u Usage
	var cost sql.NullFloat64
	err := s.rdb.QueryRowContext(ctx, `SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd FROM spend WHERE day = ?`, day).
		Scan(&u.InputTokens, &u.OutputTokens, &u.CacheReadTokens, &u.CacheWriteTokens, &cost)
	if errors.Is(err, sql.ErrNoRows) {
		return Usage{}, nil
	}
	if err != nil {
		return Usage{}, fmt.Errorf("store: %w", err)
	}
	u.CostUSD, u.Priced = cost.Float64, cost.Valid
	return u, nil
}

// GetSession reads one session.
func (s *Store) GetSession(ctx context.Context, id string) (*Session, error) {
	ss, err := scanSession(s.rdb.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return ss, nil
}

// ListSessions returns sessions, most recently updated first, skipping
// offset and returning at most limit, and how many there are in all.
func (s *Store) ListSessions(ctx context.Context, offset, limit int) ([]*Session, int, error) {
	total, err := s.CountSessions(ctx)
	if err != nil {
		return nil, 0, err
	}
	out, err := s.listWhere(ctx, `ORDER BY updated_ms DESC, id DESC LIMIT ? OFFSET ?`, limit, offset)
	return out, total, err
}

// CountSessions returns how many sessions are stored.
func (s *Store) CountSessions(ctx context.Context) (int, error) {
	var n int
	if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	return n, nil
}

// ListAfter is keyset paging: the sessions that come after (updatedMs,
// id) in the order of ListSessions (all from the start when id is ""),
// at most limit, read from the index without counting or skipping, so
// paging through every session costs in proportion to their number.
func (s *Store) ListAfter(ctx context.Context, updatedMs int64, id string, limit int) ([]*Session, error) {
	if id == "" {
		return s.listWhere(ctx, `ORDER BY updated_ms DESC, id DESC LIMIT ?`, limit)
	}
	return s.listWhere(ctx, `WHERE (updated_ms, id) < (?, ?) ORDER BY updated_ms DESC, id DESC LIMIT ?`, updatedMs, id, limit)
}

// InterruptTold records that a sub-agent's parent was told a dying
// daemon cut it.
func (s *Store) InterruptTold(id string) {
	s.update(id, nil, `UPDATE sessions SET interrupt_told = 1 WHERE id = ?`, id)
}

// TaskEnded records how a sub-agent's task ended (queued behind its
// session's earlier writes).
func (s *Store) TaskEnded(id, state, summary string) {
	s.update(id, nil, `UPDATE sessions SET task_state = ?, task_summary = ? WHERE id = ?`, state, summary, id)
}

// SetGoal writes a session's goal (nil: none) and whether it is active,
// queued behind the session's earlier writes.
func (s *Store) SetGoal(id string, goal []byte, active bool) {
	s.update(id, nil, `UPDATE sessions SET goal = ?, goal_active = ? WHERE id = ?`, goal, active, id)
}

// ActiveGoals are the sessions whose goal is active.
func (s *Store) ActiveGoals(ctx context.Context) ([]string, error) {
	return s.ids(ctx, `SELECT id FROM sessions WHERE goal_active = 1 ORDER BY id`)
}

// ids runs a query whose one column is a session id.
func (s *Store) ids(ctx context.Context, query string) ([]string, error) {
	rows, err := s.rdb.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ListChildren lists the sessions parent started (its sub-agents), the
// oldest first.
func (s *Store) ListChildren(ctx context.Context, parent string) ([]*Session, error) {
	return s.listWhere(ctx, `WHERE parent_id = ? ORDER BY created_ms, id`, parent)
}

// ListMatching is ListAfter over the sessions whose title, id or
// working directory contains query (ASCII letters in any case).
func (s *Store) ListMatching(ctx context.Context, query string, updatedMs int64, id string, limit int) ([]*Session, error) {
	like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(query) + "%"
	match := `(title LIKE ?1 ESCAPE '\' OR id LIKE ?1 ESCAPE '\' OR cwd LIKE ?1 ESCAPE '\')`
	if id == "" {
		return s.listWhere(ctx, `WHERE `+match+` ORDER BY updated_ms DESC, id DESC LIMIT ?2`, like, limit)
	}
	return s.listWhere(ctx, `WHERE `+match+` AND (updated_ms, id) < (?3, ?4) ORDER BY updated_ms DESC, id DESC LIMIT ?2`, like, limit, updatedMs, id)
}

func (s *Store) listWhere(ctx context.Context, tail string, args ...any) ([]*Session, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions `+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		ss, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, ss)
	}
	return out, rows.Err()
}

// Events returns a session's events with seq > since, in order: at most
// limit of them (0: no limit) and, past the first, no more than maxBytes
// of bodies in all (0: no limit), so a page's memory is bounded whatever
// the events hold. The bodies are the caller's to keep.
func (s *Store) Events(ctx context.Context, sessionID string, since int64, limit, maxBytes int) ([]Event, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT first_seq, body FROM segments WHERE session_id = ? AND last_seq > ? ORDER BY last_seq`, sessionID, since)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []Event
	size := 0
	full := false
	for !full && rows.Next() {
		var first int64
		var body []byte
		if err := rows.Scan(&first, &body); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		err := unpack(body, first, func(ev Event) bool {
			if ev.Seq <= since {
				return true
			}
			size += len(ev.Body)
			if (maxBytes > 0 && len(out) > 0 && size > maxBytes) || (limit > 0 && len(out) == limit) {
				full = true
				return false
			}
			out = append(out, ev)
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// Event returns one stored event, or ErrNotFound.
func (s *Store) Event(ctx context.Context, sessionID string, seq int64) (Event, error) {
	var first int64
	var body []byte
	err := s.rdb.QueryRowContext(ctx, `SELECT first_seq, body FROM segments WHERE session_id = ? AND last_seq >= ? ORDER BY last_seq LIMIT 1`, sessionID, seq).Scan(&first, &body)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && first > seq) {
		return Event{Seq: seq}, ErrNotFound
	}
	if err != nil {
		return Event{Seq: seq}, fmt.Errorf("store: %w", err)
	}
	var out Event
	err = unpack(body, first, func(ev Event) bool {
		if ev.Seq == seq {
			out = ev
			return false
		}
		return true
	})
	if err == nil && out.Seq != seq {
		err = ErrNotFound
	}
	return out, err
}

// Messages returns a session's transcript, in order.
func (s *Store) Messages(ctx context.Context, sessionID string) ([][]byte, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT body FROM messages WHERE session_id = ? ORDER BY idx`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
