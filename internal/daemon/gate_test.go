package daemon

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/gate"
)

// TestEveryActionGoesThroughTheGate: the one gate is the only way in. A
// counting gate (gate.Decide behind it) sees a tool call of the model
// and of a sub-agent, a task message, a process write, a mode change, an
// approval's answer and a method, each from the actor it is; and once it
// refuses everything but methods, each of those is refused with its
// reason, so what the gate says is what happens.
func TestEveryActionGoesThroughTheGate(t *testing.T) {
	var (
		mu     sync.Mutex
		seen   = map[string]int{}
		refuse atomic.Bool
	)
	count := func(r gate.Request) gate.Verdict {
		mu.Lock()
		seen[string(r.Actor)+" "+string(r.Action.Kind)]++
		mu.Unlock()
		if refuse.Load() && r.Action.Kind != gate.Method {
			return gate.Verdict{Decision: gate.Deny, Why: "the test's gate says no"}
		}
		return gate.Decide(r)
	}
	r := startWith(t, echoAgent+`risk = "full"`+"\n", func(o *Options) { o.Gate = count })
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")

	// The model's tool call; a background process the user writes to.
	toolResult(t, a, sid, `shell {"command":"read -r x; echo got $x","background":true}`)
	list := result(t, a.call("process/list", `{"sessionId":`+quote(sid)+`}`))["processes"].([]any)
	if len(list) != 1 {
		t.Fatalf("process/list: %v", list)
	}
	ref := `"sessionId":` + quote(sid) + `,"id":` + quote(list[0].(map[string]any)["id"].(string))
	result(t, a.call("process/write", `{`+ref+`,"input":"hi\n"}`))
	// A sub-agent's tool call, then a message to it.
	res := toolResult(t, a, sid, `task {"description":"look","prompt":"/tool list_dir {}"}`)
	cid := res["details"].(map[string]any)["subagent"].(map[string]any)["sessionId"].(string)
	toolResult(t, a, sid, fmt.Sprintf(`task_send {"id":%q,"prompt":"and more"}`, cid))
	// A mode change and an approval's answer, by the user.
	result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":"supervised"}`))
	a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":"apr_none","decision":"allow_once"}`)

	mu.Lock()
	for _, want := range []string{"model tool_call", "subagent tool_call", "model task_message", "user process_write", "user mode_change", "user answer", "user method"} {
		if seen[want] == 0 {
			t.Errorf("the gate never saw a %s (saw %v)", want, seen)
		}
	}
	mu.Unlock()

	// Now the gate refuses: each action is refused, with its reason.
	refuse.Store(true)
	if e := a.call("process/write", `{`+ref+`,"input":"again\n"}`); !strings.Contains(fmt.Sprint(e["error"]), "the test's gate says no") {
		t.Errorf("process/write past a refusing gate: %v", e)
	}
	if e := a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":"full"}`); !strings.Contains(fmt.Sprint(e["error"]), "the test's gate says no") {
		t.Errorf("a mode change past a refusing gate: %v", e)
	}
	if e := a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":"apr_none","decision":"allow_once"}`); !strings.Contains(fmt.Sprint(e["error"]), "the test's gate says no") {
		t.Errorf("an answer past a refusing gate: %v", e)
	}
	if res := toolResult(t, a, sid, `list_dir {}`); res["isError"] != true || !strings.Contains(fmt.Sprint(res["rawOutput"]), "the test's gate says no") {
		t.Errorf("a tool call past a refusing gate: %v", res)
	}
}
