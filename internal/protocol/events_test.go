package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fill sets every member of v (recursively) to a value that is not its
// zero, so a member a reader would lose shows as a difference.
func fill(v reflect.Value, seed string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(seed + "<\"é\">")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(len(seed)) + 7)
	case reflect.Float64:
		v.SetFloat(float64(len(seed)) + 0.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), seed)
		v.Set(p)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"k":[1,"` + seed + `"]}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), seed+"0")
		fill(s.Index(1), seed+"1")
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), seed+v.Type().Field(i).Name)
		}
	}
}

// Every event type round-trips: its own type, encoded as the daemon
// sends it (the header, then its members), comes back from ParseUpdate
// as the same type with every member equal.
func TestEveryEventRoundTrips(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Events {
		if seen[e.Type] {
			t.Errorf("%s: listed twice", e.Type)
		}
		seen[e.Type] = true
		v := reflect.New(e.Fields).Elem()
		fill(v, e.Type)
		body := v.Interface().(EventBody)
		if body.EventType() != e.Type {
			t.Errorf("%s: its type says %s", e.Type, body.EventType())
		}
		fields, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		head, _ := json.Marshal(EventHeader{SessionID: "s1", Seq: 42, Type: e.Type, TurnID: "turn_ab"})
		raw := append(head[:len(head)-1:len(head)-1], ',')
		raw = append(raw, fields[1:]...)
		u, err := ParseUpdate(raw)
		if err != nil {
			t.Errorf("%s: %v", e.Type, err)
			continue
		}
		if u.SessionID != "s1" || u.Seq != 42 || u.Type != e.Type || u.TurnID != "turn_ab" || u.Cut != nil {
			t.Errorf("%s: header %+v", e.Type, u.EventHeader)
		}
		if !reflect.DeepEqual(u.Event, body) {
			t.Errorf("%s: got back\n%#v\nwant\n%#v", e.Type, u.Event, body)
		}
	}
	if len(EventTypes) != len(Events) {
		t.Errorf("EventTypes has %d of %d", len(EventTypes), len(Events))
	}
}

// An event of a type this build does not know is kept, not an error; a
// member of the wrong JSON type makes an UndecodableEvent that names the
// event and keeps its members; a header that does not decode is an
// error; a cut event says so.
func TestParseUpdateEdges(t *testing.T) {
	u, err := ParseUpdate([]byte(`{"sessionId":"s","seq":3,"type":"from_the_future","x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if x, ok := u.Event.(UnknownEvent); !ok || x.Type != "from_the_future" || !strings.Contains(string(x.Fields), `"x":1`) {
		t.Errorf("unknown: %#v", u.Event)
	}
	u, err = ParseUpdate([]byte(`{"sessionId":"s","seq":4,"type":"hook","error":{"code":1}}`))
	if x, ok := u.Event.(UndecodableEvent); err != nil || !ok || u.Seq != 4 || x.Type != "hook" || !strings.Contains(x.Err, "hook (seq 4)") || !strings.Contains(string(x.Fields), `"error":{"code":1}`) {
		t.Errorf("a hook's error as an object: %#v %v", u, err)
	}
	if _, err := ParseUpdate([]byte(`{"sessionId":"s","seq":"x"}`)); err == nil {
		t.Error("a seq that is a string was taken")
	}
	u, err = ParseUpdate([]byte(`{"sessionId":"s","seq":5,"type":"tool_result","rawOutput":"abc…","cut":{"paths":["rawOutput"],"originalBytes":9000000}}`))
	if err != nil || u.Cut == nil || u.Cut.OriginalBytes != 9000000 || u.Event.(ToolResultEvent).RawOutput != "abc…" {
		t.Errorf("cut: %+v %v", u, err)
	}
}
