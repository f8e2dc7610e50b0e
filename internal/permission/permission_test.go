package permission

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func shellCall(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

func TestJudge(t *testing.T) {
	rules := []Rule{
		{Tool: "shell", Pattern: "git status*", Decision: Allow, Origin: "config"},
		{Tool: "shell", Pattern: "git log*", Decision: Allow, Origin: "config"},
		{Tool: "shell", Pattern: "npm publish*", Decision: Ask, Origin: "config"},
		{Tool: "shell", Pattern: "rm -rf *", Decision: Deny, Origin: "config"},
		{Tool: "write_file", Pattern: "*.env", Decision: Deny, Origin: "config"},
		{Tool: "write_file", Pattern: "src/*", Decision: Allow, Origin: "config"},
		{Tool: "*", Pattern: "*", Decision: Allow, Origin: "answer", Dir: "/p"}, // a later allow: deny still wins
	}
	for _, c := range []struct {
		tool, input, want string
	}{
		{"shell", "git status --short", Allow},
		{"shell", "git status && git log -1", Allow},
		{"shell", "git status && rm -rf x", Deny},
		{"shell", "echo $(rm -rf x)", Deny},
		{"shell", "(cd sub; rm -rf build)", Deny},
		{"shell", "git status | npm publish", Ask},
		{"write_file", `{"path":"prod.env"}`, Deny},
		{"write_file", `{"path":"/w/src/a.go"}`, Allow},
	} {
		input := shellCall(c.input)
		if c.tool != "shell" {
			input = json.RawMessage(c.input)
		}
		v := Judge(rules, c.tool, Subjects(c.tool, input, "/w"))
		if v.Decision != c.want {
			t.Errorf("%s %s: %q by %v, want %q", c.tool, c.input, v.Decision, v.Rule, c.want)
		}
	}
	// Without the catch-all answer: a part no rule matches leaves it to
	// the risk level.
	if v := Judge(rules[:6], "shell", Subjects("shell", shellCall("git status; make"), "/w")); v.Decision != "" {
		t.Errorf("a compound with an unmatched part: %+v", v)
	}
	// A line the parser refuses is not allowed by a pattern.
	if v := Judge(rules[:6], "shell", Subjects("shell", shellCall("git status 'unclosed"), "/w")); v.Decision == Allow {
		t.Errorf("an unparsable line was allowed: %+v", v)
	}
}

func TestMatchAndEscape(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"git *", "git push origin main", true}, {"git *", "gitk", false}, {"*.go", "a/b/c.go", true},
		{"file?.txt", "file1.txt", true}, {"[ab]x", "bx", true}, {"[ab]x", "cx", false}, {"", "anything", true},
		{Escape("rm -rf *"), "rm -rf *", true}, {Escape("rm -rf *"), "rm -rf x", false},
	} {
		if Match(c.p, c.s) != c.ok {
			t.Errorf("Match(%q, %q) = %v", c.p, c.s, !c.ok)
		}
	}
}

func TestStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "permissions.json")
	s, _ := OpenStore(path)
	r, err := s.Add(Rule{Tool: "shell", Pattern: "make test", Decision: Allow, Dir: "/p"})
	if err != nil || r.ID == "" || r.Origin != "answer" {
		t.Fatalf("add: %+v %v", r, err)
	}
	if again, _ := s.Add(Rule{Tool: "shell", Pattern: "make test", Decision: Allow, Dir: "/p"}); again.ID != r.ID {
		t.Errorf("the same answer stored twice")
	}
	s.Add(Rule{Tool: "shell", Pattern: "*", Decision: Deny, Dir: "/q"})
	s2, err := OpenStore(path)
	if err != nil || len(s2.For("/p")) != 1 || len(s2.For("")) != 2 {
		t.Fatalf("read back: %+v %v", s2.For(""), err)
	}
	if ok, _ := s2.Revoke(r.ID); !ok || len(s2.For("/p")) != 0 {
		t.Errorf("revoke")
	}
	if ok, _ := s2.Revoke("perm_none"); ok {
		t.Errorf("revoked a rule that is not there")
	}
}

// Exact is a pattern of this input alone, offered as a rule only when
// the rule would allow exactly this call.
func TestExact(t *testing.T) {
	for _, c := range []struct {
		tool  string
		input json.RawMessage
		want  string
		whole bool
	}{
		{"shell", shellCall("go test ./..."), "go test ./...", true},
		{"shell", shellCall("rm -f a*"), `rm -f a\*`, true},
		{"shell", shellCall("make && make install"), "make && make install", false},
		{"shell", shellCall("echo 'unclosed"), "echo 'unclosed", false},
		{"write_file", json.RawMessage(`{"path":"/w/src/a.go","content":"x"}`), "src/a.go", true},
	} {
		got, whole := Exact(c.tool, c.input, "/w")
		if got != c.want || whole != c.whole {
			t.Errorf("Exact(%s %s) = %q, %v; want %q, %v", c.tool, c.input, got, whole, c.want, c.whole)
		}
		if whole {
			rules := []Rule{{Tool: c.tool, Pattern: got, Decision: Allow}}
			if v := Judge(rules, c.tool, Subjects(c.tool, c.input, "/w")); v.Decision != Allow {
				t.Errorf("the exact rule of %s does not allow it: %+v", c.input, v)
			}
		}
	}
}
