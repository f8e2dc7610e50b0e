package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A schedule every second runs its prompt in its session, each run said
// in the session (schedule_update started, then completed) and in
// schedule/list (lastRun, nextRunMs); schedule/run fires one now;
// deleted, it runs no more.
func TestScheduleRunsItsPromptInItsSession(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	created := result(t, a.call("schedule/create", `{"prompt":"tick","every":"1s","sessionId":`+quote(sid)+`}`))["schedule"].(map[string]any)
	id := fmt.Sprint(created["scheduleId"])
	if !strings.HasPrefix(id, "sch_") || created["missed"] != "skip" || created["approve"] != "ask" || created["nextRunMs"] == nil {
		t.Fatalf("created: %v", created)
	}
	// Two runs come, each started then completed, in the session. A
	// tick due while a run is still under way (a slow machine) is
	// skipped, and says so; it is no run.
	var states []string
	for len(states) < 4 {
		u := a.until("schedule_update")
		if u["scheduleId"] != id {
			t.Fatalf("an update of another schedule: %v", u)
		}
		run := u["run"].(map[string]any)
		if run["state"] == "skipped" && run["reason"] == "the previous run is still under way" {
			continue
		}
		states = append(states, fmt.Sprint(run["state"]))
	}
	if got := strings.Join(states, " "); got != "started completed started completed" {
		t.Fatalf("the runs: %s", got)
	}
	if n := userMessages(t, a, sid, "tick"); n < 2 {
		t.Fatalf("the prompt ran %d times", n)
	}
	list := result(t, a.call("schedule/list", `{}`))["schedules"].([]any)
	if len(list) != 1 {
		t.Fatalf("list: %v", list)
	}
	got := list[0].(map[string]any)
	last, _ := got["lastRun"].(map[string]any)
	if got["runs"].(float64) < 2 || last == nil || got["nextRunMs"].(float64) <= float64(time.Now().Add(-time.Second).UnixMilli()) {
		t.Fatalf("listed: %v", got)
	}
	// Paused, it runs no more; schedule/run still fires one.
	upd := result(t, a.call("schedule/update", `{"scheduleId":`+quote(id)+`,"enabled":false}`))["schedule"].(map[string]any)
	if upd["enabled"] != false {
		t.Fatalf("paused: %v", upd)
	}
	// A run under way as it was paused ends.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l := result(t, a.call("schedule/list", `{}`))["schedules"].([]any)[0].(map[string]any)
		if l["lastRun"].(map[string]any)["state"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last run never ended: %v", l)
		}
	}
	before := userMessages(t, a, sid, "tick")
	result(t, a.call("schedule/run", `{"scheduleId":`+quote(id)+`}`))
	for u := a.until("schedule_update"); u["run"].(map[string]any)["state"] != "completed"; u = a.until("schedule_update") {
	}
	if n := userMessages(t, a, sid, "tick"); n != before+1 {
		t.Fatalf("schedule/run ran the prompt %d times", n-before)
	}
	if res := result(t, a.call("schedule/delete", `{"scheduleId":`+quote(id)+`}`)); res["deleted"] != true {
		t.Fatalf("delete: %v", res)
	}
	if list := result(t, a.call("schedule/list", `{}`))["schedules"].([]any); len(list) != 0 {
		t.Fatalf("list after the delete: %v", list)
	}
}

// Every input a schedule cannot take is -32602, naming its field.
func TestScheduleCreateRefusesBadInput(t *testing.T) {
	r := startWith(t, echoAgent+"[schedules]\nmax = 1\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	s := quote(sid)
	for _, c := range []struct{ params, field string }{
		{`{"every":"1m","sessionId":` + s + `}`, "prompt"},
		{`{"prompt":"p","sessionId":` + s + `}`, "cron"},
		{`{"prompt":"p","cron":"61 * * * *","sessionId":` + s + `}`, "cron"},
		{`{"prompt":"p","every":"1m","cron":"@daily","sessionId":` + s + `}`, "cron"},
		{`{"prompt":"p","every":"1m"}`, "sessionId"},
		{`{"prompt":"p","every":"1m","sessionId":"ses_none"}`, "sessionId"},
		{`{"prompt":"p","every":"1m","sessionId":` + s + `,"newSession":{}}`, "sessionId"},
		{`{"prompt":"p","every":"1m","newSession":{"cwd":"relative"}}`, "newSession.cwd"},
		{`{"prompt":"p","every":"1m","sessionId":` + s + `,"missed":"always"}`, "missed"},
		{`{"prompt":"p","every":"1m","sessionId":` + s + `,"approve":"never"}`, "approve"},
		{`{"prompt":"p","at":"2001-01-01T00:00:00Z","sessionId":` + s + `}`, "at"},
		{`{"prompt":"p","every":"1m","sessionId":` + s + `,"timezone":"Mars/Base"}`, "timezone"},
		{`{"prompt":"p","every":"soon","sessionId":` + s + `}`, "every"},
		{`{"prompt":"p","every":"10ms","sessionId":` + s + `}`, "every"},
		{`{"prompt":"p","at":"tomorrow","sessionId":` + s + `}`, "at"},
		{`{"prompt":"p","every":"1m","newSession":{"agentAlias":"nosuch"}}`, "newSession.agentAlias"},
		{`{"prompt":"` + strings.Repeat("x", 16385) + `","every":"1m","sessionId":` + s + `}`, "prompt"},
	} {
		e := a.call("schedule/create", c.params)
		data, _ := e["error"].(map[string]any)["data"].(map[string]any)
		msg := fmt.Sprint(e["error"].(map[string]any)["message"])
		if errCode(e) != -32602 || data["field"] != c.field {
			t.Errorf("%.120s: want -32602 on %s, got %.300v", c.params, c.field, e)
		} else if c.field != "cron" && strings.Contains(msg, "cron") {
			t.Errorf("%.120s: the message speaks of cron: %s", c.params, msg)
		} else if c.field == "prompt" && len(c.params) > 1000 && !strings.Contains(msg, "at most 16384") {
			t.Errorf("the prompt's limit is not said: %s", msg)
		}
	}
	// An update is bounded the same.
	id := fmt.Sprint(result(t, a.call("schedule/create", `{"prompt":"p","every":"1h","sessionId":`+s+`}`))["schedule"].(map[string]any)["scheduleId"])
	if e := a.call("schedule/update", `{"scheduleId":`+quote(id)+`,"prompt":"`+strings.Repeat("x", 16385)+`"}`); errCode(e) != -32602 {
		t.Errorf("an update's prompt past the limit: %.300v", e)
	}
	result(t, a.call("schedule/delete", `{"scheduleId":`+quote(id)+`}`))
	for _, m := range []string{"schedule/run", "schedule/update", "schedule/delete"} {
		if e := a.call(m, `{"scheduleId":"sch_none"}`); m != "schedule/delete" && errCode(e) != -32602 {
			t.Errorf("%s of no schedule: %v", m, e)
		} else if m == "schedule/delete" && result(t, e)["deleted"] != false {
			t.Errorf("delete of no schedule: %v", e)
		}
	}
	result(t, a.call("schedule/create", `{"prompt":"p","every":"1h","sessionId":`+s+`}`))
	if e := a.call("schedule/create", `{"prompt":"p","every":"1h","sessionId":`+s+`}`); errCode(e) != -32001 {
		t.Errorf("one past [schedules] max: %v", e)
	}
}

// A run that needs an approval waits for one, and schedule/list says
// so (waiting: approval, its request and session); answered, the run
// completes. With approve: rules, what would ask is refused instead (the
// command never runs) and the run still ends.
func TestScheduledRunWaitsForAnApproval(t *testing.T) {
	r := startWith(t, echoAgent+"risk = \"supervised\"\n[sandbox]\nmode = \"off\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	cmd := `/tool shell {"command":"echo ran >> ran.txt"}`
	id := fmt.Sprint(result(t, a.call("schedule/create", `{"prompt":`+quote(cmd)+`,"every":"1h","sessionId":`+quote(sid)+`}`))["schedule"].(map[string]any)["scheduleId"])
	result(t, a.call("schedule/run", `{"scheduleId":`+quote(id)+`}`))
	req := a.until("approval_request")
	var waiting map[string]any
	for deadline := time.Now().Add(20 * time.Second); waiting == nil; time.Sleep(10 * time.Millisecond) {
		l := result(t, a.call("schedule/list", `{}`))["schedules"].([]any)[0].(map[string]any)
		waiting, _ = l["waiting"].(map[string]any)
		if time.Now().After(deadline) {
			t.Fatalf("schedule/list never said the run waits: %v", l)
		}
	}
	if waiting["kind"] != "approval" || waiting["requestId"] != req["requestId"] || waiting["sessionId"] != sid {
		t.Fatalf("waiting: %v, the request %v", waiting, req)
	}
	// Another schedule/run meanwhile is refused, and changes nothing:
	// the last run is still the one under way.
	before := result(t, a.call("schedule/list", `{}`))["schedules"].([]any)[0].(map[string]any)["lastRun"]
	if e := a.call("schedule/run", `{"scheduleId":`+quote(id)+`}`); errCode(e) != -32002 {
		t.Fatalf("schedule/run while a run is under way: %v", e)
	}
	l := result(t, a.call("schedule/list", `{}`))["schedules"].([]any)[0].(map[string]any)
	if last := l["lastRun"].(map[string]any); last["state"] != "started" || fmt.Sprint(last) != fmt.Sprint(before) || l["waiting"] == nil {
		t.Fatalf("after a refused schedule/run: %v, before %v", l, before)
	}
	result(t, a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(fmt.Sprint(req["requestId"]))+`,"decision":"allow_once"}`))
	for u := a.until("schedule_update"); u["run"].(map[string]any)["state"] != "completed"; u = a.until("schedule_update") {
	}
	l = result(t, a.call("schedule/list", `{}`))["schedules"].([]any)[0].(map[string]any)
	if l["waiting"] != nil {
		t.Fatalf("still waiting after the answer: %v", l)
	}

	// approve: rules: nothing is asked, the command is refused.
	result(t, a.call("schedule/update", `{"scheduleId":`+quote(id)+`,"approve":"rules"}`))
	result(t, a.call("schedule/run", `{"scheduleId":`+quote(id)+`}`))
	refused := fmt.Sprint(a.until("tool_result")["rawOutput"])
	if !strings.Contains(refused, "approve: rules") {
		t.Fatalf("the command under approve: rules: %q", refused)
	}
	for u := a.until("schedule_update"); u["run"].(map[string]any)["state"] != "completed"; u = a.until("schedule_update") {
	}
	for _, e := range eventsOf(a.snapshot(), sid) {
		if e["type"] == "approval_request" && e["requestId"] != req["requestId"] {
			t.Fatalf("a run under approve: rules asked: %v", e)
		}
	}
}

// Three failed runs in a row pause the schedule, with the reason.
func TestScheduleFailingThreeTimesPauses(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	id := fmt.Sprint(result(t, a.call("schedule/create", `{"prompt":"/fail the model is down","every":"1s","sessionId":`+quote(sid)+`}`))["schedule"].(map[string]any)["scheduleId"])
	failed := 0
	for failed < 3 {
		u := a.until("schedule_update")
		if run := u["run"].(map[string]any); run["state"] == "failed" {
			if !strings.Contains(fmt.Sprint(run["reason"]), "the model is down") {
				t.Fatalf("a failed run's reason: %v", run)
			}
			failed++
		}
	}
	var l map[string]any
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l = result(t, a.call("schedule/list", `{}`))["schedules"].([]any)[0].(map[string]any)
		if l["enabled"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not paused after 3 failures: %v", l)
		}
	}
	if l["scheduleId"] != id || !strings.Contains(fmt.Sprint(l["pausedReason"]), "its last 3 runs failed") || l["failures"] != 3.0 {
		t.Fatalf("the paused schedule: %v", l)
	}
	// Resumed: its failures are forgotten.
	res := result(t, a.call("schedule/update", `{"scheduleId":`+quote(id)+`,"enabled":true}`))["schedule"].(map[string]any)
	if res["pausedReason"] != nil || res["failures"] != nil {
		t.Fatalf("resumed: %v", res)
	}
	result(t, a.call("schedule/delete", `{"scheduleId":`+quote(id)+`}`))
}
