package daemon

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// subagents are the subagent_update events seen so far, in order.
func subagentUpdates(a *peer, parent string) []map[string]any {
	var out []map[string]any
	for _, e := range a.snapshot() {
		if e["type"] == "subagent_update" && e["sessionId"] == parent {
			out = append(out, e["subagent"].(map[string]any))
		}
	}
	return out
}

// The task tool on the echo model: a foreground task answers with the
// child's answer; the child is a session of its own, listed under its
// parent, with its own history; three in one reply run at once; a
// background one answers at once and its end reaches the parent's
// model; task_status, task_send and task_cancel reach a child; the
// limits refuse with their reasons.
func TestSubagents(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n[agents.reviewer]\nprovider = \"echo\"\ndescription = \"reviews a change\"\ntools = [\"read_file\", \"list_dir\"]\n[subagents]\nmax_concurrent = 3\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	run := func(line string) map[string]any { t.Helper(); return toolResult(t, a, sid, line) }

	// Foreground.
	res := run(`task {"description":"say hello","prompt":"hello from the parent"}`)
	if res["rawOutput"] != "echo: hello from the parent" || res["isError"] == true {
		t.Fatalf("a foreground task: %v", res)
	}
	child := res["details"].(map[string]any)["subagent"].(map[string]any)
	cid := child["sessionId"].(string)
	if child["state"] != "completed" || child["description"] != "say hello" || child["agent"] != "default" {
		t.Fatalf("the child: %v", child)
	}
	list := result(t, a.call("session/list", `{"parentSessionId":`+quote(sid)+`}`))["sessions"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["sessionId"] != cid || list[0].(map[string]any)["parentSessionId"] != sid || list[0].(map[string]any)["depth"] != float64(1) {
		t.Fatalf("session/list {parentSessionId}: %v", list)
	}
	get := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))
	if kids, _ := get["children"].([]any); len(kids) != 1 {
		t.Fatalf("session/get's children: %v", get["children"])
	}
	// A top-level session is at depth 0 (said, not left out), and its
	// risk level is told.
	if d, ok := get["depth"]; !ok || d != float64(0) || get["risk"] != "full" {
		t.Fatalf("session/get of a top-level session: depth %v (present %v), risk %v", d, ok, get["risk"])
	}
	h := result(t, a.call("session/history", `{"sessionId":`+quote(cid)+`}`))["events"].([]any)
	if len(h) < 2 || h[1].(map[string]any)["type"] != "user_message" || h[1].(map[string]any)["text"] != "hello from the parent" {
		t.Fatalf("the child's history: %v", h)
	}
	if ups := subagentUpdates(a, sid); len(ups) != 2 || ups[0]["state"] != "running" || ups[1]["state"] != "completed" {
		t.Fatalf("subagent_update events: %v", ups)
	}

	// Three at once: all start before any ends.
	before := len(subagentUpdates(a, sid))
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`/tool task {"description":"slow %d","prompt":"/delay 150\nslow %d"}`, i, i))
	}
	result(t, a.call("session/prompt", prompt(sid, strings.Join(lines, "\n"))))
	ups := subagentUpdates(a, sid)[before:]
	if len(ups) != 6 {
		t.Fatalf("three tasks: %v", ups)
	}
	for i := range 3 {
		if ups[i]["state"] != "running" {
			t.Fatalf("the three did not all start before one ended: %v", ups)
		}
	}

	// The agent's tools: the reviewer has no shell.
	res = run(`task {"description":"try a command","agent":"reviewer","prompt":"/tool shell {\"command\":\"echo hi\"}"}`)
	if out := res["rawOutput"].(string); !strings.Contains(out, "tool shell failed: unknown tool") {
		t.Fatalf("a child refused a tool its agent lacks: %v", res)
	}

	// Background, then its end told to the parent's model.
	res = run(`task {"description":"in the back","prompt":"/delay 200\nbackground work","background":true}`)
	bg := res["details"].(map[string]any)["subagent"].(map[string]any)
	if bg["state"] != "running" || !strings.Contains(res["rawOutput"].(string), "running in the background") {
		t.Fatalf("a background task: %v", res)
	}
	bid := bg["sessionId"].(string)
	if st := run(fmt.Sprintf(`task_status {"id":%q}`, bid)); !strings.Contains(st["rawOutput"].(string), "still running") {
		t.Fatalf("task_status of a running child: %v", st)
	}
	for {
		if u := a.until("subagent_update")["subagent"].(map[string]any); u["sessionId"] == bid && u["state"] != "running" {
			break
		}
	}
	if st := run(fmt.Sprintf(`task_status {"id":%q}`, bid)); st["rawOutput"] != "echo: background work" {
		t.Fatalf("task_status of an ended child: %v", st)
	}
	// task_send to an ended child: a new turn, its answer.
	if st := run(fmt.Sprintf(`task_send {"id":%q,"prompt":"and more"}`, bid)); st["rawOutput"] != "echo: and more" {
		t.Fatalf("task_send: %v", st)
	}

	// task_cancel of a long background child.
	res = run(`task {"description":"long one","prompt":"/delay 1000\nnever done soon","background":true}`)
	lid := res["details"].(map[string]any)["subagent"].(map[string]any)["sessionId"].(string)
	if st := run(fmt.Sprintf(`task_cancel {"id":%q}`, lid)); !strings.Contains(st["rawOutput"].(string), "cancelled") {
		t.Fatalf("task_cancel: %v", st)
	}

	// A child may start none ([subagents] max_depth 1).
	res = run(`task {"description":"nest","prompt":"/tool task {\"description\":\"deeper\",\"prompt\":\"hi\"}"}`)
	if out := res["rawOutput"].(string); !strings.Contains(out, "tool task failed: task was not run: sub-agents nest at most 1 deep ([subagents] max_depth)") {
		t.Fatalf("a child starting a task: %v", res)
	}

	// The parent unloaded: session/get still tells every child and how
	// it ended, from the store.
	result(t, a.call("session/close", `{"sessionId":`+quote(sid)+`}`))
	get = result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))
	kids, _ := get["children"].([]any)
	states := map[string]string{}
	for _, k := range kids {
		k := k.(map[string]any)
		states[k["description"].(string)] = fmt.Sprint(k["state"], " ", k["summary"])
	}
	if get["live"] == true || len(kids) != 8 || states["say hello"] != "completed echo: hello from the parent" ||
		states["long one"] != "cancelled <nil>" || states["in the back"] != "completed echo: and more" {
		t.Fatalf("session/get of the unloaded parent: live %v, children %v", get["live"], states)
	}
}

// Agents a project defines in .claude/agents/*.md are offered to the
// task tool and run with their instructions and tools.
func TestProjectAgentFiles(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	os.MkdirAll(filepath.Join(cwd, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".claude", "agents", "reviewer.md"), []byte("---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep, Glob\nmodel: sonnet\n---\nYou review code.\n"), 0o644)
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	// The file's agent is shown to the user before it first runs.
	done := a.send("session/prompt", prompt(sid, `/tool task {"description":"review it","agent":"reviewer","prompt":"/tool shell {\"command\":\"echo hi\"}\nlook"}`))
	ask := a.until("approval_request")
	if ask["toolName"] != "task" || !strings.Contains(fmt.Sprint(ask["summary"]), "You review code.") {
		t.Fatalf("the file's agent was not shown: %v", ask)
	}
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(ask["requestId"].(string))+`,"decision":"allow_once"}`))
	result(t, a.wait(done, "the task"))
	var res map[string]any
	for _, e := range eventsOf(a.snapshot(), sid) {
		if e["type"] == "tool_result" && e["name"] == "task" {
			res = e
		}
	}
	if out := fmt.Sprint(res["rawOutput"]); !strings.Contains(out, "tool shell failed: unknown tool") {
		t.Fatalf("the file's agent ran a tool it lacks: %v", res)
	}
	child := res["details"].(map[string]any)["subagent"].(map[string]any)
	if child["agent"] != "reviewer" {
		t.Fatalf("the child's agent: %v", child)
	}
}

// A child's approval is shown to the clients of its parent, labelled
// with the child, and answered there; the resolution is in both
// histories.
func TestSubagentApprovalAnsweredInTheParent(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "supervised"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	done := a.send("session/prompt", prompt(sid, `/tool task {"description":"write a file","prompt":"/tool write_file {\"path\":\"f.txt\",\"content\":\"from the child\"}"}`))
	ask := a.until("approval_request")
	sub, _ := ask["subagent"].(map[string]any)
	if ask["sessionId"] != sid || sub == nil || sub["description"] != "write a file" || ask["toolName"] != "write_file" {
		t.Fatalf("the child's approval in the parent: %v", ask)
	}
	res := result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(ask["requestId"].(string))+`,"decision":"allow_once"}`))
	if res["accepted"] != true {
		t.Fatalf("session/approve in the parent: %v", res)
	}
	result(t, a.wait(done, "the parent's prompt"))
	if b, err := os.ReadFile(filepath.Join(cwd, "f.txt")); err != nil || string(b) != "from the child" {
		t.Fatalf("the child's write: %q %v", b, err)
	}
	resolved := false
	for _, e := range a.snapshot() {
		if e["type"] == "approval_resolved" && e["sessionId"] == sid && e["requestId"] == ask["requestId"] && e["decision"] == "allow_once" {
			resolved = true
		}
	}
	if !resolved {
		t.Fatalf("no approval_resolved in the parent")
	}
	child := sub["sessionId"].(string)
	h := result(t, a.call("session/history", `{"sessionId":`+quote(child)+`}`))["events"].([]any)
	var types []string
	for _, e := range h {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	if !strings.Contains(strings.Join(types, " "), "approval_request approval_resolved") {
		t.Fatalf("the child's history: %v", types)
	}
}

// A child's cost is its parent's too; and the parent's session budget
// bounds its children: a child that crosses it stops (failed, the
// budget named), and so does the parent.
func TestSubagentCostsAndBudget(t *testing.T) {
	priced := "[providers.echo]\nkind = \"echo\"\n[providers.echo.pricing]\ninput = 1\noutput = 1\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"
	r := startWith(t, priced)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	usage := func(id string) float64 {
		t.Helper()
		u, _ := result(t, a.call("session/get", `{"sessionId":`+quote(id)+`}`))["usage"].(map[string]any)
		c, _ := u["costUsd"].(float64)
		return c
	}
	res := result(t, a.call("session/prompt", prompt(sid, `/tool task {"description":"count","prompt":"one two three"}`)))
	own := res["usage"].(map[string]any)["costUsd"].(float64)
	subs := subagentUpdates(a, sid)
	child := subs[len(subs)-1]["sessionId"].(string)
	childCost := usage(child)
	if childCost <= 0 || own <= 0 {
		t.Fatalf("costs: the parent's turn %v, the child %v", own, childCost)
	}
	if got := usage(sid); fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", own+childCost) {
		t.Fatalf("the parent's usage %.9f, want its own %.9f and the child's %.9f", got, own, childCost)
	}

	// A budget half a model call above one (the child made one call):
	// the parent's first call is under it, its child's crosses it.
	os.WriteFile(filepath.Join(r.dirs.ConfigDir, "config.toml"), []byte(priced+fmt.Sprintf("[budget]\nmax_cost_usd_per_session = %g\n", childCost*1.5)), 0o600)
	result(t, a.call("daemon/reload", `{}`))
	b := newSession(t, a, "")
	res = result(t, a.call("session/prompt", prompt(b, `/tool task {"description":"over budget","prompt":"spend it"}`)))
	subs = subagentUpdates(a, b)
	last := subs[len(subs)-1]
	if last["state"] != "failed" || !strings.Contains(fmt.Sprint(last["summary"]), "max_cost_usd_per_session") {
		t.Fatalf("the child over the parent's budget: %v", last)
	}
	if res["stopReason"] != "budget" {
		t.Fatalf("the parent after its child crossed the budget: %v", res)
	}
}

// Cancelling the parent's turn cancels its foreground child.
func TestCancelReachesTheChild(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	done := a.send("session/prompt", prompt(sid, `/tool task {"description":"slow","prompt":"/delay 500\nthis takes a while to say"}`))
	a.until("subagent_update")
	result(t, a.call("session/cancel", `{"sessionId":`+quote(sid)+`}`))
	if res := result(t, a.wait(done, "the parent's prompt")); res["stopReason"] != "cancelled" {
		t.Fatalf("the parent's turn: %v", res)
	}
	ups := subagentUpdates(a, sid)
	if last := ups[len(ups)-1]; last["state"] != "cancelled" {
		t.Fatalf("the child after the parent's cancel: %v", ups)
	}
}

// An agent that names MCP tools (mcp__SERVER__TOOL or mcp__SERVER__*)
// gets only those of the MCP servers' tools.
func TestAgentsMCPToolsFiltered(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"
[agents.adder]
provider = "echo"
risk = "full"
tools = ["read_file", "mcp__t__add"]
[mcp]
turn_wait_ms = 30000
[mcp.servers.t]
command = "`+mcpServer(t)+`"
`)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	res := toolResult(t, a, sid, `task {"description":"add and write","agent":"adder","prompt":"/tool mcp__t__add {\"a\":2,\"b\":3}\n/tool mcp__t__write {\"path\":\"x\",\"content\":\"y\"}"}`)
	out := res["rawOutput"].(string)
	if !strings.Contains(out, "tool mcp__t__add returned") || !strings.Contains(out, "tool mcp__t__write failed: unknown tool") {
		t.Fatalf("the agent's MCP tools: %s", out)
	}
}

// What a child changes in the directory is its parent's turn's: a
// rewind of that turn undoes it.
func TestRewindUndoesAChildsEdits(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "kept.txt"), []byte("as it was\n"), 0o644)
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	toolResult(t, a, sid, `task {"description":"edit files","prompt":"/tool write_file {\"path\":\"new.txt\",\"content\":\"made by the child\"}\n/tool write_file {\"path\":\"kept.txt\",\"content\":\"changed by the child\\n\"}"}`)
	if b, _ := os.ReadFile(filepath.Join(cwd, "new.txt")); string(b) != "made by the child" {
		t.Fatalf("the child's write: %q", b)
	}
	if res := result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":1}`)); res["rewound"] != true {
		t.Fatalf("the rewind: %v", res)
	}
	if _, err := os.Stat(filepath.Join(cwd, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt after the rewind: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "kept.txt")); string(b) != "as it was\n" {
		t.Errorf("kept.txt after the rewind: %q", b)
	}
}

// After a rewind, a task call whose id repeats an earlier one's starts
// a child of its own, whose answer it returns (not the old child's).
func TestTaskAfterARewindStartsANewChild(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	first := toolResult(t, a, sid, `task {"description":"ask","prompt":"the first question"}`)
	if first["rawOutput"] != "echo: the first question" {
		t.Fatalf("the first task: %v", first)
	}
	if res := result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":1}`)); res["rewound"] != true {
		t.Fatalf("the rewind: %v", res)
	}
	second := toolResult(t, a, sid, `task {"description":"ask","prompt":"the second question"}`)
	if second["toolCallId"] != first["toolCallId"] {
		t.Fatalf("the call ids differ (%v, %v): the test needs them the same", first["toolCallId"], second["toolCallId"])
	}
	if second["rawOutput"] != "echo: the second question" {
		t.Fatalf("the task after the rewind: %v", second)
	}
}

// A background child's answer reaches its parent's model before its
// next call after the child ended.
func TestBackgroundChildAnswerReachesTheModel(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"description": "side work", "prompt": "/delay 100\nthe side result", "agent": "helper", "background": true})
	call := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"task","arguments":` +
		quote(string(args)) + `}}]}}]}`
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fake := &fakeOpenAI{scripts: [][]string{
		{call, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`},
		{content("Started."), stop, `[DONE]`},
		{content("Seen."), stop, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"m\"\n[providers.echo]\nkind = \"echo\"\n"+
		"[agents.default]\nprovider = \"fake\"\nrisk = \"full\"\n[agents.helper]\nprovider = \"echo\"\nrisk = \"full\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	result(t, a.call("session/prompt", prompt(sid, "start it")))
	for {
		if u := a.until("subagent_update")["subagent"].(map[string]any); u["state"] == "completed" {
			break
		}
	}
	result(t, a.call("session/prompt", prompt(sid, "what came back?")))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.bodies) != 3 {
		t.Fatalf("%d model calls", len(fake.bodies))
	}
	told := fmt.Sprint(fake.bodies[2]["messages"])
	// Told once it ended: at the turn's next call if it was quick, else
	// before the next turn's prompt; in the transcript from then on.
	if !strings.Contains(told, "(side work) completed; its answer:\necho: the side result") {
		t.Fatalf("the model was told: %s", told)
	}
}

// What a foreground child does now reaches its parent's clients as the
// task call's tool_progress.
func TestChildProgressInTheParent(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	res := toolResult(t, a, sid, `task {"description":"look around","prompt":"/tool list_dir {}"}`)
	var progress []map[string]any
	for _, e := range a.snapshot() {
		if e["type"] == "tool_progress" && e["sessionId"] == sid {
			progress = append(progress, e)
		}
	}
	if len(progress) == 0 || progress[0]["toolCallId"] != res["toolCallId"] || progress[0]["message"] != "list_dir" || progress[0]["progress"] != float64(1) {
		t.Fatalf("the child's progress in the parent: %v", progress)
	}
}

// The limits refuse with their reasons: a session's fourth running child
// ([subagents] max_concurrent 3), the daemon's seventeenth; task_send
// into a running child steers its turn (its answer has the steer's).
func TestSubagentLimitsAndSteering(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n[subagents]\nmax_concurrent = 3\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	// ended waits for n children of parent to end, from the updates seen
	// since skip, and returns those that ended.
	ended := func(parent string, skip, n int) []map[string]any {
		t.Helper()
		for {
			var done []map[string]any
			for _, u := range subagentUpdates(a, parent)[skip:] {
				if u["state"] != "running" {
					done = append(done, u)
				}
			}
			if len(done) >= n {
				return done
			}
			a.until("subagent_update")
		}
	}
	results := func(line string) []string {
		t.Helper()
		before := len(a.snapshot())
		result(t, a.call("session/prompt", prompt(sid, line)))
		var out []string
		for _, e := range a.snapshot()[before:] {
			if e["type"] == "tool_result" {
				out = append(out, e["rawOutput"].(string))
			}
		}
		return out
	}

	var lines []string
	for i := range 4 {
		lines = append(lines, fmt.Sprintf(`/tool task {"description":"bg %d","prompt":"/delay 300\nbg %d","background":true}`, i, i))
	}
	refused := 0
	for _, out := range results(strings.Join(lines, "\n")) {
		if strings.Contains(out, "this session already runs 3 sub-agents, its limit ([subagents] max_concurrent)") {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("four background tasks under max_concurrent 3: %d refused: %s", refused, types(a.snapshot()))
	}
	ended(sid, 0, 3)

	// task_send into a running child: a steer, read at its next model
	// call; its turn's answer has it.
	before := len(subagentUpdates(a, sid))
	out := results(`/tool task {"description":"steer me","prompt":"/delay 200\n/chunks 10","background":true}`)
	var started map[string]any
	for _, u := range subagentUpdates(a, sid)[before:] {
		if u["description"] == "steer me" {
			started = u
		}
	}
	if started == nil {
		t.Fatalf("the task did not start: %q", out)
	}
	cid := started["sessionId"].(string)
	if sent := results(fmt.Sprintf(`/tool task_send {"id":%q,"prompt":"steered in"}`, cid)); len(sent) != 1 || !strings.Contains(sent[0], "it reads it at its next step") {
		t.Fatalf("task_send into a running child: %q", sent)
	}
	done := ended(sid, before, 1)
	if done[0]["state"] != "completed" || !strings.Contains(fmt.Sprint(done[0]["summary"]), "echo: steered in") {
		t.Fatalf("the steered child's end: %v", done[0])
	}
	h := result(t, a.call("session/history", `{"sessionId":`+quote(cid)+`}`))["events"].([]any)
	steered := false
	for _, e := range h {
		e := e.(map[string]any)
		steered = steered || (e["type"] == "user_message" && e["text"] == "steered in" && e["steered"] == true)
	}
	if !steered {
		t.Fatalf("the child's history has no steer: %v", h)
	}
}

// The daemon runs at most 16 sub-agents, whichever sessions start them.
func TestSubagentDaemonLimit(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n[subagents]\nmax_concurrent = 16\n")
	a := connect(t, r.dirs.Endpoint, "")
	b := connect(t, r.dirs.Endpoint, "")
	one, two := newSession(t, a, ""), newSession(t, b, "")
	var lines []string
	for i := range 16 {
		lines = append(lines, fmt.Sprintf(`/tool task {"description":"bg %d","prompt":"/delay 400\nbg %d","background":true}`, i, i))
	}
	result(t, a.call("session/prompt", prompt(one, strings.Join(lines, "\n"))))
	if n := len(subagentUpdates(a, one)); n < 16 {
		t.Fatalf("16 started: %d updates", n)
	}
	res := toolResult(t, b, two, `task {"description":"one more","prompt":"hi"}`)
	if out := res["rawOutput"].(string); !strings.Contains(out, "the daemon already runs 16 sub-agents, its limit") {
		t.Fatalf("the seventeenth: %v", res)
	}
}

// The limit is each daemon's: another daemon's 16 running sub-agents (in
// the same process, as tests run them) do not count against this one's.
func TestSubagentLimitIsPerDaemon(t *testing.T) {
	conf := echoAgent + `risk = "full"` + "\n[subagents]\nmax_concurrent = 16\n"
	r1, r2 := startWith(t, conf), startWith(t, conf)
	a := connect(t, r1.dirs.Endpoint, "")
	one := newSession(t, a, "")
	var lines []string
	for i := range 16 {
		lines = append(lines, fmt.Sprintf(`/tool task {"description":"bg %d","prompt":"/delay 2000\nbg %d","background":true}`, i, i))
	}
	result(t, a.call("session/prompt", prompt(one, strings.Join(lines, "\n"))))
	if n := len(subagentUpdates(a, one)); n < 16 {
		t.Fatalf("16 started: %d updates", n)
	}
	b := connect(t, r2.dirs.Endpoint, "")
	two := newSession(t, b, "")
	res := toolResult(t, b, two, `task {"description":"mine","prompt":"hi"}`)
	if out := res["rawOutput"].(string); strings.Contains(out, "its limit") || !strings.Contains(out, "echo: hi") {
		t.Fatalf("the other daemon's first sub-agent: %v", out)
	}
}

// toolResult makes one tool call (the echo model's /tool line) in a turn
// of its own and returns its tool_result, whole (the echo model's reply
// shortens it).
func toolResult(t *testing.T, a *peer, sid, line string) map[string]any {
	t.Helper()
	result(t, a.call("session/prompt", prompt(sid, "/tool "+line)))
	evs := a.snapshot()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i]["type"] == "tool_result" {
			return evs[i]
		}
	}
	t.Fatalf("no tool_result for %s", line)
	return nil
}
