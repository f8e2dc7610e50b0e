// Package acptest validates ACP messages against the ACP v1 JSON Schema
// (internal/acp/testdata/schema.v1.json), for the tests of the stdio
// bridge and of ACP over the gateway's WebSocket.
package acptest

import (
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zeroclaw/zeroclaw/internal/schema/schematest"
)

// acp is the ACP v1 schema (internal/acp/testdata/schema.v1.json).
var acp = schematest.Load("internal", "acp", "testdata", "schema.v1.json")

// Schema returns the compiled definition def ("SessionNotification").
func Schema(t testing.TB, def string) *jsonschema.Schema {
	t.Helper()
	return acp.Compile(t, "/$defs/"+def)
}

// Validate reports (t.Errorf) a message that is not a valid def.
func Validate(t testing.TB, def string, raw json.RawMessage) {
	t.Helper()
	acp.Validate(t, "/$defs/"+def, "the bridge sent an invalid "+def, raw)
}

// ResponseDefs names the schema definition of each method's result.
var ResponseDefs = map[string]string{
	"initialize": "InitializeResponse", "session/new": "NewSessionResponse", "session/load": "LoadSessionResponse",
	"session/prompt": "PromptResponse", "session/list": "ListSessionsResponse", "session/close": "CloseSessionResponse",
	"session/resume": "ResumeSessionResponse", "session/set_config_option": "SetSessionConfigOptionResponse",
	"session/delete": "DeleteSessionResponse",
}
