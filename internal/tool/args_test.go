package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// everyTool is every tool of the package: the built-ins, the goal's and
// the plan mode's.
func everyTool() []Tool {
	return append(append(Builtins(), GoalTools...), ExitPlan)
}

// agentsTasks is a Tasks with agents, for the task tool's SpecFor.
type agentsTasks struct{ Tasks }

func (agentsTasks) Agents() []TaskAgent {
	return []TaskAgent{{Name: "explore", Description: "reads and searches"}, {Name: "plain"}}
}

// Every tool's schema, as the model is shown it (the task tool's with
// the session's agents too), agrees with the struct its Summary and Run
// decode: each member is a field and each field a member, of the same
// JSON type, required exactly when the field is not omitempty; an
// example call that uses every member passes the schema and decodes
// into the struct with unknown members refused.
func TestEveryToolsSchemaIsItsArgumentStruct(t *testing.T) {
	for _, tl := range everyTool() {
		name := tl.Spec().Name
		at, ok := tl.(interface{ argsType() reflect.Type })
		if !ok {
			t.Errorf("%s: declares no argument struct (embed takes[Args])", name)
			continue
		}
		schemas := map[string]json.RawMessage{"Spec": tl.Spec().Schema}
		if sf, ok := tl.(SpecFor); ok {
			schemas["SpecFor"] = sf.SpecFor(&Env{Tasks: agentsTasks{}}).Schema
		}
		for which, raw := range schemas {
			if err := agrees(raw, at.argsType()); err != nil {
				t.Errorf("%s (%s): %v\nschema: %s", name, which, err, raw)
			}
		}
	}
}

// agrees checks raw, a tool's schema, against the argument struct t.
func agrees(raw json.RawMessage, t reflect.Type) error {
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	if err := agreeType("", s, t); err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if err := c.AddResource("args.json", doc); err != nil {
		return err
	}
	compiled, err := c.Compile("args.json")
	if err != nil {
		return fmt.Errorf("not a JSON Schema: %v", err)
	}
	ex := example(s)
	if err := compiled.Validate(ex); err != nil {
		return fmt.Errorf("the example %v does not pass the schema: %v", ex, err)
	}
	b, _ := json.Marshal(ex)
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(reflect.New(t).Interface()); err != nil {
		return fmt.Errorf("the example %s does not decode into %s: %v", b, t, err)
	}
	return nil
}

// jsonType is the JSON Schema type of a Go kind.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct:
		return "object"
	}
	return "?" + t.Kind().String()
}

// agreeType checks the schema s at path against the Go type t.
func agreeType(path string, s map[string]any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if want := jsonType(t); s["type"] != want {
		return fmt.Errorf("%s: the schema says type %v, the struct %s (%s)", or(path), s["type"], want, t)
	}
	if _, ok := s["enum"]; ok && t.Kind() != reflect.String {
		return fmt.Errorf("%s: an enum on a %s", or(path), t)
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		items, ok := s["items"].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: an array without items", or(path))
		}
		return agreeType(path+"[]", items, t.Elem())
	case reflect.Struct:
	default:
		return nil
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s: an object without properties", or(path))
	}
	var required []string
	rs, _ := s["required"].([]any)
	for _, r := range rs {
		required = append(required, r.(string))
	}
	fields := map[string]bool{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return fmt.Errorf("%s.%s: no json name (the model's member would match it by case folding only)", or(path), f.Name)
		}
		fields[name] = true
		p, ok := props[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: field %s (%s) is not in the schema", or(path), f.Name, name)
		}
		optional := slices.Contains(strings.Split(opts, ","), "omitempty")
		if req := slices.Contains(required, name); optional == req {
			return fmt.Errorf("%s.%s: required in the schema is %v, but the field's omitempty is %v", or(path), name, req, optional)
		}
		if err := agreeType(path+"."+name, p, f.Type); err != nil {
			return err
		}
	}
	for name := range props {
		if !fields[name] {
			return fmt.Errorf("%s: member %s is no field of %s", or(path), name, t)
		}
	}
	for _, name := range required {
		if !fields[name] {
			return fmt.Errorf("%s: required member %s is no field of %s", or(path), name, t)
		}
	}
	return nil
}

func or(path string) string {
	if path == "" {
		return "the arguments"
	}
	return strings.TrimPrefix(path, ".")
}

// example is a value the schema s describes, with every member given:
// an enum's first value, a number at its minimum (or 1), as many items
// as the minimum asks (or 1).
func example(s map[string]any) any {
	if e, ok := s["enum"].([]any); ok {
		return e[0]
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		for k, p := range s["properties"].(map[string]any) {
			out[k] = example(p.(map[string]any))
		}
		return out
	case "array":
		n := 1
		if m, ok := s["minItems"].(float64); ok {
			n = int(m)
		}
		out := []any{}
		for range n {
			out = append(out, example(s["items"].(map[string]any)))
		}
		return out
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		return 1.0
	case "boolean":
		return true
	}
	return "x"
}

// A struct and a schema that disagree are told apart: the check above
// is not one that passes whatever it is given.
func TestArgumentCheckFindsDisagreement(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Limit int    `json:"limit,omitempty"`
		Tags  []struct {
			Name string `json:"name"`
		} `json:"tags,omitempty"`
	}
	good := `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"required":["path"]}`
	if err := agrees(json.RawMessage(good), reflect.TypeFor[args]()); err != nil {
		t.Fatalf("an agreeing schema is refused: %v", err)
	}
	for what, bad := range map[string]string{
		"a member no field":     `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"offset":{"type":"integer"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"required":["path"]}`,
		"a field no member":     `{"type":"object","properties":{"path":{"type":"string"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"required":["path"]}`,
		"optional made needed":  `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"required":["path","limit"]}`,
		"required made unsaid":  `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}`,
		"a type that differs":   `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"string"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"required":["path"]}`,
		"a nested member extra": `{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"colour":{"type":"string"}},"required":["name"]}}},"required":["path"]}`,
	} {
		if err := agrees(json.RawMessage(bad), reflect.TypeFor[args]()); err == nil {
			t.Errorf("%s: not found", what)
		}
	}
}

// A call's input is decoded only through takes.args: no Summary, Run or
// Effect reads it with a struct of its own, which could drift from the
// schema. (Title reads the few members that name any tool's call, a
// built-in's or an MCP server's, and is not a tool's reading.)
func TestOnlyTheArgumentStructDecodesACall(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			where := fn.Name.Name
			if fn.Recv != nil {
				where = fmt.Sprintf("%s.%s", types(fn.Recv.List[0].Type), fn.Name.Name)
			}
			if where == "takes.args" || where == "Title" {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				callee := ""
				switch f := call.Fun.(type) {
				case *ast.Ident:
					callee = f.Name
				case *ast.SelectorExpr:
					if x, ok := f.X.(*ast.Ident); ok {
						callee = x.Name + "." + f.Sel.Name
					}
				}
				if arg, ok := call.Args[0].(*ast.Ident); ok && arg.Name == "input" && (callee == "decode" || callee == "json.Unmarshal") {
					t.Errorf("%s: %s decodes a call's input with %s: use the tool's t.args", fset.Position(call.Pos()), where, callee)
				}
				return true
			})
		}
	}
}

// types names a receiver's type, without its pointer or type parameters.
func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return types(e.X)
	case *ast.IndexExpr:
		return types(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
