package review

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// A reply's verdict is its one call of verdict, its arguments decoded
// as strictly as the schema reads; anything else says why it is none.
func TestVerdictOf(t *testing.T) {
	one := func(name, args string) *provider.Response {
		return &provider.Response{ToolCalls: []provider.ToolCall{{ID: "c1", Name: name, Input: json.RawMessage(args)}}, StopReason: provider.StopToolUse}
	}
	for _, c := range []struct {
		name string
		resp *provider.Response
		want verdict
		err  string
	}{
		{"allow", one("verdict", `{"decision":"allow","risk":"low","rationale":"reads a file"}`), verdict{"allow", "low", "reads a file"}, ""},
		{"any order, spaces", one("verdict", " {\"rationale\":\"\", \"risk\":\"high\",\n\"decision\":\"deny\"} "), verdict{"deny", "high", ""}, ""},
		{"text only", &provider.Response{Text: ` {"decision":"allow","risk":"low","rationale":"x"} `}, verdict{}, `the reviewer did not call verdict, it wrote: {"decision":"allow"`},
		{"nothing", &provider.Response{}, verdict{}, "the reviewer did not call verdict (and wrote nothing)"},
		{"cut off", &provider.Response{StopReason: provider.StopMaxTokens, CutCall: "verdict"}, verdict{}, "the output limit cut the reviewer's call of verdict off"},
		{"another tool", one("shell", `{"decision":"allow","risk":"low","rationale":"x"}`), verdict{}, `the reviewer called "shell", not verdict`},
		{"two calls", &provider.Response{ToolCalls: []provider.ToolCall{{Name: "verdict", Input: json.RawMessage(`{"decision":"deny","risk":"low","rationale":"x"}`)}, {Name: "verdict", Input: json.RawMessage(`{"decision":"allow","risk":"low","rationale":"x"}`)}}},
			verdict{}, "the reviewer made 2 calls (verdict, verdict), not one call of verdict"},
		{"unknown field", one("verdict", `{"decision":"allow","risk":"low","rationale":"x","by":"the user"}`), verdict{}, `unknown field "by"`},
		{"key in capitals", one("verdict", `{"Decision":"allow","risk":"low","rationale":"x"}`), verdict{}, `unknown field "Decision"`},
		{"key twice", one("verdict", `{"decision":"deny","risk":"low","rationale":"x","decision":"allow"}`), verdict{}, "decision given twice"},
		{"decision not in enum", one("verdict", `{"decision":"yes","risk":"low","rationale":"x"}`), verdict{}, `decision "yes" is not allow, ask or deny`},
		{"risk not in enum", one("verdict", `{"decision":"allow","risk":"none","rationale":"x"}`), verdict{}, `risk "none" is not low, medium or high`},
		{"risk in capitals", one("verdict", `{"decision":"allow","risk":"LOW","rationale":"x"}`), verdict{}, `risk "LOW" is not low, medium or high`},
		{"no rationale", one("verdict", `{"decision":"allow","risk":"low"}`), verdict{}, "no rationale"},
		{"not a string", one("verdict", `{"decision":"allow","risk":"low","rationale":{"decision":"allow"}}`), verdict{}, "rationale is not a string"},
		{"null", one("verdict", `{"decision":"allow","risk":null,"rationale":"x"}`), verdict{}, "risk is not a string"},
		{"an array", one("verdict", `[{"decision":"allow","risk":"low","rationale":"x"}]`), verdict{}, "not a JSON object"},
		{"more after", one("verdict", `{"decision":"ask","risk":"low","rationale":"x"}{"decision":"allow"}`), verdict{}, "more after the object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := verdictOf(c.resp)
			if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Errorf("got %+v, %v; want %+v, %q", got, err, c.want, c.err)
			}
		})
	}
}

// verdict's schema is what decodeVerdict reads: an object of exactly
// decision, risk and rationale, all required, strings, the enums the
// code ranks.
func TestVerdictSchema(t *testing.T) {
	var s struct {
		Type       string
		Properties map[string]struct {
			Type string
			Enum []string
		}
		Required             []string
		AdditionalProperties *bool
	}
	if err := json.Unmarshal(verdictTool.Schema, &s); err != nil {
		t.Fatal(err)
	}
	risks := []string{"low", "medium", "high"}
	for i, r := range risks {
		if riskRank[r] != i {
			t.Errorf("riskRank[%s] = %d", r, riskRank[r])
		}
	}
	p := s.Properties
	if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties || len(p) != 3 || len(riskRank) != 3 ||
		!slices.Equal(s.Required, []string{"decision", "risk", "rationale"}) ||
		p["decision"].Type != "string" || !slices.Equal(p["decision"].Enum, decisions) ||
		p["risk"].Type != "string" || !slices.Equal(p["risk"].Enum, risks) ||
		p["rationale"].Type != "string" || p["rationale"].Enum != nil {
		t.Errorf("the schema: %s", verdictTool.Schema)
	}
}
