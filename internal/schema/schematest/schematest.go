// Package schematest validates the daemon's frames against the published
// schema (docs/protocol.schema.json), for tests that watch the wire.
package schematest

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

// schema compiles the part of the document at pointer ("/events/plan").
func schema(t testing.TB, pointer string) *jsonschema.Schema {
	t.Helper()
	once.Do(func() {
		_, here, _, _ := runtime.Caller(0)
		f, err := os.Open(filepath.Join(filepath.Dir(here), "..", "..", "..", "docs", "protocol.schema.json"))
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
		loadErr = compiler.AddResource("zeroclaw.json", doc)
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := compiled[pointer]; s != nil {
		return s
	}
	s, err := compiler.Compile("zeroclaw.json#" + pointer)
	if err != nil {
		t.Fatalf("compiling %s: %v", pointer, err)
	}
	compiled[pointer] = s
	return s
}

func validate(t testing.TB, pointer string, raw []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Errorf("%s: not JSON: %v", pointer, err)
		return
	}
	if err := schema(t, pointer).Validate(v); err != nil {
		t.Errorf("a frame does not match the schema's %s: %v\n%s", pointer, err, raw)
	}
}

// Event checks a session/update's params against its event type.
func Event(t testing.TB, params []byte) {
	t.Helper()
	var h struct{ Type string }
	json.Unmarshal(params, &h)
	validate(t, "/events/"+h.Type, params)
}

// Result checks a method's result.
func Result(t testing.TB, method string, result []byte) {
	t.Helper()
	validate(t, "/methods/"+escape(method)+"/result", result)
}

// Params checks the params of a method the daemon sends (a request or a
// notification).
func Params(t testing.TB, method string, params []byte) {
	t.Helper()
	validate(t, "/methods/"+escape(method)+"/params", params)
}

// escape makes a method name a JSON pointer token ("session/new" →
// "session~1new").
func escape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
