// Package acptest validates ACP messages against the ACP v1 JSON Schema
// (internal/acp/testdata/schema.v1.json), for the tests of the stdio
// bridge and of ACP over the gateway's WebSocket.
package acptest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	once     sync.Once
	compiler *jsonschema.Compiler
	loadErr  error
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// Schema returns the compiled definition def ("SessionNotification").
func Schema(t testing.TB, def string) *jsonschema.Schema {
	t.Helper()
	once.Do(func() {
		_, here, _, _ := runtime.Caller(0)
		f, err := os.Open(filepath.Join(filepath.Dir(here), "..", "testdata", "schema.v1.json"))
		if err != nil {
			loadErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			loadErr = err
			return
		}
		compiler = jsonschema.NewCompiler()
		loadErr = compiler.AddResource("acp.json", doc)
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := compiled[def]; s != nil {
		return s
	}
	s, err := compiler.Compile("acp.json#/$defs/" + def)
	if err != nil {
		t.Fatal(err)
	}
	compiled[def] = s
	return s
}

// Validate reports (t.Errorf) a message that is not a valid def.
func Validate(t testing.TB, def string, raw json.RawMessage) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Errorf("%s: not JSON: %v", def, err)
		return
	}
	if err := Schema(t, def).Validate(v); err != nil {
		t.Errorf("the bridge sent an invalid %s: %s\n%v", def, raw, err)
	}
}

// ResponseDefs names the schema definition of each method's result.
var ResponseDefs = map[string]string{
	"initialize": "InitializeResponse", "session/new": "NewSessionResponse", "session/load": "LoadSessionResponse",
	"session/prompt": "PromptResponse", "session/list": "ListSessionsResponse", "session/close": "CloseSessionResponse",
	"session/resume": "ResumeSessionResponse", "session/set_config_option": "SetSessionConfigOptionResponse",
	"session/delete": "DeleteSessionResponse",
}
