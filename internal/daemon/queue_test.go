package daemon

import (
	"slices"
	"strings"
	"testing"
)

// The queue, visible and editable: two clients see the same queue_updates;
// a removed prompt's caller is answered cancelled; clear empties it.
func TestQueueListRemoveClear(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`))
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 1000"))
	a.until("agent_message_chunk")
	first := a.send("session/prompt", prompt(sid, "queued one\nmore lines"))
	second := a.send("session/prompt", prompt(sid, "queued two"))
	var items []any
	for len(items) != 2 {
		items = b.until("queue_update")["items"].([]any)
	}
	q := result(t, a.call("session/queue", `{"sessionId":`+quote(sid)+`}`))["items"].([]any)
	// A client that attaches now is told the queue in the answer.
	c := connect(t, r.dirs.Endpoint, "")
	if att := result(t, c.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`)); len(att["queue"].([]any)) != 2 {
		t.Errorf("the attach answer's queue: %v", att["queue"])
	}
	one := q[0].(map[string]any)
	if len(q) != 2 || one["text"] != "queued one" || one["clientId"] == "" || q[1].(map[string]any)["text"] != "queued two" {
		t.Fatalf("session/queue %v", q)
	}
	res := result(t, b.call("session/queue/remove", `{"sessionId":`+quote(sid)+`,"id":`+quote(one["id"].(string))+`}`))
	if res["removed"] != 1.0 || len(res["items"].([]any)) != 1 {
		t.Errorf("remove: %v", res)
	}
	if r := result(t, a.wait(first, "the removed prompt")); r["stopReason"] != "cancelled" {
		t.Errorf("the removed prompt's answer %v", r)
	}
	for _, p := range []*peer{a, b} {
		for u := p.until("queue_update"); len(u["items"].([]any)) != 1; u = p.until("queue_update") {
		}
	}
	if r := b.call("session/queue/remove", `{"sessionId":`+quote(sid)+`,"id":"q_none"}`); errCode(r) != -32602 {
		t.Errorf("removing what is not queued: %v", r)
	}
	if res := result(t, b.call("session/queue/clear", `{"sessionId":`+quote(sid)+`}`)); res["removed"] != 1.0 || len(res["items"].([]any)) != 0 {
		t.Errorf("clear: %v", res)
	}
	if r := result(t, a.wait(second, "the cleared prompt")); r["stopReason"] != "cancelled" {
		t.Errorf("the cleared prompt's answer %v", r)
	}
	a.call("session/cancel", `{"sessionId":`+quote(sid)+`}`)
	a.wait(running, "the running turn")
}

// A queued prompt moved into the running turn is a steer there, and its
// caller gets that turn's answer.
func TestQueueSteer(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 30"))
	a.until("agent_message_chunk")
	queued := a.send("session/prompt", prompt(sid, "join the turn"))
	var items []any
	for len(items) != 1 {
		items = a.until("queue_update")["items"].([]any)
	}
	id := items[0].(map[string]any)["id"].(string)
	res := result(t, a.call("session/queue/steer", `{"sessionId":`+quote(sid)+`,"id":`+quote(id)+`}`))
	if res["outcome"] != "injected" {
		t.Fatalf("queue/steer: %v", res)
	}
	first, moved := result(t, a.wait(running, "the turn")), result(t, a.wait(queued, "the moved prompt"))
	if first["content"] != "echo: join the turn" || moved["turnId"] != first["turnId"] || moved["content"] != first["content"] {
		t.Errorf("the turn %v, the moved prompt's answer %v", first, moved)
	}
}

// A stopping daemon answers every queued prompt cancelled (the history
// says the queue emptied) and runs none of them after a restart: they
// are answered, never kept to run later nor silently dropped.
func TestQueueAcrossARestart(t *testing.T) {
	dirs := testDirs(t)
	r := startOn(t, dirs, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 1000"))
	a.until("agent_message_chunk")
	first := a.send("session/prompt", prompt(sid, "queued one"))
	second := a.send("session/prompt", prompt(sid, "queued two"))
	for u := a.until("queue_update"); len(u["items"].([]any)) != 2; u = a.until("queue_update") {
	}
	r.stop()
	for _, ch := range []chan map[string]any{first, second} {
		if res := result(t, a.wait(ch, "a queued prompt")); res["stopReason"] != "cancelled" {
			t.Errorf("a queued prompt's answer at the stop: %v", res)
		}
	}
	a.wait(running, "the running turn")
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}

	r = startOn(t, dirs, echoAgent)
	b := connect(t, r.dirs.Endpoint, "")
	if att := result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`}`)); att["queue"] != nil {
		t.Errorf("the queue after a restart: %v", att["queue"])
	}
	if res := result(t, b.call("session/prompt", prompt(sid, "after"))); res["content"] != "echo: after" {
		t.Fatalf("a prompt after the restart: %v", res)
	}
	var last map[string]any
	for _, e := range history(t, b, sid) {
		if e["type"] == "user_message" && strings.HasPrefix(e["text"].(string), "queued") {
			t.Errorf("a queued prompt ran after the restart: %v", e)
		}
		if e["type"] == "queue_update" {
			last = e
		}
	}
	if last == nil || len(last["items"].([]any)) != 0 {
		t.Errorf("the last queue_update %v, want an empty queue", last)
	}
}

// Who is attached: session/get lists the clients (with their names), and
// a watcher is told when one attaches or leaves.
func TestWhoIsAttached(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	result(t, a.call("initialize", `{"protocolVersion":1,"clientInfo":{"name":"terminal","version":"1"}}`))
	result(t, a.call("session/watch", `{}`))
	sid := newSession(t, a, "")
	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("initialize", `{"protocolVersion":1,"clientInfo":{"name":"phone","version":"1"}}`))
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`))
	names := func(info map[string]any) string {
		var n []string
		at, _ := info["attached"].([]any)
		for _, c := range at {
			n = append(n, c.(map[string]any)["clientName"].(string))
		}
		slices.Sort(n)
		return strings.Join(n, ",")
	}
	if got := names(result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))); got != "phone,terminal" {
		t.Errorf("session/get attached: %s", got)
	}
	for ch := range a.changes {
		if names(ch["session"].(map[string]any)) == "phone,terminal" {
			break
		}
	}
	b.nc.Close()
	for ch := range a.changes {
		if names(ch["session"].(map[string]any)) == "terminal" {
			break
		}
	}
}
