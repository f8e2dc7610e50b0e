package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// PruneInputs forgets ended inputs older than InputKeep and keeps the
// recent ones and every open one (a turn a dead daemon left, however
// old); an input's claim keeps the seq of the event it was written
// with, and a later write without an event keeps it.
func TestPruneInputsAndTheClaimsSeq(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "zc.db"))
	defer s.Close()
	if err := s.CreateSession(&Session{ID: "s", AgentAlias: "default", Mode: "code", Cwd: "/", Owner: "c"}); err != nil {
		t.Fatal(err)
	}
	put := func(in Input) {
		done := make(chan error, 1)
		s.PutInput("s", in, func(err error) { done <- err })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	put(Input{ID: "in_old", ClientMessageID: "old", Kind: "prompt", State: "completed"})
	put(Input{ID: "in_recent", ClientMessageID: "recent", Kind: "prompt", State: "completed"})
	put(Input{ID: "in_open", ClientMessageID: "open", Kind: "prompt", State: "queued"})
	done := make(chan error, 1)
	s.AppendEventWithInput("s", Event{Seq: 1, Type: "user_message", Body: []byte(`{"seq":1}`)},
		Input{ID: "in_open", ClientMessageID: "open", Kind: "prompt", State: "started", TurnID: "turn_1", Attempts: 1}, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	put(Input{ID: "in_open", ClientMessageID: "open", Kind: "prompt", State: "started", TurnID: "turn_1", Attempts: 1})
	err := s.do("", func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, `UPDATE inputs SET updated_ms = 1 WHERE input_id IN ('in_old', 'in_open')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PruneInputs(); err != nil {
		t.Fatal(err)
	}
	rows, err := s.rdb.Query(`SELECT input_id FROM inputs ORDER BY input_id`)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		kept = append(kept, id)
	}
	rows.Close()
	if !slices.Equal(kept, []string{"in_open", "in_recent"}) {
		t.Fatalf("kept %v, want in_open and in_recent", kept)
	}
	open, err := s.OpenInputs(context.Background(), "s")
	if err != nil || len(open) != 1 || open[0].Seq != 1 || open[0].State != "started" {
		t.Fatalf("the open input: %+v %v", open, err)
	}
}

// Open inputs are read in the order their rows were first written,
// whatever their creation times and ids say (prompts sent together
// share a millisecond; their ids are random), and a later write (the
// claim of the first, a daemon queueing them again) keeps each's place.
func TestOpenInputsKeepTheirOrder(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "zc.db"))
	defer s.Close()
	for _, id := range []string{"s", "t"} {
		if err := s.CreateSession(&Session{ID: id, AgentAlias: "default", Mode: "code", Cwd: "/", Owner: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(sid string, in Input) {
		done := make(chan error, 1)
		s.PutInput(sid, in, func(err error) { done <- err })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// Sent in this order; their creation times and ids say otherwise.
	sent := []Input{
		{ID: "in_z", Kind: "prompt", State: "queued", CreatedMs: 5000},
		{ID: "in_a", Kind: "prompt", State: "queued", CreatedMs: 5000},
		{ID: "in_m", Kind: "prompt", State: "queued", CreatedMs: 4000},
		{ID: "in_b", Kind: "prompt", State: "queued", CreatedMs: 3000},
	}
	for i, in := range sent {
		put("s", in)
		put("t", Input{ID: fmt.Sprintf("in_t%d", i), Kind: "prompt", State: "queued"}) // another session's between
	}
	// The first is claimed, then all are written queued again.
	put("s", Input{ID: "in_z", Kind: "prompt", State: "started", TurnID: "turn_1", Attempts: 1})
	for _, in := range sent[1:] {
		put("s", in)
	}
	open, err := s.OpenInputs(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range open {
		got = append(got, in.ID)
	}
	if want := []string{"in_z", "in_a", "in_m", "in_b"}; !slices.Equal(got, want) {
		t.Fatalf("open inputs %v, want %v (the order sent)", got, want)
	}
}

// A schema 17 database's open inputs are numbered in the order they
// were read in before (creation time, then id): what a daemon of the
// last version left queued keeps its order under this one.
func TestMigrationNumbersOpenInputs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zc.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:17] {
		if _, err := db.Exec(m.sql); err != nil {
			t.Fatal(err)
		}
	}
	db.Exec(`PRAGMA user_version = 17`)
	db.Exec(`INSERT INTO sessions (id, agent_alias, mode, cwd, owner, created_ms, updated_ms) VALUES ('s', 'default', 'chat', '/', 'c', 1, 1)`)
	for _, r := range []struct {
		id, state string
		ms        int64
	}{{"in_c", "queued", 30}, {"in_a", "queued", 20}, {"in_b", "started", 10}, {"in_d", "completed", 5}, {"in_e", "queued", 30}} {
		if _, err := db.Exec(`INSERT INTO inputs (session_id, input_id, kind, state, created_ms, updated_ms) VALUES ('s', ?, 'prompt', ?, ?, ?)`, r.id, r.state, r.ms, r.ms); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := open(t, path)
	defer s.Close()
	done := make(chan error, 1)
	s.PutInput("s", Input{ID: "in_0", Kind: "prompt", State: "queued", CreatedMs: 1}, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	open, err := s.OpenInputs(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range open {
		got = append(got, fmt.Sprintf("%s:%d", in.ID, in.Ord))
	}
	if want := []string{"in_b:1", "in_a:2", "in_c:3", "in_e:4", "in_0:5"}; !slices.Equal(got, want) {
		t.Fatalf("open inputs %v, want %v", got, want)
	}
}
