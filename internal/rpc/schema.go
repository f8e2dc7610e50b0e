package rpc

import (
	"reflect"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/schema"
)

// clientMethods are what the daemon sends a client: its requests (a
// client answers those it declared a capability for) and its
// notifications (nil result).
var clientMethods = []schema.Method{
	{Name: protocol.MethodSessionChanged, Params: typeOf[protocol.SessionChanged]()},
	{Name: protocol.MethodSessionMCPChanged, Params: typeOf[protocol.SessionRef]()},
	{Name: protocol.MethodElicitationCreate, Params: typeOf[protocol.ElicitationParams](), Result: typeOf[protocol.ElicitationResult]()},
	{Name: protocol.MethodFSReadTextFile, Params: typeOf[protocol.FSReadParams](), Result: typeOf[protocol.FSReadResult]()},
	{Name: protocol.MethodFSWriteTextFile, Params: typeOf[protocol.FSWriteParams](), Result: typeOf[struct{}]()},
	{Name: protocol.MethodTerminalRun, Params: typeOf[protocol.TerminalRunParams](), Result: typeOf[protocol.TerminalRunResult]()},
	{Name: protocol.MethodTerminalCancel, Params: typeOf[protocol.TerminalCancelParams]()},
}

// Schema is the protocol's JSON Schema (docs/protocol.schema.json, and
// `zeroclaw schema`), written from the method table's types, the
// daemon's requests and notifications, and protocol.Events.
func Schema() ([]byte, error) {
	d := schema.Doc{
		Title:       "zeroclaw daemon protocol, version 1 (docs/protocol.md)",
		Header:      typeOf[protocol.EventHeader](),
		TypeMember:  "type",
		Extra:       map[string]reflect.Type{"cut": typeOf[protocol.CutInfo]()},
		EventMethod: protocol.MethodSessionUpdate,
	}
	table, _ := methodTable()
	for _, m := range table {
		d.Methods = append(d.Methods, schema.Method{Name: m.name, Params: m.params, Result: m.result})
	}
	d.Methods = append(d.Methods, clientMethods...)
	for _, e := range protocol.Events {
		d.Events = append(d.Events, schema.Event{Type: e.Type, Fields: e.Fields})
	}
	return schema.Generate(d)
}
