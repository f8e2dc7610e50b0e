package daemon

import (
	"fmt"
	"strings"
	"testing"
)

// goalStates reads goal_update events until one in state want, and
// returns the states seen and that goal.
func goalUntil(t *testing.T, p *peer, want string) ([]string, map[string]any) {
	t.Helper()
	var states []string
	for {
		g := p.until("goal_update")["goal"].(map[string]any)
		states = append(states, fmt.Sprint(g["state"]))
		if g["state"] == want {
			return states, g
		}
	}
}

// goalTurns counts the session's goal turns (their user_messages) and
// checks each restates the objective word for word.
func goalTurns(t *testing.T, p *peer, sid, objective string) int {
	t.Helper()
	n := 0
	for _, e := range result(t, p.call("session/history", `{"sessionId":`+quote(sid)+`,"limit":10000}`))["events"].([]any) {
		e := e.(map[string]any)
		if text, _ := e["text"].(string); e["type"] == "user_message" && strings.HasPrefix(text, "[Goal, turn ") {
			n++
			if !strings.Contains(text, objective) || !strings.HasPrefix(text, fmt.Sprintf("[Goal, turn %d]", n)) {
				t.Errorf("goal turn %d's prompt: %q", n, text)
			}
		}
	}
	return n
}

// A goal on the echo provider that calls goal_done on its third turn:
// three turns, each restating the objective, then met with the summary,
// and no fourth.
func TestGoalMetOnItsThirdTurn(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	objective := "count to three\n/when \"[Goal, turn 3]\" /tool goal_done {\"summary\":\"counted to three\"}"
	set := result(t, a.call("session/goal", `{"sessionId":`+quote(sid)+`,"objective":`+quote(objective)+`,"budget":{"turns":10}}`))["goal"].(map[string]any)
	if set["state"] != "active" || set["objective"] != objective {
		t.Fatalf("set: %v", set)
	}
	states, g := goalUntil(t, a, "met")
	if g["summary"] != "counted to three" || g["turns"] != 2.0 {
		// met is said during the third turn (two had ended)
		t.Fatalf("met: %v (states %v)", g, states)
	}
	// The third turn ends; a prompt of the user's runs after it, and no
	// fourth goal turn runs.
	if res := result(t, a.call("session/prompt", prompt(sid, "thanks"))); res["content"] != "echo: thanks" {
		t.Fatalf("the user's prompt: %v", res)
	}
	if n := goalTurns(t, a, sid, objective); n != 3 {
		t.Fatalf("%d goal turns", n)
	}
	info := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))
	if gi := info["goal"].(map[string]any); gi["state"] != "met" || gi["turns"] != 3.0 {
		t.Fatalf("session/get's goal: %v", gi)
	}
}

// A goal stopped by its token budget: out of budget after its first
// turn, it runs no second.
func TestGoalStoppedByItsTokenBudget(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	result(t, a.call("session/goal", `{"sessionId":`+quote(sid)+`,"objective":"write a long essay","budget":{"tokens":1}}`))
	_, g := goalUntil(t, a, "budget_exhausted")
	if g["turns"] != 1.0 || !strings.Contains(fmt.Sprint(g["reason"]), "budget of 1 tokens is spent") {
		t.Fatalf("exhausted: %v", g)
	}
	if n := goalTurns(t, a, sid, "write a long essay"); n != 1 {
		t.Fatalf("%d goal turns", n)
	}
}

// A goal paused by a client mid-turn: its turn ends, no other starts;
// resumed, the next one does; cleared, it is gone.
func TestGoalPausedMidTurn(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	objective := "/delay 20\n/chunks 30"
	result(t, a.call("session/goal", `{"sessionId":`+quote(sid)+`,"objective":`+quote(objective)+`}`))
	a.until("agent_message_chunk")
	paused := result(t, a.call("session/goal/pause", `{"sessionId":`+quote(sid)+`}`))["goal"].(map[string]any)
	if paused["state"] != "paused" || !strings.HasPrefix(fmt.Sprint(paused["reason"]), "paused by ") {
		t.Fatalf("paused: %v", paused)
	}
	a.until("turn_complete")
	if res := result(t, a.call("session/prompt", prompt(sid, "meanwhile"))); res["content"] != "echo: meanwhile" {
		t.Fatalf("the user's prompt: %v", res)
	}
	if n := goalTurns(t, a, sid, objective); n != 1 {
		t.Fatalf("%d goal turns while paused", n)
	}
	result(t, a.call("session/goal/resume", `{"sessionId":`+quote(sid)+`}`))
	for u := a.until("user_message"); !strings.HasPrefix(fmt.Sprint(u["text"]), "[Goal, turn 2]"); u = a.until("user_message") {
	}
	cleared := result(t, a.call("session/goal/clear", `{"sessionId":`+quote(sid)+`}`))["goal"].(map[string]any)
	if cleared["state"] != "cleared" {
		t.Fatalf("cleared: %v", cleared)
	}
	if info := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`)); info["goal"] != nil {
		t.Fatalf("a cleared goal is still shown: %v", info["goal"])
	}
	if e := a.call("session/goal/pause", `{"sessionId":`+quote(sid)+`}`); errCode(e) != -32602 {
		t.Fatalf("pausing no goal: %v", e)
	}
}

// A goal whose turn needs an approval is blocked (reason approval)
// until it is answered, then active again; a model that calls
// goal_blocked blocks it with its reason, and no turn follows.
func TestGoalBlocked(t *testing.T) {
	r := startWith(t, echoAgent+"risk = \"supervised\"\n[sandbox]\nmode = \"off\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	objective := "/when \"[Goal, turn 1]\" /tool shell {\"command\":\"echo step\"}\n/when \"[Goal, turn 2]\" /tool goal_blocked {\"reason\":\"I need the deploy key\"}"
	result(t, a.call("session/goal", `{"sessionId":`+quote(sid)+`,"objective":`+quote(objective)+`}`))
	req := a.until("approval_request")
	_, g := goalUntil(t, a, "blocked")
	if g["reason"] != "approval" {
		t.Fatalf("blocked: %v", g)
	}
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(fmt.Sprint(req["requestId"]))+`,"decision":"allow_once"}`))
	goalUntil(t, a, "active")
	_, g = goalUntil(t, a, "blocked")
	if g["reason"] != "I need the deploy key" {
		t.Fatalf("blocked by the model: %v", g)
	}
	if res := result(t, a.call("session/prompt", prompt(sid, "ok"))); res["content"] != "echo: ok" {
		t.Fatalf("the user's prompt: %v", res)
	}
	if n := goalTurns(t, a, sid, objective); n != 2 {
		t.Fatalf("%d goal turns", n)
	}
}
