package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// toolTurn runs one prompt of tool calls (echo's /tool lines), answering
// every approval asked with allow_once, and returns the calls' results
// (in order) and how many approvals were asked.
func toolTurn(t *testing.T, p *peer, sid string, lines ...string) (results []string, asked int) {
	t.Helper()
	done := p.send("session/prompt", prompt(sid, strings.Join(lines, "\n")))
	for {
		select {
		case r := <-done:
			result(t, r)
			for _, e := range eventsOf(p.snapshot(), sid) {
				if e["type"] == "tool_result" && e["turnId"] == result(t, r)["turnId"] {
					results = append(results, fmt.Sprint(e["rawOutput"]))
				}
			}
			return results, asked
		case e := <-p.eventCh:
			if e["type"] == "approval_request" && e["sessionId"] == sid {
				asked++
				result(t, p.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(fmt.Sprint(e["requestId"]))+`,"decision":"allow_once"}`))
			}
		}
	}
}

// The modes, as a user sees them: plan refuses a write, an edit and a
// command that would change something without asking, runs a read, lets
// the plan file be written, and asks before a command, which runs
// read-only; accept-edits runs an edit unasked and asks for a command;
// full asks nothing but a deny rule still wins.
func TestModes(t *testing.T) {
	r := startWith(t, echoAgent+"\n[[permissions]]\ntool = \"shell\"\npattern = \"rm *\"\ndecision = \"deny\"\n"+
		"[mcp]\nturn_wait_ms = 30000\n[mcp.servers.t]\ncommand = "+quote(mcptest.Server(t))+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := cwdOutsideTemp(t) // the read-only sandbox leaves the temp dirs writable
	os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("old\n"), 0o644)
	sid := fmt.Sprint(result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code","risk":"plan"}`))["sessionId"])
	if g := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`)); g["sessionId"] != sid {
		t.Fatal(g)
	}
	res, asked := toolTurn(t, a, sid,
		`/tool write_file {"path":"new.txt","content":"x"}`,
		`/tool edit_file {"path":"notes.txt","old_string":"old","new_string":"new"}`,
		`/tool read_file {"path":"notes.txt"}`,
		`/tool write_file {"path":".zeroclaw/plans/the-plan.md","content":"1. do it"}`)
	if asked != 0 || len(res) != 4 || !strings.Contains(res[0], "plan mode changes nothing") || !strings.Contains(res[1], "plan mode changes nothing") ||
		!strings.Contains(res[2], "old") || strings.Contains(res[3], "not run") {
		t.Fatalf("plan mode: asked %d, results %q", asked, res)
	}
	if _, err := os.Stat(filepath.Join(cwd, "new.txt")); err == nil {
		t.Fatal("plan mode wrote a file")
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, ".zeroclaw", "plans", "the-plan.md")); string(b) != "1. do it" {
		t.Fatalf("the plan file: %q", b)
	}
	// An MCP server's tool runs only when annotated readOnlyHint (asking
	// as any server's tool); one that may change something is refused
	// unasked.
	res, asked = toolTurn(t, a, sid, `/tool mcp__t__add {"a":2,"b":3}`)
	if asked != 1 || len(res) != 1 || strings.Contains(res[0], "not run") {
		t.Fatalf("plan mode's read-only MCP tool: asked %d, %q", asked, res)
	}
	res, asked = toolTurn(t, a, sid, `/tool mcp__t__write {"path":"x.txt","content":"x"}`)
	if asked != 0 || len(res) != 1 || !strings.Contains(res[0], "plan mode runs only what changes nothing") {
		t.Fatalf("plan mode's MCP tool that writes: asked %d, %q", asked, res)
	}
	// A command asks, then runs read-only (where the sandbox works).
	if sandbox.Available().EnforcedBy == "landlock" {
		res, asked = toolTurn(t, a, sid, `/tool shell {"command":"echo looked; echo changed > changed.txt"}`)
		if asked != 1 || len(res) != 1 || !strings.Contains(res[0], "looked") {
			t.Fatalf("plan mode's command: asked %d, results %q", asked, res)
		}
		if _, err := os.Stat(filepath.Join(cwd, "changed.txt")); err == nil {
			t.Fatalf("a command in plan mode wrote a file: %q", res)
		}
	}

	// Accept edits: the edit runs unasked, the command asks.
	result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":"edits"}`))
	res, asked = toolTurn(t, a, sid, `/tool edit_file {"path":"notes.txt","old_string":"old","new_string":"new"}`)
	if asked != 0 || strings.Contains(res[0], "not run") {
		t.Fatalf("accept-edits' edit: asked %d, %q", asked, res)
	}
	_, asked = toolTurn(t, a, sid, `/tool shell {"command":"echo hi"}`)
	if asked != 1 {
		t.Fatalf("accept-edits' command asked %d times", asked)
	}

	// Full: nothing asks, but the deny rule wins.
	result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":"full"}`))
	res, asked = toolTurn(t, a, sid, `/tool shell {"command":"rm notes.txt"}`)
	if asked != 0 || !strings.Contains(res[0], "not run") {
		t.Fatalf("a denied command in full: asked %d, %q", asked, res)
	}
	if _, err := os.Stat(filepath.Join(cwd, "notes.txt")); err != nil {
		t.Fatal("the deny rule did not hold in full")
	}
	if e := a.call("session/new", `{"risk":"reckless"}`); errCode(e) != -32602 {
		t.Fatalf("an unknown risk: %v", e)
	}
}

// A mode switched mid-turn applies to the turn's next tool call: the
// first command asks (ask), the mode goes to full while it waits, and
// the second runs unasked.
func TestModeSwitchedMidTurn(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	done := a.send("session/prompt", prompt(sid, "/tool shell {\"command\":\"echo one\"}\n/tool shell {\"command\":\"echo two\"}"))
	req := a.until("approval_request")
	result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":"full"}`))
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(fmt.Sprint(req["requestId"]))+`,"decision":"allow_once"}`))
	result(t, a.wait(done, "the turn"))
	n := 0
	for _, e := range eventsOf(a.snapshot(), sid) {
		if e["type"] == "approval_request" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d approvals asked: the switch to full did not apply to the next call", n)
	}
}

// exit_plan: the plan is written and told (a plan event with its text
// and path), the user is asked (kind plan, its three options); keep
// planning sends their feedback into the same turn, answered there;
// proceed in accept-edits switches the mode. A plan's request takes only
// its own answers.
func TestExitPlan(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	sid := fmt.Sprint(result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code","risk":"plan"}`))["sessionId"])
	plan := "1. write a.txt\n2. check it"
	call := `/tool exit_plan {"plan":` + quote(plan) + `}`
	done := a.send("session/prompt", prompt(sid, call))
	pe := a.until("plan")
	if pe["text"] != plan || pe["path"] != ".zeroclaw/plans/"+sid+"-1.md" {
		t.Fatalf("the plan event: %v", pe)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, ".zeroclaw", "plans", sid+"-1.md")); string(b) != plan {
		t.Fatalf("the plan file: %q", b)
	}
	req := a.until("approval_request")
	if req["kind"] != "plan" || fmt.Sprint(req["options"]) != "[proceed_ask proceed_accept_edits keep_planning]" {
		t.Fatalf("the plan's request: %v", req)
	}
	rid := quote(fmt.Sprint(req["requestId"]))
	if e := a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+rid+`,"decision":"allow_once"}`); errCode(e) != -32602 {
		t.Fatalf("a plan answered allow_once: %v", e)
	}
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+rid+`,"decision":"keep_planning","feedback":"also add a test"}`))
	res := result(t, a.wait(done, "the turn"))
	if res["content"] != "echo: also add a test" {
		t.Fatalf("the feedback was not answered in the turn: %v", res)
	}
	if g := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`)); g["state"] == nil {
		t.Fatal(g)
	}
	if cr := result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`}`)); cr["risk"] != "plan" {
		t.Fatalf("after keep planning the mode is %v", cr["risk"])
	}
	done = a.send("session/prompt", prompt(sid, call))
	req = a.until("approval_request")
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(fmt.Sprint(req["requestId"]))+`,"decision":"proceed_accept_edits"}`))
	result(t, a.wait(done, "the turn"))
	if cr := result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`}`)); cr["risk"] != "edits" {
		t.Fatalf("after proceed in accept-edits the mode is %v", cr["risk"])
	}
	var steered, results []string
	for _, e := range eventsOf(a.snapshot(), sid) {
		if e["type"] == "user_message" && e["steered"] == true {
			steered = append(steered, fmt.Sprint(e["text"]))
		}
		if e["type"] == "tool_result" {
			results = append(results, fmt.Sprint(e["rawOutput"]))
		}
	}
	if strings.Join(steered, "|") != "also add a test" || len(results) != 2 || !strings.Contains(results[1], "accept edits mode") {
		t.Fatalf("steered %q, results %q", steered, results)
	}
	// Outside the plan mode there is no exit_plan.
	res = result(t, a.call("session/prompt", prompt(sid, call)))
	if !strings.Contains(fmt.Sprint(res["content"]), "unknown tool") && !strings.Contains(fmt.Sprint(res["content"]), "not in the plan mode") {
		t.Fatalf("exit_plan outside the plan mode: %v", res)
	}
}
