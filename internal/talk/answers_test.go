package talk

import (
	"context"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The chat's approval box names each "always" answer's scope, the line
// said after the answer names it the same, and the answer holds where
// it said (issue 50, item 12): "a" (this session only) is not heard by
// a new chat of the same directory, which asks again (it is listed with
// scope session and its session); "P" (this project) is, and it is
// listed with scope project. zeroclaw prompt
// says the same scopes.
func TestChatAnswersSayTheirScope(t *testing.T) {
	h := startDaemon(t, "")
	s := h.tui("ask", "scope-one")
	s.expect("type /help for commands")
	s.typed(`//tool shell {"command":"echo one"}` + keyEnter)
	s.expect("╭ allow shell?")
	s.expect("always, for this session only: [c] this command  [a] every shell")
	s.expect("always, in this project (stored: later sessions too): [p] this command  [P] every shell")
	s.typed("a")
	s.expect("allowed for the rest of this session (not stored): every call of shell")
	s.expect("tool shell returned")
	s.typed(`//tool write_file {"path":"w.txt","content":"x"}` + keyEnter)
	s.expect("╭ allow write_file?")
	s.expect("[P] every write_file")
	s.typed("P")
	s.expect("allowed in this project, this session and later ones, until revoked (zeroclaw permissions): every call of write_file")
	s.expect("tool write_file returned")
	s.leave()

	c, err := client.Dial(context.Background(), h.dirs.Endpoint, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var list protocol.PermissionsListResult
	if err := c.Call(context.Background(), protocol.MethodPermissionsList, protocol.PermissionsListParams{Cwd: h.cwd}, &list); err != nil {
		t.Fatal(err)
	}
	scopes := map[string]string{}
	for _, r := range list.Rules {
		scopes[r.Tool] = r.Scope + " " + r.SessionID
	}
	if scopes["write_file"] != "project " || scopes["shell"] != "session scope-one" {
		t.Errorf("the answers listed: %+v", list.Rules)
	}

	// A new chat of the same directory: shell asks again, write_file not.
	s = h.tui("ask", "scope-two")
	s.expect("type /help for commands")
	s.typed(`//tool shell {"command":"echo two"}` + keyEnter)
	s.expect("╭ allow shell?")
	s.typed("n")
	s.expect("rejected: shell")
	s.typed(`//tool write_file {"path":"w2.txt","content":"x"}` + keyEnter)
	s.expect("tool write_file returned")
	if shown := s.out.String(); strings.Contains(shown, "allow write_file?") {
		t.Errorf("write_file asked again after the answer for the project:\n%s", shown)
	}
	s.leave()

	// zeroclaw prompt: the scopes offered, and the one chosen said.
	_, errs, err := h.prompt(PromptOptions{Text: `/tool shell {"command":"echo three"}`}, "a\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"[a]lways, this session / [p]roject: always, in this project", "(allowed for the rest of this session (not stored): every call of shell)"} {
		if !strings.Contains(errs, w) {
			t.Errorf("zeroclaw prompt's stderr lacks %q:\n%s", w, errs)
		}
	}
}

// What each answer is said to do names its scope.
func TestAnswerSaid(t *testing.T) {
	for _, c := range []struct{ decision, want string }{
		{protocol.DecisionAllowOnce, "allowed once: shell"},
		{protocol.DecisionAllowAlways, "allowed for the rest of this session (not stored): every call of shell"},
		{protocol.DecisionAllowAlwaysInput, "allowed for the rest of this session (not stored): this exact command of shell"},
		{protocol.DecisionAllowProject, "allowed in this project, this session and later ones, until revoked (zeroclaw permissions): every call of shell"},
		{protocol.DecisionAllowProjectInput, "allowed in this project, this session and later ones, until revoked (zeroclaw permissions): this exact command of shell"},
		{protocol.DecisionRejectOnce, "rejected: shell"},
		{protocol.DecisionRejectAlways, "rejected for the rest of this session (not stored): every call of shell"},
		{protocol.DecisionRejectProject, "rejected in this project, this session and later ones, until revoked (zeroclaw permissions): every call of shell"},
		{protocol.DecisionKeepPlanning, ""},
	} {
		if got := answerSaid(c.decision, "shell", protocol.KindExecute); got != c.want {
			t.Errorf("%s: %q, want %q", c.decision, got, c.want)
		}
	}
	for _, d := range protocol.Decisions {
		if answerSaid(d, "shell", protocol.KindExecute) == "" {
			t.Errorf("%s is said as nothing", d)
		}
	}
}
