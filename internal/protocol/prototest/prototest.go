// Package prototest is test support for the readers of events: one
// event of every type of protocol.Events, each member set, for a test
// that feeds every type to a reader and checks that the reader shows it
// or names it among those it leaves out.
package prototest

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Samples returns one event of each type of protocol.Events, in that
// order, with every member set to a value that is not its zero. A string
// member holds its JSON name (so a tool_result's toolCallId is its
// tool_call's, and an approval_resolved's requestId its
// approval_request's), a number is 7, a bool true, a list has one
// element, and raw JSON is {"k":"v"}.
func Samples() []protocol.EventBody {
	out := make([]protocol.EventBody, len(protocol.Events))
	for i, e := range protocol.Events {
		v := reflect.New(e.Fields).Elem()
		fill(v, e.Type)
		out[i] = v.Interface().(protocol.EventBody)
	}
	return out
}

// Update is body as a session/update's params, as the daemon sends
// them: the header (session id, seq, type, turn id), then its members.
func Update(sessionID string, seq int64, body protocol.EventBody) json.RawMessage {
	head, _ := json.Marshal(protocol.EventHeader{SessionID: sessionID, Seq: seq, Type: body.EventType(), TurnID: "turn_1"})
	fields, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	raw := append(head[:len(head)-1:len(head)-1], ',')
	if string(fields) == "{}" {
		return append(raw[:len(raw)-1], '}')
	}
	return append(raw, fields[1:]...)
}

// Parsed is body as a reader receives it: Update, decoded.
func Parsed(sessionID string, seq int64, body protocol.EventBody) protocol.SessionUpdate {
	u, err := protocol.ParseUpdate(Update(sessionID, seq, body))
	if err != nil {
		panic(err)
	}
	return u
}

// fill sets every member of v (recursively) to a value that is not its
// zero; name is the member's JSON name.
func fill(v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(7)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), name)
		v.Set(p)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"k":"v"}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), name)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, name)
		fill(e, name)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if n == "" || n == "-" {
				n = f.Name
			}
			fill(v.Field(i), n)
		}
	case reflect.Interface:
		v.Set(reflect.ValueOf(name))
	}
}
