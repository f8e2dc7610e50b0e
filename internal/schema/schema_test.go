package schema

import (
	"reflect"
	"strings"
	"testing"
)

// A call's arguments are written in their fields' order, described and
// bounded by their tags; a pointer is optional or required as its tag
// says, never null; a struct of no fields still has its properties.
func TestArgs(t *testing.T) {
	type item struct {
		Name string `json:"name" jsonschema:"its name"`
		Kind string `json:"kind,omitempty" schema:"enum=a|b"`
	}
	type args struct {
		Path  string  `json:"path" jsonschema:"where, relative to the session directory"`
		Limit *int    `json:"limit,omitempty" schema:"minimum=1,maximum=10"`
		New   *string `json:"new"`
		Items []item  `json:"items,omitempty" schema:"minItems=2"`
	}
	got, err := Args(reflect.TypeFor[args]())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"path":{"type":"string","description":"where, relative to the session directory"},"limit":{"type":"integer","minimum":1,"maximum":10},"new":{"type":"string"},"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","description":"its name"},"kind":{"type":"string","enum":["a","b"]}},"required":["name"]},"minItems":2}},"required":["path","new"]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	empty, err := Args(reflect.TypeFor[struct{}]())
	if err != nil || string(empty) != `{"type":"object","properties":{}}` {
		t.Errorf("no arguments: %s, %v", empty, err)
	}
}

// A tag Args cannot honour is an error where the schema is made, not a
// keyword a model is shown or one silently dropped.
func TestArgsRefusesBadTags(t *testing.T) {
	for what, typ := range map[string]reflect.Type{
		"unknown keyword": reflect.TypeFor[struct {
			N int `json:"n" schema:"minimun=1"`
		}](),
		"no value": reflect.TypeFor[struct {
			N int `json:"n" schema:"minimum"`
		}](),
		"not a number": reflect.TypeFor[struct {
			N int `json:"n" schema:"maximum=ten"`
		}](),
		"enum of integers": reflect.TypeFor[struct {
			N int `json:"n" schema:"enum=1|2"`
		}](),
		"nested": reflect.TypeFor[struct {
			L []struct {
				S string `json:"s" schema:"pattern=x"`
			} `json:"l"`
		}](),
		"not a struct": reflect.TypeFor[[]string](),
	} {
		if s, err := Args(typ); err == nil {
			t.Errorf("%s: made %s", what, s)
		} else if !strings.Contains(err.Error(), "schema") {
			t.Errorf("%s: %v", what, err)
		}
	}
}
