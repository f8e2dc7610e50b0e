// Package schema writes a JSON-RPC protocol's JSON Schema (draft
// 2020-12) from the Go types its methods and events are encoded from:
// one definition per type under $defs, a "methods" map from each method
// to its params and result, and an "events" map from each event type to
// the whole of its notification's params. Types are inferred by
// github.com/google/jsonschema-go (a field without omitempty is
// required; a pointer may be null, a slice may not: a list is always a
// list), then opened: objects
// allow members the schema does not name, so a client generated from it
// keeps working when the protocol adds one.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Method is one method: the types of its params and result (nil params:
// an object of no given members; nil result: a notification).
type Method struct {
	Name           string
	Params, Result reflect.Type
}

// Event is one event type of a notification whose params are Header's
// members, Type set to the event's name, and the members of Fields.
type Event struct {
	Type   string
	Fields reflect.Type
}

// Doc describes what is written.
type Doc struct {
	Title   string
	Methods []Method
	// Header is the members every event has (Type names the one that
	// holds the event's type); Extra, members any event may also have.
	Header     reflect.Type
	TypeMember string
	Extra      map[string]reflect.Type
	Events     []Event
	// EventMethod is the notification whose params are an event.
	EventMethod string
}

var raw = reflect.TypeFor[json.RawMessage]()

// infer is a type's schema as plain JSON values, opened.
func infer(t reflect.Type) (map[string]any, error) {
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{raw: {}}})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	open(v)
	lists(v)
	return v, nil
}

// lists makes every list a list: a member that is a Go slice is an
// array, never null (present as [] when it has nothing; a member that
// may be absent is optional instead).
func lists(v any) {
	switch v := v.(type) {
	case map[string]any:
		if t, ok := v["type"].([]any); ok && len(t) == 2 && t[0] == "null" && t[1] == "array" {
			v["type"] = "array"
		}
		for _, c := range v {
			lists(c)
		}
	case []any:
		for _, c := range v {
			lists(c)
		}
	}
}

// open drops "additionalProperties": false everywhere.
func open(v any) {
	switch v := v.(type) {
	case map[string]any:
		if ap, ok := v["additionalProperties"].(bool); ok && !ap {
			delete(v, "additionalProperties")
		}
		for _, c := range v {
			open(c)
		}
	case []any:
		for _, c := range v {
			open(c)
		}
	}
}

// Generate writes the schema, indented, ending with a newline.
func Generate(d Doc) ([]byte, error) {
	defs := map[string]any{}
	ref := func(t reflect.Type) (any, error) {
		if t == nil {
			return map[string]any{"type": "object"}, nil
		}
		name := t.Name()
		if name == "" || t.PkgPath() == "" {
			return infer(t)
		}
		if _, ok := defs[name]; !ok {
			s, err := infer(t)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			defs[name] = s
		}
		return map[string]any{"$ref": "#/$defs/" + name}, nil
	}
	methods := map[string]any{}
	for _, m := range d.Methods {
		p, err := ref(m.Params)
		if err != nil {
			return nil, err
		}
		entry := map[string]any{"params": p}
		if m.Result != nil {
			r, err := ref(m.Result)
			if err != nil {
				return nil, err
			}
			entry["result"] = r
		} else {
			entry["notification"] = true
		}
		methods[m.Name] = entry
	}
	header, err := infer(d.Header)
	if err != nil {
		return nil, err
	}
	events := map[string]any{}
	var oneOf []any
	for _, e := range d.Events {
		fields, err := infer(e.Fields)
		if err != nil {
			return nil, fmt.Errorf("event %s: %w", e.Type, err)
		}
		props := map[string]any{}
		for k, v := range header["properties"].(map[string]any) {
			props[k] = v
		}
		props[d.TypeMember] = map[string]any{"const": e.Type}
		for k, t := range d.Extra {
			s, err := infer(t)
			if err != nil {
				return nil, err
			}
			props[k] = s
		}
		required := anyStrings(header["required"])
		if fp, ok := fields["properties"].(map[string]any); ok {
			for k, v := range fp {
				props[k] = v
			}
			required = append(required, anyStrings(fields["required"])...)
		}
		slices.Sort(required)
		name := e.Type + "_event"
		defs[name] = map[string]any{"type": "object", "properties": props, "required": required}
		events[e.Type] = map[string]any{"$ref": "#/$defs/" + name}
		oneOf = append(oneOf, map[string]any{"$ref": "#/$defs/" + name})
	}
	defs["Event"] = map[string]any{"oneOf": oneOf}
	if d.EventMethod != "" {
		methods[d.EventMethod] = map[string]any{"params": map[string]any{"$ref": "#/$defs/Event"}, "notification": true}
	}
	doc := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title":   d.Title,
		"methods": methods,
		"events":  events,
		"$defs":   defs,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func anyStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, s := range l {
			out = append(out, s.(string))
		}
	}
	return out
}
