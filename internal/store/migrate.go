package store

import (
	"database/sql"
	"fmt"
)

// migrations, in order: migration i brings the schema from version i to
// i+1 (PRAGMA user_version). Never edit one that has shipped; append.
var migrations = []string{
	// 1: sessions, their events as sent, their transcripts.
	`CREATE TABLE sessions (
		id            TEXT PRIMARY KEY,
		agent_alias   TEXT NOT NULL,
		mode          TEXT NOT NULL,
		cwd           TEXT NOT NULL,
		owner         TEXT NOT NULL,
		title         TEXT NOT NULL DEFAULT '',
		state         TEXT NOT NULL DEFAULT 'idle',
		created_ms    INTEGER NOT NULL,
		updated_ms    INTEGER NOT NULL,
		last_seq      INTEGER NOT NULL DEFAULT 0,
		message_count INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_updated ON sessions (updated_ms DESC);
	CREATE TABLE events (
		session_id TEXT NOT NULL,
		seq        INTEGER NOT NULL,
		type       TEXT NOT NULL,
		body       BLOB NOT NULL,
		PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	CREATE TABLE messages (
		session_id TEXT NOT NULL,
		idx        INTEGER NOT NULL,
		body       BLOB NOT NULL,
		PRIMARY KEY (session_id, idx)
	) WITHOUT ROWID;`,
}

// SchemaVersion is the schema version this build writes.
var SchemaVersion = len(migrations)

func migrate(db *sql.DB) error {
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this zeroclaw knows (%d): upgrade zeroclaw", v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	return nil
}
