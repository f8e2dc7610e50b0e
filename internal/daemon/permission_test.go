package daemon

import (
	"strings"
	"testing"
)

// Permission rules from the config and stored "always" answers: allow
// runs without asking, deny refuses under any risk level and names the
// rule, compound commands are judged part by part, an always answer
// holds for the next session of the directory until revoked.
func TestPermissionRules(t *testing.T) {
	r := startWith(t, echoAgent+`
[agents.full]
provider = "echo"
risk = "full"

[[permissions]]
tool = "shell"
pattern = "echo ask*"
decision = "ask"

[[permissions]]
tool = "shell"
pattern = "echo *"
decision = "allow"

[[permissions]]
tool = "shell"
pattern = "rm *"
decision = "deny"
`)
	a := connect(t, r.dirs.Endpoint, `{"elicitation":{}}`)
	cwd := t.TempDir()
	open := func(alias string) string {
		return result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code","keep_siblings":true,"agentAlias":"`+alias+`"}`))["sessionId"].(string)
	}
	sid := open("default")
	call := func(sid, line string) (map[string]any, map[string]any) {
		t.Helper()
		done := a.send("session/prompt", prompt(sid, line))
		tc := a.until("tool_call") // it comes before the prompt's answer
		var tr map[string]any
		if tc["needsApproval"] == true {
			req := a.until("approval_request")
			a.call("session/approve", approveFrame(sid, req["requestId"].(string), "allow_always"))
		}
		tr = a.until("tool_result")
		result(t, a.wait(done, "prompt"))
		return tc, tr
	}
	tc, tr := call(sid, `/tool shell {"command":"echo allowed"}`)
	if tc["needsApproval"] != false || tr["isError"] == true || !strings.Contains(tr["rawOutput"].(string), "allowed") {
		t.Errorf("an allowed command: %v / %v", tc, tr)
	}
	tc, tr = call(sid, `/tool shell {"command":"echo a && rm -f x"}`)
	if tc["needsApproval"] != false || tr["isError"] != true || !strings.Contains(tr["rawOutput"].(string), `refused by the permission rule deny shell "rm *" (config)`) {
		t.Errorf("a compound with a denied part: %v / %v", tc, tr)
	}
	if tc, _ = call(sid, `/tool shell {"command":"echo a; true"}`); tc["needsApproval"] != true {
		t.Errorf("a compound with an unmatched part ran without asking: %v", tc)
	}
	// An ask rule asks even under risk = "full", and the request names it.
	full := open("full")
	done := a.send("session/prompt", prompt(full, `/tool shell {"command":"echo ask me"}`))
	req := a.until("approval_request")
	if !strings.Contains(req["rule"].(string), `the permission rule ask shell "echo ask*" (config) asks`) {
		t.Errorf("approval_request rule %v", req["rule"])
	}
	a.call("session/approve", approveFrame(full, req["requestId"].(string), "allow_once"))
	result(t, a.wait(done, "prompt"))
	// Under risk = "full", deny still holds.
	if _, tr = call(open("full"), `/tool shell {"command":"rm -f x"}`); tr["isError"] != true || !strings.Contains(tr["rawOutput"].(string), "refused by the permission rule") {
		t.Errorf("deny under full risk: %v", tr)
	}
	// An always answer for write_file is stored for the directory.
	if tc, _ = call(sid, `/tool write_file {"path":"w.txt","content":"x"}`); tc["needsApproval"] != true {
		t.Fatalf("write_file did not ask: %v", tc)
	}
	list := result(t, a.call("permissions/list", `{"cwd":`+quote(cwd)+`}`))["rules"].([]any)
	var stored map[string]any
	for _, x := range list {
		if m := x.(map[string]any); m["origin"] == "answer" && m["tool"] == "write_file" {
			stored = m
		}
	}
	if len(list) < 3 || stored == nil || stored["decision"] != "allow" || stored["pattern"] != "*" || stored["dir"] != cwd {
		t.Fatalf("permissions/list %v", list)
	}
	if tc, _ = call(open("default"), `/tool write_file {"path":"w2.txt","content":"x"}`); tc["needsApproval"] != false {
		t.Errorf("a new session of the directory asked again: %v", tc)
	}
	if res := result(t, a.call("permissions/revoke", `{"id":`+quote(stored["id"].(string))+`}`)); res["revoked"] != true {
		t.Fatalf("revoke: %v", res)
	}
	if tc, _ = call(open("default"), `/tool write_file {"path":"w3.txt","content":"x"}`); tc["needsApproval"] != true {
		t.Errorf("after the revoke it did not ask: %v", tc)
	}
	if r := a.call("permissions/revoke", `{"id":"config#2"}`); errCode(r) != -32602 {
		t.Errorf("revoking a config rule: %v", r)
	}
}
