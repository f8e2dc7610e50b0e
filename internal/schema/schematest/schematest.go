// Package schematest validates the daemon's frames against the published
// schema (docs/protocol.schema.json), for tests that watch the wire.
package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Doc is a JSON Schema document, loaded (once) when first used, whose
// parts are compiled once each.
type Doc struct {
	path string
	once sync.Once
	c    *jsonschema.Compiler
	err  error

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// Load names a schema document by its path relative to the module root.
func Load(path ...string) *Doc {
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..", "..")
	return &Doc{path: filepath.Join(append([]string{root}, path...)...), compiled: map[string]*jsonschema.Schema{}}
}

// Compile returns the part of the document at pointer ("/events/plan").
func (d *Doc) Compile(t testing.TB, pointer string) *jsonschema.Schema {
	t.Helper()
	s, err := d.compile(pointer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (d *Doc) compile(pointer string) (*jsonschema.Schema, error) {
	d.once.Do(func() {
		f, err := os.Open(d.path)
		if err != nil {
			d.err = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			d.err = err
			return
		}
		d.c = jsonschema.NewCompiler()
		d.err = d.c.AddResource("doc.json", doc)
	})
	if d.err != nil {
		return nil, d.err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if s := d.compiled[pointer]; s != nil {
		return s, nil
	}
	s, err := d.c.Compile("doc.json#" + pointer)
	if err != nil {
		return nil, fmt.Errorf("compiling %s of %s: %w", pointer, d.path, err)
	}
	d.compiled[pointer] = s
	return s, nil
}

// Warm compiles every event's and method's schema of the daemon's
// document now: a test client that checks frames in its read loop must
// not stall there compiling (a daemon drops a client that makes no
// progress for its stall timeout). Call it from TestMain.
func Warm() error {
	b, err := os.ReadFile(ours.path)
	if err != nil {
		return err
	}
	var doc struct {
		Methods map[string]map[string]json.RawMessage
		Events  map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	for e := range doc.Events {
		if _, err := ours.compile("/events/" + e); err != nil {
			return err
		}
	}
	for m, parts := range doc.Methods {
		for part := range parts {
			if part == "params" || part == "result" {
				if _, err := ours.compile("/methods/" + escape(m) + "/" + part); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Validate reports (t.Errorf) raw when it is not valid against the part
// at pointer; what names the frame in the report.
func (d *Doc) Validate(t testing.TB, pointer, what string, raw []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Errorf("%s: not JSON: %v", what, err)
		return
	}
	if err := d.Compile(t, pointer).Validate(v); err != nil {
		t.Errorf("%s does not match the schema's %s: %v\n%s", what, pointer, err, raw)
	}
}

// ours is the daemon's published schema.
var ours = Load("docs", "protocol.schema.json")

func validate(t testing.TB, pointer string, raw []byte) {
	t.Helper()
	ours.Validate(t, pointer, "a frame", raw)
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
