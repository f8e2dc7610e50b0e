package form

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The conformance suite's form (SEP-1034): five typed fields, each with a
// default.
const defaults = `{"type":"object","properties":{
 "name":{"type":"string","description":"User name","default":"John Doe"},
 "age":{"type":"integer","description":"User age","default":30},
 "score":{"type":"number","description":"User score","default":95.5},
 "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
 "verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`

// ask runs Ask on the given lines and returns what was said and the
// answer, as JSON.
func ask(t *testing.T, schema string, lines ...string) (said, action, content string) {
	t.Helper()
	f, err := Parse(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	act, c := f.Ask("Q", func(s string) { out = append(out, s) }, func(p string) (string, error) {
		out = append(out, p)
		if len(lines) == 0 {
			return "", errors.New("EOF")
		}
		l := lines[0]
		lines = lines[1:]
		return l, nil
	})
	b, _ := json.Marshal(c)
	return strings.Join(out, "\n"), act, string(b)
}

func TestEnterTakesEachDefaultTyped(t *testing.T) {
	said, action, content := ask(t, defaults, "", "", "", "", "")
	if action != Accept || content != `{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}` {
		t.Fatalf("%s %s", action, content)
	}
	// In the schema's order, each with its name, description, type and default.
	order := []string{"name: User name", "(text; Enter: John Doe; /decline, /cancel) > ", "age: User age", "(whole number; Enter: 30;",
		"score: User score", "(number; Enter: 95.5;", "status: User status", "    1) active", "    3) pending",
		"(a number or a value; Enter: active;", "verified: Verification status", "(y/n; Enter: y;"}
	at := 0
	for _, w := range order {
		i := strings.Index(said[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, said)
		}
		at += i
	}
}

func TestAnswersAreTypedAndChecked(t *testing.T) {
	said, action, content := ask(t, defaults, "Ada", "thirty", "41", "1e2", "3", "maybe", "n")
	if action != Accept || content != `{"age":41,"name":"Ada","score":100,"status":"pending","verified":false}` {
		t.Fatalf("%s %s\n%s", action, content, said)
	}
	for _, w := range []string{`"thirty" is not a whole number`, `"maybe": answer y or n`} {
		if !strings.Contains(said, w) {
			t.Fatalf("%q not said:\n%s", w, said)
		}
	}
}

func TestRequiredBoundsAndChoices(t *testing.T) {
	schema := `{"type":"object","properties":{
	 "n":{"type":"integer","title":"How many","minimum":1,"maximum":5},
	 "email":{"type":"string","format":"email"},
	 "colors":{"type":"array","items":{"anyOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},"maxItems":1},
	 "note":{"type":"string"}},"required":["n","email"]}`
	said, action, content := ask(t, schema, "", "9", "2", "nope", "a@b.example", "1 2", "green", "")
	if action != Accept || content != `{"colors":["g"],"email":"a@b.example","n":2}` {
		t.Fatalf("%s %s\n%s", action, content, said)
	}
	for _, w := range []string{"How many [n]", "(whole number; 1 to 5; required;", "this field is required",
		"9 is above the maximum, 5", `"nope" is not an email address`, "pick at most 1", "(text; Enter: skip;"} {
		if !strings.Contains(said, w) {
			t.Fatalf("%q not said:\n%s", w, said)
		}
	}
}

func TestDeclineAndCancelAreTheirOwnAnswers(t *testing.T) {
	if _, action, _ := ask(t, defaults, "x", "/decline"); action != Decline {
		t.Fatal(action)
	}
	if _, action, _ := ask(t, defaults, "/cancel"); action != Cancel {
		t.Fatal(action)
	}
	if _, action, _ := ask(t, defaults, "x"); action != Cancel { // the input ended
		t.Fatal(action)
	}
}

func TestCompleteTypesFillsAndRefuses(t *testing.T) {
	f, err := Parse(json.RawMessage(defaults))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Complete(map[string]any{"score": "1", "age": 7.0, "other": 1.0})
	b, _ := json.Marshal(got)
	if err != nil || string(b) != `{"age":7,"name":"John Doe","score":1,"status":"active","verified":true}` {
		t.Fatalf("%s %v", b, err)
	}
	for in, want := range map[string]string{
		`{"age":1.5}`:        "age: 1.5 is not a whole number",
		`{"status":"gone"}`:  `status: "gone" is not one of the choices`,
		`{"verified":"yes"}`: "verified: a boolean is asked, not text",
		`{"name":3}`:         "name: text is asked, not a number",
	} {
		var c map[string]any
		json.Unmarshal([]byte(in), &c)
		if _, err := f.Complete(c); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", in, err, want)
		}
	}
	if d := f.Defaults(); !reflect.DeepEqual(d["verified"], true) || len(d) != 5 {
		t.Fatalf("defaults: %v", d)
	}
	req, _ := Parse(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
	if req.Defaults() != nil {
		t.Fatal("a required field without a default has no default answer")
	}
}

func TestSchemasAFormCannotAsk(t *testing.T) {
	for _, s := range []string{`{"type":"array"}`, `{"type":"object","properties":{"x":{"type":"object"}}}`,
		`{"type":"object","properties":{"x":{"type":"integer","default":"a"}}}`, `{"type":"object","properties":[1]}`} {
		if _, err := Parse(json.RawMessage(s)); err == nil {
			t.Errorf("%s: parsed", s)
		}
	}
	if f, err := Parse(nil); err != nil || len(f.Fields) != 0 {
		t.Fatal(f, err)
	}
}
