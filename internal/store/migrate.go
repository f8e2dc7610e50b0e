package store

import (
	"database/sql"
	"fmt"
)

// migration brings the schema one version up: its SQL, then its Go step.
type migration struct {
	sql  string
	step func(tx *sql.Tx) error
}

// migrations, in order: migration i brings the schema from version i to
// i+1 (PRAGMA user_version). Never edit one that has shipped; append.
var migrations = []migration{{sql:
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
	) WITHOUT ROWID;`}, {
	// 2: events are stored in segments (runs of consecutive events of one
	// session, written together), so a stream costs a row per commit, not
	// per event.
	sql: `CREATE TABLE segments (
		session_id TEXT NOT NULL,
		first_seq  INTEGER NOT NULL,
		last_seq   INTEGER NOT NULL,
		body       BLOB NOT NULL
	);
	CREATE UNIQUE INDEX segments_by_last ON segments (session_id, last_seq);`,
	step: eventsToSegments,
}, {
	// 3: session/list pages by (updated_ms, id), newest first, on an index.
	sql: `DROP INDEX sessions_updated;
	CREATE INDEX sessions_by_update ON sessions (updated_ms DESC, id DESC);`,
}, {
	// 4: the gateway's bearer tokens, kept as SHA-256 hashes only.
	sql: `CREATE TABLE gateway_tokens (
		id           TEXT PRIMARY KEY,
		name         TEXT NOT NULL,
		hash         BLOB NOT NULL UNIQUE,
		created_ms   INTEGER NOT NULL,
		last_used_ms INTEGER NOT NULL DEFAULT 0
	);`,
}, {
	// 5: a session's own model and risk (session/configure).
	sql: `ALTER TABLE sessions ADD COLUMN model TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN risk TEXT NOT NULL DEFAULT '';`,
}, {
	// 6: a gateway credential is a script's token or a browser's session
	// (cookie and page key), which expire differently.
	sql: `ALTER TABLE gateway_tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'token';`,
}, {
	// 7: a session's own reasoning level (session/configure).
	sql: `ALTER TABLE sessions ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';`,
}, {
	// 8: what a session's model calls used and cost (cost_usd NULL: no
	// call's price known), and what each day's cost, for the budgets.
	sql: `ALTER TABLE sessions ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN cost_usd REAL;
	CREATE TABLE spend (
		day                TEXT PRIMARY KEY,
		input_tokens       INTEGER NOT NULL,
		output_tokens      INTEGER NOT NULL,
		cache_read_tokens  INTEGER NOT NULL,
		cache_write_tokens INTEGER NOT NULL,
		cost_usd           REAL
	) WITHOUT ROWID;`,
}, {
	// 9: a fork names the session and the seq it was forked from.
	sql: `ALTER TABLE sessions ADD COLUMN forked_from TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN forked_seq INTEGER NOT NULL DEFAULT 0;`,
}, {
	// 10: how a session tightened its sandbox (session/configure).
	sql: `ALTER TABLE sessions ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN no_network INTEGER NOT NULL DEFAULT 0;`,
}, {
	// 11: a sub-agent's session names its parent, the parent's tool call
	// that started it, its depth and what it was asked to do.
	sql: `ALTER TABLE sessions ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN parent_tool_call_id TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN description TEXT NOT NULL DEFAULT '';
	CREATE INDEX sessions_parent ON sessions (parent_id, created_ms) WHERE parent_id != '';`,
}, {
	// 12: whether a sub-agent's parent was told that a dying daemon cut
	// it (once per cut).
	sql: `ALTER TABLE sessions ADD COLUMN interrupt_told INTEGER NOT NULL DEFAULT 0;`,
}, {
	// 13: how a sub-agent's last task ended (completed, failed,
	// cancelled) and what it answered, cut: its parent's children
	// are told from the store, not only while the parent is loaded.
	sql: `ALTER TABLE sessions ADD COLUMN task_state TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN task_summary TEXT NOT NULL DEFAULT '';`,
}, {
	// 14: every input (a prompt, a steer) and its fate: a client's
	// clientMessageId is seen once per session; a turn's claim (started,
	// its turn id and attempts) is written with its user_message, its end
	// (the prompt's result) with its turn_complete.
	sql: `CREATE TABLE inputs (
		session_id        TEXT NOT NULL,
		input_id          TEXT NOT NULL,
		client_message_id TEXT,
		kind              TEXT NOT NULL,
		state             TEXT NOT NULL,
		turn_id           TEXT NOT NULL DEFAULT '',
		attempts          INTEGER NOT NULL DEFAULT 0,
		prompt            BLOB,
		result            BLOB,
		created_ms        INTEGER NOT NULL,
		updated_ms        INTEGER NOT NULL,
		PRIMARY KEY (session_id, input_id)
	) WITHOUT ROWID;
	CREATE UNIQUE INDEX inputs_client ON inputs (session_id, client_message_id) WHERE client_message_id IS NOT NULL;
	CREATE INDEX inputs_open ON inputs (state) WHERE state IN ('queued', 'started');`,
}, {
	// 15: the seq of the event an input's claim was last written with
	// (a turn's user_message, or its turn_resumed): where the attempt a
	// dead daemon cut began, so its next attempt reads only that
	// attempt's events (the partial reply, an approval still asked).
	sql: `ALTER TABLE inputs ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;`,
}, {
	// 16: schedules (their definition and state, JSON the scheduler
	// reads) and their runs: a run is claimed by its due time (the
	// primary key) before it starts, so each due time fires once,
	// whatever restarts, crashes or clients come between.
	sql: `CREATE TABLE schedules (
		id         TEXT PRIMARY KEY,
		body       BLOB NOT NULL,
		created_ms INTEGER NOT NULL,
		updated_ms INTEGER NOT NULL
	);
	CREATE TABLE schedule_runs (
		schedule_id TEXT NOT NULL,
		due_ms      INTEGER NOT NULL,
		state       TEXT NOT NULL,
		session_id  TEXT NOT NULL DEFAULT '',
		reason      TEXT NOT NULL DEFAULT '',
		updated_ms  INTEGER NOT NULL,
		PRIMARY KEY (schedule_id, due_ms)
	) WITHOUT ROWID;
	CREATE INDEX schedule_runs_open ON schedule_runs (state) WHERE state IN ('claimed', 'started');`,
}, {
	// 17: a session's goal (JSON the session owns), and whether it is
	// active: a daemon that starts goes on with the active ones.
	sql: `ALTER TABLE sessions ADD COLUMN goal BLOB;
	ALTER TABLE sessions ADD COLUMN goal_active INTEGER NOT NULL DEFAULT 0;`,
}, {
	// 18: an input's place in its session's order (ord, counted per
	// session as rows are first written), which decides the order of
	// what a dead daemon left queued: not its creation millisecond,
	// which prompts sent together share. The open rows already stored
	// are numbered in the order they were read in before.
	sql: `ALTER TABLE inputs ADD COLUMN ord INTEGER NOT NULL DEFAULT 0;
	UPDATE inputs SET ord = (SELECT count(*) FROM inputs AS o WHERE o.session_id = inputs.session_id
		AND o.state IN ('queued', 'started') AND (o.created_ms, o.input_id) <= (inputs.created_ms, inputs.input_id))
		WHERE state IN ('queued', 'started');
	CREATE INDEX inputs_ord ON inputs (session_id, ord);`,
}}

// migrateRows is how many schema 1 events are read at a time: a
// database of any size migrates in bounded memory.
var migrateRows = 10000

// eventsToSegments moves the events of schema 1 into segments, a page of
// events at a time, writing each segment as soon as it is complete.
func eventsToSegments(tx *sql.Tx) error {
	var sid string
	var first, last int64 // the segment being built (first == 0: none)
	var body []byte
	flush := func() error {
		if first == 0 {
			return nil
		}
		_, err := tx.Exec(`INSERT INTO segments (session_id, first_seq, last_seq, body) VALUES (?, ?, ?, ?)`, sid, first, last, body)
		first, body = 0, body[:0]
		return err
	}
	afterSID, afterSeq := "", int64(-1)
	for {
		rows, err := tx.Query(`SELECT session_id, seq, type, body FROM events WHERE (session_id, seq) > (?, ?) ORDER BY session_id, seq LIMIT ?`,
			afterSID, afterSeq, migrateRows)
		if err != nil {
			return err
		}
		var page []struct {
			sid string
			ev  Event
		}
		for rows.Next() {
			var r struct {
				sid string
				ev  Event
			}
			if err := rows.Scan(&r.sid, &r.ev.Seq, &r.ev.Type, &r.ev.Body); err != nil {
				rows.Close()
				return err
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range page {
			if first == 0 || r.sid != sid || r.ev.Seq != last+1 || len(body) >= segmentBytes {
				if err := flush(); err != nil {
					return err
				}
				sid, first = r.sid, r.ev.Seq
			}
			body = appendPacked(body, r.ev)
			last = r.ev.Seq
		}
		if len(page) < migrateRows {
			break
		}
		afterSID, afterSeq = page[len(page)-1].sid, page[len(page)-1].ev.Seq
	}
	if err := flush(); err != nil {
		return err
	}
	_, err := tx.Exec(`DROP TABLE events`)
	return err
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
		if _, err := tx.Exec(migrations[v].sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if f := migrations[v].step; f != nil {
			if err := f(tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
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
