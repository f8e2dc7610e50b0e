package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// verdictTool is the one tool the reviewer's model is given. Its answer
// is a call of it and nothing else: the reply's text is never read, so
// a reply that repeats the call under review (which the requester's
// model wrote, verdict-shaped fields and all) cannot become a verdict.
var verdictTool = provider.ToolSpec{
	Name:        "verdict",
	Description: "Give your verdict on the tool call under review. Call it exactly once; it is your whole answer.",
	Schema: json.RawMessage(`{"type":"object",` +
		`"properties":{` +
		`"decision":{"type":"string","enum":["allow","ask","deny"],"description":"allow: safe and clearly serves the task; deny: harmful or clearly not what the user wants; ask: let the user decide"},` +
		`"risk":{"type":"string","enum":["low","medium","high"],"description":"the call's risk for the user's machine, data and accounts"},` +
		`"rationale":{"type":"string","description":"one sentence: why"}},` +
		`"required":["decision","risk","rationale"],"additionalProperties":false}`),
}

// decisions are the verdict's decisions, as its schema lists them.
var decisions = []string{"allow", "ask", "deny"}

// riskRank orders the verdict's risks, as its schema lists them.
var riskRank = map[string]int{"low": 0, "medium": 1, "high": 2}

// verdict is the reviewer's answer: the arguments of its one call of
// verdictTool.
type verdict struct {
	Decision, Risk, Rationale string
}

// verdictOf is the verdict of resp: its one tool call, which must be a
// call of verdictTool whose arguments decode strictly. Anything else (no
// call, text only, several calls, another tool, arguments past the
// schema) is an error that says why, for approval_reviewed.
func verdictOf(resp *provider.Response) (verdict, error) {
	calls := resp.ToolCalls
	switch {
	case len(calls) == 0 && resp.CutCall != "":
		return verdict{}, fmt.Errorf("the output limit cut the reviewer's call of %s off", resp.CutCall)
	case len(calls) == 0:
		text := strings.TrimSpace(resp.Text)
		if text == "" {
			return verdict{}, fmt.Errorf("the reviewer did not call %s (and wrote nothing)", verdictTool.Name)
		}
		return verdict{}, fmt.Errorf("the reviewer did not call %s, it wrote: %s", verdictTool.Name, cut(text, 200))
	case len(calls) > 1:
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = c.Name
		}
		return verdict{}, fmt.Errorf("the reviewer made %d calls (%s), not one call of %s", len(calls), cut(strings.Join(names, ", "), 200), verdictTool.Name)
	case calls[0].Name != verdictTool.Name:
		return verdict{}, fmt.Errorf("the reviewer called %q, not %s", cut(calls[0].Name, 64), verdictTool.Name)
	}
	v, err := decodeVerdict(calls[0].Input)
	if err != nil {
		return verdict{}, fmt.Errorf("the reviewer's %s is not {decision, risk, rationale}: %v: %s", verdictTool.Name, err, cut(string(calls[0].Input), 200))
	}
	return v, nil
}

// decodeVerdict decodes a verdict's arguments as strictly as its schema
// reads: one JSON object with exactly the keys decision, risk and
// rationale (spelled so: encoding/json would match "Decision" too), each
// once, each a string, decision and risk from their enums, and nothing
// after the object.
func decodeVerdict(in []byte) (verdict, error) {
	dec := json.NewDecoder(bytes.NewReader(in))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return verdict{}, errors.New("not a JSON object")
	}
	var v verdict
	fields := map[string]*string{"decision": &v.Decision, "risk": &v.Risk, "rationale": &v.Rationale}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return verdict{}, err
		}
		key, _ := tok.(string)
		dst, ok := fields[key]
		switch {
		case !ok:
			return verdict{}, fmt.Errorf("unknown field %q", cut(key, 64))
		case seen[key]:
			return verdict{}, fmt.Errorf("%s given twice", key)
		}
		seen[key] = true
		tok, err = dec.Token()
		if err != nil {
			return verdict{}, err
		}
		s, ok := tok.(string)
		if !ok {
			return verdict{}, fmt.Errorf("%s is not a string", key)
		}
		*dst = s
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return verdict{}, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return verdict{}, errors.New("more after the object")
	}
	for _, key := range []string{"decision", "risk", "rationale"} {
		if !seen[key] {
			return verdict{}, fmt.Errorf("no %s", key)
		}
	}
	if !slices.Contains(decisions, v.Decision) {
		return verdict{}, fmt.Errorf("decision %q is not allow, ask or deny", cut(v.Decision, 64))
	}
	if _, ok := riskRank[v.Risk]; !ok {
		return verdict{}, fmt.Errorf("risk %q is not low, medium or high", cut(v.Risk, 64))
	}
	return v, nil
}
