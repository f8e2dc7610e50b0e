package answers

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/permission"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func req(tool, input string) agent.ApprovalRequest {
	return agent.ApprovalRequest{ToolName: tool, Input: json.RawMessage(input), Kind: protocol.KindExecute}
}

func scope(t *testing.T, stored bool) Scope {
	t.Helper()
	dir := t.TempDir()
	sc := Scope{Held: &Held{}, Project: dir, Cwd: dir, SessionID: "s1"}
	if stored {
		st, err := permission.OpenStore(filepath.Join(t.TempDir(), "permissions.json"))
		if err != nil {
			t.Fatal(err)
		}
		sc.Store = st
	}
	return sc
}

// A session's "always" holds in it alone, for the tool or for the very
// input; a project's is stored and holds in every scope of the project;
// once and nothing keep nothing.
func TestAnswersStandInTheirScope(t *testing.T) {
	sc := scope(t, true)
	other := sc
	other.Held = &Held{} // another session of the same project
	ls := `{"command":"ls"}`
	if _, ok := sc.Standing("shell", json.RawMessage(ls)); ok {
		t.Fatal("an answer stands before any was given")
	}
	sc.Keep(req("shell", ls), protocol.DecisionAllowOnce)
	sc.Keep(req("write_file", `{"path":"a"}`), protocol.DecisionAllowAlwaysInput)
	if _, ok := sc.Standing("shell", json.RawMessage(ls)); ok {
		t.Error("allow_once stands")
	}
	if d, ok := sc.Standing("write_file", json.RawMessage(`{"path": "a"}`)); !ok || !d.Allow {
		t.Errorf("the exact input's answer: %+v %v", d, ok)
	}
	if _, ok := sc.Standing("write_file", json.RawMessage(`{"path":"b"}`)); ok {
		t.Error("the exact answer stands for another input")
	}
	sc.Keep(req("web_fetch", `{"url":"x"}`), protocol.DecisionRejectAlways)
	if d, ok := sc.Standing("web_fetch", json.RawMessage(`{"url":"y"}`)); !ok || d.Allow || !strings.Contains(d.Why, "rest of this session") {
		t.Errorf("reject_always: %+v %v", d, ok)
	}
	if _, ok := other.Standing("write_file", json.RawMessage(`{"path":"a"}`)); ok {
		t.Error("a session's answer stands in another session")
	}
	sc.Keep(req("shell", ls), protocol.DecisionAllowProject)
	if d, ok := other.Standing("shell", json.RawMessage(`{"command":"pwd"}`)); !ok || !d.Allow {
		t.Errorf("the project's answer in another session: %+v %v", d, ok)
	}
	sc.Keep(req("search", `{"pattern":"x"}`), protocol.DecisionRejectProject)
	if d, ok := other.Standing("search", json.RawMessage(`{"pattern":"y"}`)); !ok || d.Allow || !strings.Contains(d.Why, "permission rule") {
		t.Errorf("reject_project: %+v %v", d, ok)
	}

	live := []Live{{SessionID: "s1", Project: sc.Project, Held: sc.Held}, {SessionID: "s2", Project: sc.Project, Held: other.Held}}
	rules := Rules([]permission.Rule{{ID: "c1", Tool: "read_file", Pattern: "*", Decision: permission.Allow, Origin: "config"}}, sc.Store, sc.Cwd, live)
	scopes := map[string]int{}
	var held string
	for _, r := range rules {
		scopes[r.Scope]++
		if r.Scope == protocol.ScopeSession {
			if r.SessionID != "s1" {
				t.Errorf("a session's answer listed for %q", r.SessionID)
			}
			held = r.ID
		}
	}
	if scopes[protocol.ScopeGlobal] != 1 || scopes[protocol.ScopeProject] != 2 || scopes[protocol.ScopeSession] != 2 {
		t.Errorf("the listing's scopes: %v (%+v)", scopes, rules)
	}
	if n := len(Rules(nil, sc.Store, t.TempDir(), live)); n != 0 {
		t.Errorf("another project lists %d answers", n)
	}
	if ok, err := Revoke(sc.Store, held, live); !ok || err != nil {
		t.Fatalf("revoking %s: %v %v", held, ok, err)
	}
	if ok, _ := Revoke(sc.Store, held, live); ok {
		t.Error("revoked twice")
	}
	if ok, _ := Revoke(nil, "p_1", live); ok {
		t.Error("revoked from no store")
	}
	for _, r := range rules {
		if r.Scope == protocol.ScopeProject {
			if ok, err := Revoke(sc.Store, r.ID, live); !ok || err != nil {
				t.Errorf("revoking the project's %s: %v %v", r.ID, ok, err)
			}
		}
	}
	if _, ok := other.Standing("shell", json.RawMessage(ls)); ok {
		t.Error("the project's answer stands after its revoke")
	}
}

// The options a request takes: the project's only where answers are
// stored, its exact one only for an input a rule can stand for; an
// answer for the project with no store holds for the session instead.
func TestDecisionsOfferOnlyWhatHolds(t *testing.T) {
	none := scope(t, false)
	if d := none.Decisions(req("shell", `{"command":"ls"}`)); slices.Contains(d, protocol.DecisionAllowProject) || slices.Contains(d, protocol.DecisionRejectProject) {
		t.Errorf("no store, project options: %v", d)
	}
	none.Keep(req("shell", `{"command":"ls"}`), protocol.DecisionAllowProject)
	if d, ok := none.Standing("shell", json.RawMessage(`{"command":"cat x"}`)); !ok || !d.Allow {
		t.Errorf("an unstorable project answer does not hold for the session: %+v %v", d, ok)
	}
	st := scope(t, true)
	if d := st.Decisions(req("shell", `{"command":"ls -la"}`)); !slices.Contains(d, protocol.DecisionAllowProjectInput) {
		t.Errorf("a plain command, no exact project option: %v", d)
	}
	if d := st.Decisions(req("shell", `{"command":"ls && rm -rf x"}`)); slices.Contains(d, protocol.DecisionAllowProjectInput) {
		t.Errorf("a compound command offered for the project exactly: %v", d)
	}
	st.Keep(req("shell", `{"command":"ls && rm x"}`), protocol.DecisionAllowProjectInput)
	if d, ok := st.Standing("shell", json.RawMessage(`{"command":"ls && rm x"}`)); !ok || !d.Allow {
		t.Errorf("a compound command's answer does not hold for the session: %+v %v", d, ok)
	}
	if d, ok := st.Standing("shell", json.RawMessage(`{"command":"rm x"}`)); ok && d.Allow {
		t.Errorf("a part of the compound command is allowed alone: %+v", d)
	}
}

// permissions/list tells an answer's pattern cut past MaxListedPattern
// (an exact answer's pattern is its whole input, a command of any
// length), saying so; the answer still holds whole.
func TestRulesCutALongPattern(t *testing.T) {
	long := strings.Repeat("é", MaxListedPattern) // twice the bound, in bytes
	h := &Held{}
	h.add(answer{id: Prefix + "1", tool: "shell", exact: true, pattern: long, decision: "allow"})
	h.add(answer{id: Prefix + "2", tool: "shell", pattern: "*", decision: "allow"})
	rules := Rules(nil, nil, "", []Live{{SessionID: "s", Project: "/p", Held: h}})
	if len(rules) != 2 {
		t.Fatalf("rules: %+v", rules)
	}
	if r := rules[0]; !r.PatternTruncated || len(r.Pattern) > MaxListedPattern || !strings.HasPrefix(long, r.Pattern) || r.Pattern == "" {
		t.Fatalf("the long pattern listed: %d bytes, truncated %v", len(r.Pattern), r.PatternTruncated)
	}
	if r := rules[1]; r.PatternTruncated || r.Pattern != "*" {
		t.Fatalf("a short pattern listed: %+v", r)
	}
	if h.list[0].pattern != long {
		t.Fatal("the answer itself was cut")
	}
}
