package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// ParamsError says which field of the params did not fit.
type ParamsError struct {
	Field  string // dotted path of the field, "" for the params as a whole
	Reason string
}

func (e *ParamsError) Error() string {
	if e.Field == "" {
		return "invalid params: " + e.Reason
	}
	return fmt.Sprintf("invalid params: %s: %s", e.Field, e.Reason)
}

// Decode decodes JSON-RPC params into the struct pointed to by v. Keys
// match a field's json name exactly or its other spelling (snake_case for a
// camelCase name and back), never case-insensitively; unknown keys are
// ignored; absent params leave v as it is. Nested structs follow the same
// rules. A value of the wrong type is a *ParamsError naming the field.
func Decode(params json.RawMessage, v any) error {
	if len(bytes.TrimSpace(params)) == 0 {
		return nil
	}
	return decodeStruct(params, reflect.ValueOf(v).Elem(), "")
}

type field struct {
	index []int
	name  string // canonical json name
}

var fieldCache sync.Map // reflect.Type -> map[string]field

func fieldsOf(t reflect.Type) map[string]field {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]field)
	}
	m := map[string]field{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := strings.Split(sf.Tag.Get("json"), ",")[0]
		if sf.Anonymous && tag == "" && sf.Type.Kind() == reflect.Struct {
			// An embedded struct's members are the outer one's (as
			// encoding/json has them); the outer's own win.
			for name, f := range fieldsOf(sf.Type) {
				if _, own := m[name]; !own {
					m[name] = field{index: append([]int{i}, f.index...), name: f.name}
				}
			}
			continue
		}
		if tag == "" || tag == "-" || !sf.IsExported() {
			continue
		}
		f := field{index: sf.Index, name: tag}
		m[tag] = f
		if alt := snake(tag); alt != tag {
			m[alt] = f
		}
		if alt := camel(tag); alt != tag {
			m[alt] = f
		}
	}
	fieldCache.Store(t, m)
	return m
}

func decodeStruct(raw json.RawMessage, rv reflect.Value, path string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		what := "params"
		if path != "" {
			what = "value"
		}
		return &ParamsError{Field: path, Reason: what + " must be an object"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return &ParamsError{Field: path, Reason: "must be an object"}
	}
	fields := fieldsOf(rv.Type())
	for key, val := range obj {
		f, ok := fields[key]
		if !ok {
			continue
		}
		name := f.name
		if path != "" {
			name = path + "." + f.name
		}
		if err := decodeValue(val, rv.FieldByIndex(f.index), name); err != nil {
			return err
		}
	}
	return nil
}

func decodeValue(raw json.RawMessage, fv reflect.Value, name string) error {
	t := fv.Type()
	isNull := bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		if isNull {
			return nil
		}
		nv := reflect.New(t.Elem())
		if err := decodeStruct(raw, nv.Elem(), name); err != nil {
			return err
		}
		fv.Set(nv)
		return nil
	case t.Kind() == reflect.Struct && t != reflect.TypeFor[json.RawMessage]():
		return decodeStruct(raw, fv, name)
	}
	if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
		return &ParamsError{Field: name, Reason: "must be " + describe(t)}
	}
	return nil
}

func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a valid value"
}

// snake turns protocolVersion into protocol_version.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// camel turns keep_siblings into keepSiblings.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
