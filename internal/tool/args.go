package tool

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/schema"
)

// takes makes A, a struct, a tool's arguments. Embedded in the tool, it
// gives the tool's input schema, made from A (what Spec tells the
// model), and decodes a call's input into A (what Summary and Run read),
// so the contract is written once: a member the model is told of is a
// field the tool reads, and the other way round. A's fields carry the
// conventions of schema.Args: json tags name the members (omitempty:
// optional), jsonschema tags describe them, schema tags bound them.
type takes[A any] struct{}

// argSchemas holds each argument struct's schema once made. They are
// made when first asked for, not at start: a process that never shows
// its tools to a model (a CLI command, a client) never builds one.
var argSchemas sync.Map // reflect.Type → json.RawMessage

// schema is the tool's input schema. A struct whose tags schema.Args
// refuses panics: it is a programming error, which the tests' walk over
// every tool's schema finds first.
func (takes[A]) schema() json.RawMessage {
	t := reflect.TypeFor[A]()
	if s, ok := argSchemas.Load(t); ok {
		return s.(json.RawMessage)
	}
	s, err := schema.Args(t)
	if err != nil {
		panic("tool: the schema of " + t.String() + ": " + err.Error())
	}
	v, _ := argSchemas.LoadOrStore(t, s)
	return v.(json.RawMessage)
}

// args decodes a call's input into A: no input is no arguments, and a
// member A lacks is ignored (a model that adds one is not refused for
// it). On an error A holds what did decode: a summary shows that much,
// Run refuses the call.
func (takes[A]) args(input json.RawMessage) (A, error) {
	var a A
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(input, &a); err != nil {
		return a, fmt.Errorf("invalid arguments: %v", err)
	}
	return a, nil
}

// argsType is A, for the test that checks each tool's schema against
// its struct.
func (takes[A]) argsType() reflect.Type { return reflect.TypeFor[A]() }
