package store

import (
	"context"
	"database/sql"
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
