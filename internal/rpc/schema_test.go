package rpc

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// docs/protocol.schema.json is the schema the code writes: regenerate it
// with `go run ./cmd/zeroclaw schema > docs/protocol.schema.json`.
func TestSchemaIsCurrent(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../docs/protocol.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("docs/protocol.schema.json is stale: run go run ./cmd/zeroclaw schema > docs/protocol.schema.json")
	}
	var doc struct {
		Methods map[string]struct {
			Params, Result json.RawMessage
			Notification   bool
		}
		Events map[string]json.RawMessage
		Defs   map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	// Every method initialize lists has params and a result; every event
	// type the capabilities list is described.
	for _, m := range Methods() {
		if e, ok := doc.Methods[m]; !ok || e.Params == nil || e.Result == nil {
			t.Errorf("method %s: %+v", m, e)
		}
	}
	for _, m := range []string{protocol.MethodSessionUpdate, protocol.MethodSessionChanged, protocol.MethodElicitationCreate, protocol.MethodTerminalRun} {
		if _, ok := doc.Methods[m]; !ok {
			t.Errorf("the daemon's %s is missing", m)
		}
	}
	if !doc.Methods[protocol.MethodSessionUpdate].Notification || doc.Methods[protocol.MethodElicitationCreate].Result == nil {
		t.Error("notifications and requests of the daemon told apart wrongly")
	}
	for _, e := range protocol.EventTypes {
		if doc.Events[e] == nil || !slices.Contains(protocol.EventTypes, e) {
			t.Errorf("event %s is not described", e)
		}
	}
}
