// Package form reads the schema of an elicitation (MCP's restricted
// JSON Schema: a flat object of strings, numbers, integers, booleans,
// single and multiple choices) as a form: its fields in the schema's
// order, each with its title, description, type, choices, bounds and
// default; an answer typed as one line is read into the field's JSON
// type and checked, and a whole answer (from any client) is checked
// and completed with the defaults before it is sent. Every client that
// asks a person (zeroclaw prompt, chat, the ACP bridge, the daemon
// itself) goes through it, so a form reads the same everywhere.
package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Kinds of field.
const (
	Text    = "string"
	Integer = "integer"
	Number  = "number"
	Boolean = "boolean"
	Choice  = "choice" // one of Choices
	Choices = "array"  // several of Choices
)

// Option is one choice of a field: the value sent and what a person
// reads.
type Option struct {
	Value string
	Title string
}

// Field is one field of a form.
type Field struct {
	Name        string
	Title       string
	Description string
	Kind        string
	Format      string // of a Text: email, uri, date, date-time
	Options     []Option
	Required    bool
	Default     any // typed as the field is (nil: none)
	Min, Max    *float64
	MinLen      *int // of a Text; of Choices, the number picked
	MaxLen      *int
}

// Form is a parsed schema.
type Form struct {
	Fields []Field
}

// Parse reads a requested schema. A schema that is not an object of
// such fields is an error; an empty or null one is a form with no
// fields.
func Parse(raw json.RawMessage) (*Form, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return &Form{}, nil
	}
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("the requested schema: %w", err)
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("the requested schema is a %s, not an object", top.Type)
	}
	names, props, err := ordered(top.Properties)
	if err != nil {
		return nil, err
	}
	f := &Form{}
	for i, name := range names {
		fd, err := field(name, props[i])
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name, err)
		}
		for _, r := range top.Required {
			if r == name {
				fd.Required = true
			}
		}
		f.Fields = append(f.Fields, fd)
	}
	return f, nil
}

// ordered reads an object's members in the order they are written
// (a form asks in the schema's order, not a map's).
func ordered(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("the requested schema's properties are not an object")
	}
	var names []string
	var vals []json.RawMessage
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("the requested schema's properties: %w", err)
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("the requested schema's properties: %w", err)
		}
		names, vals = append(names, t.(string)), append(vals, v)
	}
	return names, vals, nil
}

type option struct {
	Const *string `json:"const"`
	Title string  `json:"title"`
}

type prop struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []option        `json:"oneOf"`
	AnyOf       []option        `json:"anyOf"`
	Default     json.RawMessage `json:"default"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Items       *prop           `json:"items"`
}

func (p *prop) options() []Option {
	var out []Option
	switch {
	case len(p.Enum) > 0:
		for i, v := range p.Enum {
			o := Option{Value: v, Title: v}
			if i < len(p.EnumNames) && p.EnumNames[i] != "" {
				o.Title = p.EnumNames[i]
			}
			out = append(out, o)
		}
	case len(p.OneOf) > 0 || len(p.AnyOf) > 0:
		for _, o := range append(p.OneOf, p.AnyOf...) {
			if o.Const != nil {
				out = append(out, Option{Value: *o.Const, Title: cmpOr(o.Title, *o.Const)})
			}
		}
	}
	return out
}

func field(name string, raw json.RawMessage) (Field, error) {
	var p prop
	if err := json.Unmarshal(raw, &p); err != nil {
		return Field{}, err
	}
	f := Field{Name: name, Title: p.Title, Description: p.Description, Format: p.Format,
		Min: p.Minimum, Max: p.Maximum, MinLen: p.MinLength, MaxLen: p.MaxLength}
	switch {
	case p.Type == "array":
		if p.Items == nil || len(p.Items.options()) == 0 {
			return f, errors.New("a list field needs items with choices (enum or anyOf)")
		}
		f.Kind, f.Options, f.MinLen, f.MaxLen = Choices, p.Items.options(), p.MinItems, p.MaxItems
	case len(p.options()) > 0:
		f.Kind, f.Options = Choice, p.options()
	case p.Type == Text, p.Type == Integer, p.Type == Number, p.Type == Boolean:
		f.Kind = p.Type
	case p.Type == "":
		f.Kind = Text
	default:
		return f, fmt.Errorf("a form cannot ask for a %s", p.Type)
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		var d any
		if err := json.Unmarshal(p.Default, &d); err != nil {
			return f, err
		}
		v, err := f.check(d)
		if err != nil {
			return f, fmt.Errorf("its default: %w", err)
		}
		f.Default = v
	}
	return f, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Label is what a person reads for the field: its title, else its name.
func (f *Field) Label() string { return cmpOr(f.Title, f.Name) }

// Hint says what the field takes, for a person: its type, bounds and
// default ("whole number, 0 to 100; Enter: 30").
func (f *Field) Hint() string {
	var parts []string
	switch f.Kind {
	case Text:
		parts = append(parts, cmpOr(f.Format, "text"))
		if f.MinLen != nil || f.MaxLen != nil {
			parts = append(parts, bounds("characters", toF(f.MinLen), toF(f.MaxLen)))
		}
	case Integer:
		parts = append(parts, "whole number")
		if f.Min != nil || f.Max != nil {
			parts = append(parts, bounds("", f.Min, f.Max))
		}
	case Number:
		parts = append(parts, "number")
		if f.Min != nil || f.Max != nil {
			parts = append(parts, bounds("", f.Min, f.Max))
		}
	case Boolean:
		parts = append(parts, "y/n")
	case Choice:
		parts = append(parts, "a number or a value")
	case Choices:
		p := "numbers or values, separated by spaces or commas"
		if f.MinLen != nil || f.MaxLen != nil {
			p += ", " + bounds("of them", toF(f.MinLen), toF(f.MaxLen))
		}
		parts = append(parts, p)
	}
	switch {
	case f.Default != nil:
		parts = append(parts, "Enter: "+f.Show(f.Default))
	case f.Required:
		parts = append(parts, "required")
	default:
		parts = append(parts, "Enter: skip")
	}
	return strings.Join(parts, "; ")
}

func toF(n *int) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

func bounds(unit string, lo, hi *float64) string {
	u := ""
	if unit != "" {
		u = " " + unit
	}
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%s to %s%s", num(*lo), num(*hi), u)
	case lo != nil:
		return fmt.Sprintf("at least %s%s", num(*lo), u)
	default:
		return fmt.Sprintf("at most %s%s", num(*hi), u)
	}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Heading names the field for a person: its title (and name, when they
// differ) and its description.
func (f *Field) Heading() string {
	head := f.Label()
	if f.Title != "" && f.Title != f.Name {
		head += " [" + f.Name + "]"
	}
	if f.Description != "" {
		head += ": " + f.Description
	}
	return head
}

// Show writes a value of the field as a person types it.
func (f *Field) Show(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "y"
		}
		return "n"
	case float64:
		return num(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case []string:
		return strings.Join(v, ", ")
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ErrSkip is Read's answer for an empty line on an optional field with
// no default: the field is left out.
var ErrSkip = errors.New("skipped")

// Read reads a line typed for the field into its value: an empty line
// is the default (ErrSkip for an optional field without one; an error
// for a required one); a choice is its number or its value (or title).
func (f *Field) Read(line string) (any, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		switch {
		case f.Default != nil:
			return f.Default, nil
		case f.Required:
			return nil, errors.New("this field is required")
		}
		return nil, ErrSkip
	}
	switch f.Kind {
	case Integer:
		n, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", line)
		}
		return f.check(float64(n))
	case Number:
		n, err := strconv.ParseFloat(line, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("%q is not a number", line)
		}
		return f.check(n)
	case Boolean:
		switch strings.ToLower(line) {
		case "y", "yes", "true", "1", "on":
			return true, nil
		case "n", "no", "false", "0", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%q: answer y or n", line)
	case Choice:
		v, err := f.pick(line)
		if err != nil {
			return nil, err
		}
		return v, nil
	case Choices:
		var picked []any
		for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			v, err := f.pick(w)
			if err != nil {
				return nil, err
			}
			picked = append(picked, v)
		}
		return f.check(picked)
	}
	return f.check(line)
}

// pick is the option a word names: its number, its value or its title.
func (f *Field) pick(w string) (string, error) {
	if n, err := strconv.Atoi(w); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, nil
	}
	for _, o := range f.Options {
		if o.Value == w {
			return o.Value, nil
		}
	}
	for _, o := range f.Options {
		if strings.EqualFold(o.Value, w) || strings.EqualFold(o.Title, w) {
			return o.Value, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices", w)
}

// check types a JSON value as the field takes it (a string where a
// number is asked is read as one, from clients that send text inputs as
// they are) and checks its bounds; the value returned is what is sent.
func (f *Field) check(v any) (any, error) {
	switch f.Kind {
	case Integer, Number:
		return f.checkNumber(v)
	case Boolean:
		return checkBoolean(v)
	case Choice:
		return f.checkChoice(v)
	case Choices:
		return f.checkChoices(v)
	}
	return f.checkText(v)
}

// checkNumber takes a number, or a string that reads as one, within the
// field's bounds; an Integer field's is whole and sent as an int64.
func (f *Field) checkNumber(v any) (any, error) {
	n, ok := v.(float64)
	if s, isStr := v.(string); isStr {
		var err error
		if n, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		ok = true
	}
	if !ok {
		return nil, fmt.Errorf("a %s is asked, not %s", f.Kind, jsonType(v))
	}
	if f.Kind == Integer && n != math.Trunc(n) {
		return nil, fmt.Errorf("%s is not a whole number", num(n))
	}
	if f.Min != nil && n < *f.Min {
		return nil, fmt.Errorf("%s is below the minimum, %s", num(n), num(*f.Min))
	}
	if f.Max != nil && n > *f.Max {
		return nil, fmt.Errorf("%s is above the maximum, %s", num(n), num(*f.Max))
	}
	if f.Kind == Integer {
		return int64(n), nil
	}
	return n, nil
}

// checkBoolean takes a boolean, or the string "true" or "false" in any
// case.
func checkBoolean(v any) (any, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(v) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return nil, fmt.Errorf("a boolean is asked, not %s", jsonType(v))
}

// checkChoice takes the value of one of the field's options.
func (f *Field) checkChoice(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("one of the choices is asked, not %s", jsonType(v))
	}
	if !f.has(s) {
		return nil, fmt.Errorf("%q is not one of the choices", s)
	}
	return s, nil
}

// checkChoices takes a list of the field's options' values, as many as
// the field's bounds allow; it is sent as a list of strings.
func (f *Field) checkChoices(v any) (any, error) {
	list, ok := v.([]any)
	if ss, isStrs := v.([]string); isStrs {
		for _, s := range ss {
			list = append(list, s)
		}
		ok = true
	}
	if !ok {
		return nil, fmt.Errorf("a list of choices is asked, not %s", jsonType(v))
	}
	out := []string{}
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("a list of choices is asked, and %s is not one", jsonType(e))
		}
		if !f.has(s) {
			return nil, fmt.Errorf("%q is not one of the choices", s)
		}
		out = append(out, s)
	}
	if f.MinLen != nil && len(out) < *f.MinLen {
		return nil, fmt.Errorf("pick at least %d", *f.MinLen)
	}
	if f.MaxLen != nil && len(out) > *f.MaxLen {
		return nil, fmt.Errorf("pick at most %d", *f.MaxLen)
	}
	return out, nil
}

// checkText takes a string as long as the field's bounds allow (counted
// in characters) and in its format, if it names one.
func (f *Field) checkText(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("text is asked, not %s", jsonType(v))
	}
	n := len([]rune(s))
	if f.MinLen != nil && n < *f.MinLen {
		return nil, fmt.Errorf("at least %d characters are asked", *f.MinLen)
	}
	if f.MaxLen != nil && n > *f.MaxLen {
		return nil, fmt.Errorf("at most %d characters are asked", *f.MaxLen)
	}
	if err := format(f.Format, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (f *Field) has(s string) bool {
	for _, o := range f.Options {
		if o.Value == s {
			return true
		}
	}
	return false
}

func format(name, s string) error {
	switch name {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("%q is not an email address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Errorf("%q is not an absolute URI", s)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("%q is not a date and time (RFC 3339)", s)
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	}
	return "an object"
}

// Complete checks an answer's content against the form and makes it what
// is sent: each value typed as its field asks (numbers sent as text read
// as numbers), the defaults of the fields left out filled in, members
// the form does not ask for dropped. A required field missing (with no
// default) or a value the field cannot take is an error naming it.
func (f *Form) Complete(content map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(f.Fields))
	for i := range f.Fields {
		fd := &f.Fields[i]
		v, ok := content[fd.Name]
		if !ok || v == nil {
			switch {
			case fd.Default != nil:
				out[fd.Name] = fd.Default
			case fd.Required:
				return nil, fmt.Errorf("%s is required", fd.Name)
			}
			continue
		}
		if s, isStr := v.(string); isStr && s == "" && fd.Kind != Text {
			if fd.Default != nil {
				out[fd.Name] = fd.Default
				continue
			}
			if !fd.Required {
				continue
			}
			return nil, fmt.Errorf("%s is required", fd.Name)
		}
		typed, err := fd.check(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fd.Name, err)
		}
		out[fd.Name] = typed
	}
	return out, nil
}

// Defaults is the answer that takes every default: nil when a required
// field has none (the form cannot be answered without a person).
func (f *Form) Defaults() map[string]any {
	out, err := f.Complete(map[string]any{})
	if err != nil {
		return nil
	}
	return out
}

// Answers a person may type at any field instead of a value.
const (
	DeclineWord = "/decline"
	CancelWord  = "/cancel"
)

// Actions of an answer, as MCP names them.
const (
	Accept  = "accept"
	Decline = "decline"
	Cancel  = "cancel"
)

// Filling is a form being answered a field at a time.
type Filling struct {
	form    *Form
	i       int
	content map[string]any
}

// Fill starts answering the form.
func (f *Form) Fill() *Filling { return &Filling{form: f, content: map[string]any{}} }

// Field is the field asked now, nil once every field is answered.
func (x *Filling) Field() *Field {
	if x.i >= len(x.form.Fields) {
		return nil
	}
	return &x.form.Fields[x.i]
}

// Take takes a line typed for the field asked now: the action is Accept
// once the last field is answered, Decline or Cancel for those words,
// "" while fields remain; an error (the same field is asked again) says
// what is wrong with the line.
func (x *Filling) Take(line string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case DeclineWord:
		return Decline, nil
	case CancelWord:
		return Cancel, nil
	}
	if fd := x.Field(); fd != nil {
		v, err := fd.Read(line)
		switch {
		case errors.Is(err, ErrSkip):
		case err != nil:
			return "", err
		default:
			x.content[fd.Name] = v
		}
		x.i++
	}
	if x.Field() == nil {
		return Accept, nil
	}
	return "", nil
}

// Content is the answer so far.
func (x *Filling) Content() map[string]any { return x.content }

// Ask asks the form on a line at a time: say shows a line, ask shows a
// prompt and reads the answer (an error, such as the end of the input,
// cancels). It returns the action and, for Accept, the content.
// A field titled as the question (ask_user's one field) is not named
// again.
func (f *Form) Ask(question string, say func(string), ask func(prompt string) (string, error)) (string, map[string]any) {
	x := f.Fill()
	if x.Field() == nil {
		return Accept, x.content
	}
	for {
		fd := x.Field()
		indent := "  "
		if fd.Label() != question || fd.Description != "" {
			say("  " + fd.Heading())
			indent = "    "
		}
		for i, o := range fd.Options {
			say(fmt.Sprintf("%s%d) %s", indent, i+1, o.Title))
		}
		line, err := ask(fmt.Sprintf("  (%s; %s, %s) > ", fd.Hint(), DeclineWord, CancelWord))
		if err != nil {
			return Cancel, nil
		}
		action, err := x.Take(line)
		if err != nil {
			say("  " + err.Error())
			continue
		}
		if action != "" {
			return action, x.content
		}
	}
}
