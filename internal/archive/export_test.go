package archive

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/protocol/prototest"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Every event type of protocol.Events is either shown in the export
// (the document changes) or named in exportLeavesOut (and then the
// document does not change): a new event type with neither fails here.
func TestExportShowsOrLeavesOutEveryEvent(t *testing.T) {
	x := &exportBuilder{doc: &exportDoc{}, started: map[int64]int64{}, calls: map[string]*exportItem{}}
	// A turn to put them in (a context_usage is the turn's).
	x.add(prototest.Parsed("s", 1, protocol.UserMessageEvent{Text: "first"}))
	doc := func() string {
		b, err := json.Marshal(x.doc)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for i, ev := range prototest.Samples() {
		typ := ev.EventType()
		before := doc()
		x.add(prototest.Parsed("s", int64(i+2), ev))
		shown := doc() != before
		leftOut := slices.Contains(exportLeavesOut, typ)
		switch {
		case leftOut && shown:
			t.Errorf("%s: named as left out, yet the export changed", typ)
		case !leftOut && !shown:
			t.Errorf("%s: the export neither shows it nor names it in exportLeavesOut", typ)
		}
	}
	for _, typ := range exportLeavesOut {
		if !slices.Contains(protocol.EventTypes, typ) {
			t.Errorf("exportLeavesOut names %q, not an event type", typ)
		}
	}
}

// A stored event that cannot be decoded (a member of the wrong JSON
// type; a body that is not even an object) does not abort an export or a
// fork: the export says it was there and could not be read, with the
// turn around it whole, and the fork copies it.
func TestUndecodableEventsExportAndFork(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "z.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(&store.Session{ID: "s1", AgentAlias: "default", Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	events := []store.Event{
		{Seq: 1, Type: protocol.EventUserMessage, Body: prototest.Update("s1", 1, protocol.UserMessageEvent{Text: "hello"})},
		{Seq: 2, Type: protocol.EventHook, Body: []byte(`{"sessionId":"s1","seq":2,"type":"hook","turnId":"turn_1","error":{"code":1}}`)},
		{Seq: 3, Type: protocol.EventAgentMessageChunk, Body: []byte(`not json`)},
		{Seq: 4, Type: protocol.EventAgentMessageChunk, Body: prototest.Update("s1", 4, protocol.AgentMessageChunkEvent{Text: "the reply"})},
		{Seq: 5, Type: protocol.EventTurnComplete, Body: prototest.Update("s1", 5, protocol.TurnCompleteEvent{Outcome: "completed", StopReason: "end_turn"})},
	}
	for _, ev := range events {
		st.AppendEvent("s1", ev, func(err error) {
			if err != nil {
				t.Error(err)
			}
		})
	}
	if err := st.Sync(); err != nil {
		t.Fatal(err)
	}
	a := &Archive{Store: st, Live: func(string) (Live, bool) { return Live{}, false }, Changed: func(string) {}, Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	res, err := a.Export(ctx, protocol.SessionExportParams{SessionID: "s1", Format: "markdown"})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	for _, want := range []string{"> hello", "*event 2 (hook) could not be read: hook (seq 2): json: cannot unmarshal object",
		"*event 3 (agent_message_chunk) could not be read: ", "the reply", "*Turn completed: end_turn*"} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("the export lacks %q:\n%s", want, res.Content)
		}
	}
	fork, err := a.Fork(ctx, "", protocol.SessionForkParams{SessionID: "s1"})
	if err != nil {
		t.Fatalf("fork: %v", err)
	}
	copied, err := st.Events(ctx, fork.SessionID, 0, 0, 0)
	if err != nil || len(copied) != len(events) {
		t.Fatalf("the fork holds %d events (%v), want %d", len(copied), err, len(events))
	}
	if !strings.Contains(string(copied[1].Body), `"error":{"code":1}`) || string(copied[2].Body) != "not json" {
		t.Errorf("the undecodable events, forked: %s / %s", copied[1].Body, copied[2].Body)
	}
}
