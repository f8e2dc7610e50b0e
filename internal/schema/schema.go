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
//
// Args writes the schema of one call's arguments (a tool's) from its Go
// struct, by the same conventions. A field's description is its
// `jsonschema` tag (github.com/google/jsonschema-go's convention), and
// further keywords are its `schema` tag, comma-separated: minimum=N,
// maximum=N, minLength=N, maxLength=N, minItems=N, maxItems=N and
// enum=A|B|C. An unknown keyword is an error, so a typo fails where the
// schema is made rather than reaching a model.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

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
	if err := keywords(t, s); err != nil {
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

// Args is the schema of a call's arguments: the object struct type t
// describes, one property per field in the fields' order (a model reads
// them in the order they were written), opened as the protocol's
// objects are. A field without omitempty is required. A pointer field
// is not nullable here: it is how a call's decoder tells a member left
// out from one given as zero or empty, and a model is not asked to send
// null. An object always has "properties", even none: some providers
// refuse an object schema without it.
func Args(t reflect.Type) (json.RawMessage, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema.Args: %s is not a struct", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := keywords(t, s); err != nil {
		return nil, err
	}
	plain(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return json.Marshal(s)
}

// plain makes s and what it holds take no null and allow members it
// does not name (Args's conventions).
func plain(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() {
		s.AdditionalProperties = nil // false: closed
	}
	for _, p := range s.Properties {
		plain(p)
	}
	plain(s.Items)
}

// keywords sets on s, the schema inferred from t, what the `schema`
// tags of t's fields (and of the structs within them) say.
func keywords(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return keywords(t.Elem(), s.Items)
	case reflect.Struct:
	default:
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := s.Properties[name]
		if p == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := keyword(p, tag); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
		}
		if err := keywords(f.Type, p); err != nil {
			return err
		}
	}
	return nil
}

// keyword sets the keywords of one `schema` tag on p.
func keyword(p *jsonschema.Schema, tag string) error {
	for _, kv := range strings.Split(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return fmt.Errorf("schema tag %q: %q is not keyword=value", tag, kv)
		}
		var err error
		number := func() *float64 {
			var f float64
			f, err = strconv.ParseFloat(v, 64)
			return &f
		}
		count := func() *int {
			var n int
			n, err = strconv.Atoi(v)
			return &n
		}
		switch k {
		case "minimum":
			p.Minimum = number()
		case "maximum":
			p.Maximum = number()
		case "minLength":
			p.MinLength = count()
		case "maxLength":
			p.MaxLength = count()
		case "minItems":
			p.MinItems = count()
		case "maxItems":
			p.MaxItems = count()
		case "enum":
			if p.Type != "string" && !slices.Contains(p.Types, "string") {
				return fmt.Errorf("schema tag %q: enum is for strings", tag)
			}
			p.Enum = nil
			for _, e := range strings.Split(v, "|") {
				p.Enum = append(p.Enum, e)
			}
		default:
			return fmt.Errorf("schema tag %q: unknown keyword %q", tag, k)
		}
		if err != nil {
			return fmt.Errorf("schema tag %q: %s: %w", tag, k, err)
		}
	}
	return nil
}
