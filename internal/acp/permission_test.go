package acp_test

import (
	"strconv"
	"strings"
	"testing"
)

// The editor's permission options name their scope (issue 50, item 12):
// ACP's kinds say only once or always, so each "always" option's name
// says this session or this project, and the answer holds there and no
// wider: "Always allow, this session only" leaves a new session of the
// same directory asking; the project's option does not.
func TestPermissionOptionsNameTheirScope(t *testing.T) {
	e := startBridge(t, runDaemon(t))
	answer := "allow_always"
	e.choose = func(map[string]any) string { return answer }
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	cwd := t.TempDir()
	open := func() string {
		sid := result(t, e.call("session/new", `{"cwd":`+strconv.Quote(cwd)+`,"mcpServers":[]}`))["sessionId"].(string)
		result(t, e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"mode","value":"ask"}`))
		e.updates()
		return sid
	}
	// shell runs a command in sid and returns what the editor was asked
	// (nil: nothing).
	shell := func(sid string) map[string]any {
		t.Helper()
		res := result(t, e.call("session/prompt", `{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"/tool shell {\"command\":\"echo hi\"}"}]}`))
		if res["stopReason"] != "end_turn" {
			t.Fatalf("prompt: %v", res)
		}
		e.updates()
		select {
		case p := <-e.asked:
			return p
		default:
			return nil
		}
	}

	first := open()
	asked := shell(first)
	if asked == nil {
		t.Fatal("shell was not asked about")
	}
	var ids []string
	for _, o := range asked["options"].([]any) {
		o := o.(map[string]any)
		id, name, kind := o["optionId"].(string), o["name"].(string), o["kind"].(string)
		ids = append(ids, id+"="+kind)
		if strings.HasSuffix(kind, "_always") && !strings.Contains(name, "this session") && !strings.Contains(name, "this project") {
			t.Errorf("the option %s (%s) does not name its scope: %q", id, kind, name)
		}
		if strings.HasSuffix(id, "_project") != strings.Contains(name, "this project") {
			t.Errorf("the option %s is named %q", id, name)
		}
	}
	if want := "allow_once=allow_once allow_always=allow_always allow_project=allow_always reject_once=reject_once reject_always=reject_always reject_project=reject_always"; strings.Join(ids, " ") != want {
		t.Errorf("the options: %s, want %s", strings.Join(ids, " "), want)
	}
	if shell(first) != nil {
		t.Error("asked again in the session after allow_always")
	}
	second := open()
	answer = "allow_project"
	if shell(second) == nil {
		t.Fatal("a new session of the directory ran shell unasked after an answer for the session only")
	}
	if shell(open()) != nil {
		t.Error("a new session asked after the answer for the project")
	}
}
