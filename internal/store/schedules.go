package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Schedules and their runs. A schedule is kept as its body (JSON the
// scheduler owns: what it runs, when, and its state); a run is one due
// time of one schedule, claimed before it starts (ClaimRun) and ended
// once (EndRun).

// Schedule is one stored schedule.
type Schedule struct {
	ID        string
	Body      []byte
	CreatedMs int64
}

// Run is one due time of a schedule and what became of it: claimed
// (about to start), started (its prompt taken), then completed, failed
// or skipped.
type Run struct {
	ScheduleID string
	DueMs      int64
	State      string
	SessionID  string
	Reason     string
}

// PutSchedule writes a schedule (inserted, or replacing its body).
func (s *Store) PutSchedule(sc Schedule) error {
	now := nowMs()
	if sc.CreatedMs == 0 {
		sc.CreatedMs = now
	}
	return s.do("", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `INSERT INTO schedules (id, body, created_ms, updated_ms) VALUES (?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET body = excluded.body, updated_ms = excluded.updated_ms`, sc.ID, sc.Body, sc.CreatedMs, now)
		return err
	})
}

// DeleteSchedule removes a schedule and its runs (false: none had id).
func (s *Store) DeleteSchedule(id string) (bool, error) {
	var found bool
	err := s.do("", func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, `DELETE FROM schedules WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, _ := r.RowsAffected()
		found = n > 0
		_, err = c.ExecContext(ctx, `DELETE FROM schedule_runs WHERE schedule_id = ?`, id)
		return err
	})
	return found, err
}

// Schedules are the stored schedules, the oldest first.
func (s *Store) Schedules(ctx context.Context) ([]Schedule, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, body, created_ms FROM schedules ORDER BY created_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		var sc Schedule
		if err := rows.Scan(&sc.ID, &sc.Body, &sc.CreatedMs); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// ClaimRun claims schedule id's run due at dueMs and writes the
// schedule's body in the same transaction; false (and nothing written)
// when that run was claimed before: it fires once.
func (s *Store) ClaimRun(id string, dueMs int64, sessionID string, body []byte) (bool, error) {
	var claimed bool
	err := s.do("", func(ctx context.Context, c *sql.Conn) error {
		r, err := c.ExecContext(ctx, `INSERT INTO schedule_runs (schedule_id, due_ms, state, session_id, updated_ms) VALUES (?, ?, 'claimed', ?, ?)
			ON CONFLICT DO NOTHING`, id, dueMs, sessionID, nowMs())
		if err != nil {
			return err
		}
		n, _ := r.RowsAffected()
		if claimed = n == 1; !claimed {
			return nil
		}
		r, err = c.ExecContext(ctx, `UPDATE schedules SET body = ?, updated_ms = ? WHERE id = ?`, body, nowMs(), id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return errors.New("store: no schedule " + id)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return claimed, nil
}

// SetRun writes what became of a run (its state, its session, why) and,
// when body is not nil, the schedule's body, in one transaction.
func (s *Store) SetRun(run Run, body []byte) error {
	return s.do("", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `UPDATE schedule_runs SET state = ?, session_id = ?, reason = ?, updated_ms = ? WHERE schedule_id = ? AND due_ms = ?`,
			run.State, run.SessionID, run.Reason, nowMs(), run.ScheduleID, run.DueMs)
		if err != nil || body == nil {
			return err
		}
		_, err = c.ExecContext(ctx, `UPDATE schedules SET body = ?, updated_ms = ? WHERE id = ?`, body, nowMs(), run.ScheduleID)
		return err
	})
}

// OpenRuns are the runs claimed or started and not ended (a dead
// daemon's), the oldest first.
func (s *Store) OpenRuns(ctx context.Context) ([]Run, error) {
	return s.runs(ctx, `SELECT schedule_id, due_ms, state, session_id, reason FROM schedule_runs
		WHERE state IN ('claimed', 'started') ORDER BY due_ms, schedule_id`)
}

// Runs are schedule id's runs, the latest first, at most limit.
func (s *Store) Runs(ctx context.Context, id string, limit int) ([]Run, error) {
	return s.runs(ctx, `SELECT schedule_id, due_ms, state, session_id, reason FROM schedule_runs
		WHERE schedule_id = ? ORDER BY due_ms DESC LIMIT ?`, id, limit)
}

// runs reads the runs query q selects.
func (s *Store) runs(ctx context.Context, q string, args ...any) ([]Run, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.ScheduleID, &r.DueMs, &r.State, &r.SessionID, &r.Reason); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
