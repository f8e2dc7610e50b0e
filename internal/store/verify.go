package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Verify checks the invariants the store keeps whatever happens (a crash,
// a full disk, a failed write): per session, seq 1..N without gaps and
// last_seq = N, the transcript 0..M-1 and message_count = M, and no event
// or message without its session. It returns every violation found.
func (s *Store) Verify(ctx context.Context) error {
	return verify(ctx, s.rdb)
}

// VerifyFile checks the invariants of the database file at path (opened
// read-only beside whoever else has it open).
func VerifyFile(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	return verify(ctx, db)
}

func verify(ctx context.Context, db *sql.DB) error {
	var errs []error
	for _, c := range []struct{ what, q string }{
		{"sessions whose last_seq is not their event count and max seq",
			`SELECT count(*) FROM sessions s WHERE s.last_seq != coalesce((SELECT sum(last_seq - first_seq + 1) FROM segments g WHERE g.session_id = s.id), 0)
			 OR s.last_seq != coalesce((SELECT max(last_seq) FROM segments g WHERE g.session_id = s.id), 0)`},
		{"segments that do not follow the one before",
			`SELECT count(*) FROM (SELECT first_seq, last_seq, lag(last_seq) OVER (PARTITION BY session_id ORDER BY first_seq) AS prev FROM segments)
			 WHERE first_seq != coalesce(prev, 0) + 1 OR last_seq < first_seq`},
		{"sessions whose message_count is not their transcript's length",
			`SELECT count(*) FROM sessions s WHERE s.message_count != (SELECT count(*) FROM messages m WHERE m.session_id = s.id)
			 OR s.message_count != coalesce((SELECT max(idx)+1 FROM messages m WHERE m.session_id = s.id), 0)`},
		{"events without a session", `SELECT count(*) FROM segments WHERE session_id NOT IN (SELECT id FROM sessions)`},
		{"messages without a session", `SELECT count(*) FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)`},
	} {
		var n int
		if err := db.QueryRowContext(ctx, c.q).Scan(&n); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.what, err))
		} else if n != 0 {
			errs = append(errs, fmt.Errorf("%d %s", n, c.what))
		}
	}
	return errors.Join(errs...)
}
