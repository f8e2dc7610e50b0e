package daemon

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// named is session/prompt's params with a clientMessageId.
func named(sid, text, cmid string) string {
	return `{"sessionId":` + quote(sid) + `,"prompt":` + quote(text) + `,"clientMessageId":` + quote(cmid) + `}`
}

// userMessages counts the session's user_message events with text, in
// its history.
func userMessages(t *testing.T, p *peer, sid, text string) int {
	t.Helper()
	n := 0
	for _, e := range result(t, p.call("session/history", `{"sessionId":`+quote(sid)+`,"limit":10000}`))["events"].([]any) {
		e := e.(map[string]any)
		if e["type"] == "user_message" && e["text"] == text {
			n++
		}
	}
	return n
}

// inputUpdates are the input_update events seen of the input cmid names,
// as "state" or "state:reason".
func inputUpdates(p *peer, cmid string) []string {
	var out []string
	for _, e := range p.snapshot() {
		if e["type"] == "input_update" && e["clientMessageId"] == cmid {
			s := e["state"].(string)
			if r, _ := e["reason"].(string); r != "" {
				s += ":" + r
			}
			out = append(out, s)
		}
	}
	return out
}

// A prompt sent twice under one clientMessageId runs once: the second
// is answered with the first one's result, duplicate, and nothing is
// added to the history; its fate is told as input_update events, the
// turn's claim and end around its user_message and turn_complete.
func TestClientMessageIDRunsOnce(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	first := result(t, a.call("session/prompt", named(sid, "only once", "m-1")))
	if first["stopReason"] != "end_turn" || first["content"] != "echo: only once" || first["duplicate"] == true ||
		!strings.HasPrefix(fmt.Sprint(first["inputId"]), "in_") || !strings.HasPrefix(fmt.Sprint(first["turnId"]), "turn_") {
		t.Fatalf("the first: %v", first)
	}
	again := result(t, a.call("session/prompt", named(sid, "only once", "m-1")))
	if again["duplicate"] != true || again["content"] != "echo: only once" || again["turnId"] != first["turnId"] || again["inputId"] != first["inputId"] {
		t.Fatalf("sent again: %v", again)
	}
	if n := userMessages(t, a, sid, "only once"); n != 1 {
		t.Fatalf("%d user_messages", n)
	}
	if got := strings.Join(inputUpdates(a, "m-1"), " "); got != "started completed" {
		t.Fatalf("input_update states: %s", got)
	}
	evs := eventsOf(a.snapshot(), sid)
	var types []string
	for _, e := range evs {
		types = append(types, e["type"].(string))
		if e["type"] == "input_update" && e["turnId"] != first["turnId"] {
			t.Errorf("an input_update of another turn: %v", e)
		}
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "input_update user_message ") || !strings.HasSuffix(got, " input_update turn_complete") {
		t.Errorf("the turn's events: %s", got)
	}
	// Another session's same id is another input.
	other := newSession(t, a, "")
	if res := result(t, a.call("session/prompt", named(other, "elsewhere", "m-1"))); res["duplicate"] == true || res["content"] != "echo: elsewhere" {
		t.Fatalf("the same id in another session: %v", res)
	}
	// A malformed id is refused.
	for _, bad := range []string{"", "has space", strings.Repeat("x", 129), "ünï"} {
		if bad == "" {
			continue // absent: no id
		}
		if e := a.call("session/prompt", named(sid, "x", bad)); errCode(e) != -32602 || !strings.Contains(fmt.Sprint(e), "clientMessageId") {
			t.Errorf("clientMessageId %q: %v", bad, e)
		}
	}
}

// The same prompt sent 100 times at once from 10 connections runs once:
// one answer is the turn's own, every other a duplicate.
func TestDuplicatePromptsFromManyConnectionsRunOnce(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	var peers []*peer
	for range 10 {
		p := connect(t, r.dirs.Endpoint, "")
		result(t, p.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`))
		peers = append(peers, p)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	own, dups := 0, 0
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := peers[i%10]
			res := result(t, p.wait(p.send("session/prompt", named(sid, "/delay 5\n/chunks 20\nat most once", "dup-1")), "prompt"))
			mu.Lock()
			defer mu.Unlock()
			if res["duplicate"] == true {
				dups++
			} else if res["stopReason"] == "end_turn" {
				own++
			}
		}()
	}
	wg.Wait()
	if own != 1 || dups != 99 {
		t.Fatalf("%d answers of the turn, %d duplicates", own, dups)
	}
	if n := userMessages(t, a, sid, "/delay 5\n/chunks 20\nat most once"); n != 1 {
		t.Fatalf("%d user_messages", n)
	}
}

// session/await: a client whose connection went while its prompt ran
// gets the result from another connection; one that asks after the
// end gets it at once; an unknown id is -32602.
func TestAwaitAPromptsResult(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	a.send("session/prompt", named(sid, "/delay 20\n/chunks 30\nawaited", "aw-1"))
	a.until("agent_message_chunk")
	a.nc.Close() // the connection goes; the turn goes on
	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`}`))
	res := result(t, b.call("session/await", `{"sessionId":`+quote(sid)+`,"clientMessageId":"aw-1"}`))
	if res["stopReason"] != "end_turn" || !strings.HasPrefix(res["content"].(string), "echo: awaited") {
		t.Fatalf("awaited: %v", res)
	}
	if again := result(t, b.call("session/await", `{"sessionId":`+quote(sid)+`,"clientMessageId":"aw-1"}`)); again["turnId"] != res["turnId"] {
		t.Fatalf("awaited after the end: %v", again)
	}
	if e := b.call("session/await", `{"sessionId":`+quote(sid)+`,"clientMessageId":"never-sent"}`); errCode(e) != -32602 {
		t.Fatalf("an unknown id: %v", e)
	}
}

// Fates other than a turn's: queued behind a running turn, then removed
// (cancelled: sent again, the same answer); a full queue refuses (sent
// again later, it runs); a prompt queued when its session closes is
// discarded.
func TestInputFates(t *testing.T) {
	r := startWith(t, echoAgent+"[daemon]\nprompt_queue = 1\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 40"))
	a.until("agent_message_chunk")
	queued := a.send("session/prompt", named(sid, "waits", "q-1"))
	if e := a.call("session/prompt", named(sid, "no room", "full-1")); errCode(e) != -32002 {
		t.Fatalf("a full queue: %v", e)
	}
	for !strings.Contains(strings.Join(inputUpdates(a, "q-1"), " "), "queued") {
		a.until("input_update")
	}
	items := result(t, a.call("session/queue", `{"sessionId":`+quote(sid)+`}`))["items"].([]any)
	qid := items[0].(map[string]any)["id"].(string)
	result(t, a.call("session/queue/remove", `{"sessionId":`+quote(sid)+`,"id":`+quote(qid)+`}`))
	if res := result(t, a.wait(queued, "queued prompt")); res["stopReason"] != "cancelled" {
		t.Fatalf("the removed prompt: %v", res)
	}
	if again := result(t, a.call("session/prompt", named(sid, "waits", "q-1"))); again["duplicate"] != true || again["stopReason"] != "cancelled" {
		t.Fatalf("the removed prompt sent again: %v", again)
	}
	result(t, a.wait(running, "running prompt"))
	if got := strings.Join(inputUpdates(a, "q-1"), " "); got != "queued cancelled:removed from the queue" {
		t.Errorf("q-1's fates: %s", got)
	}
	if got := inputUpdates(a, "full-1"); len(got) != 1 || !strings.HasPrefix(got[0], "refused:") {
		t.Errorf("full-1's fates: %v", got)
	}
	// Refused was not taken: sent again, it runs.
	if res := result(t, a.call("session/prompt", named(sid, "no room", "full-1"))); res["duplicate"] == true || res["content"] != "echo: no room" {
		t.Fatalf("the refused prompt sent again: %v", res)
	}

	// Closed with a prompt queued: discarded.
	running = a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 40"))
	a.until("agent_message_chunk")
	queued = a.send("session/prompt", named(sid, "never runs", "d-1"))
	for !strings.Contains(strings.Join(inputUpdates(a, "d-1"), " "), "queued") {
		a.until("input_update")
	}
	result(t, a.call("session/close", `{"sessionId":`+quote(sid)+`}`))
	if res := result(t, a.wait(queued, "queued prompt")); res["stopReason"] != "cancelled" {
		t.Fatalf("the discarded prompt: %v", res)
	}
	a.wait(running, "running prompt")
	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`}`))
	h := result(t, b.call("session/history", `{"sessionId":`+quote(sid)+`,"limit":10000}`))["events"].([]any)
	var fates []string
	for _, e := range h {
		if e := e.(map[string]any); e["type"] == "input_update" && e["clientMessageId"] == "d-1" {
			fates = append(fates, fmt.Sprint(e["state"]))
		}
	}
	if strings.Join(fates, " ") != "queued discarded" {
		t.Fatalf("d-1's fates in the history: %v", fates)
	}
}

// A steer sent twice under one clientMessageId is steered once.
func TestSteerRunsOnce(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 30"))
	a.until("agent_message_chunk")
	steer := `{"sessionId":` + quote(sid) + `,"prompt":"steered once","clientMessageId":"st-1"}`
	one := result(t, a.call("session/steer", steer))
	two := result(t, a.call("session/steer", steer))
	if one["outcome"] != "injected" || one["duplicate"] == true || two["outcome"] != "injected" || two["duplicate"] != true || two["turnId"] != one["turnId"] {
		t.Fatalf("steered: %v, again: %v", one, two)
	}
	result(t, a.wait(running, "prompt"))
	if n := userMessages(t, a, sid, "steered once"); n != 1 {
		t.Fatalf("%d steered user_messages", n)
	}
}

// After a restart, a prompt sent again under its clientMessageId is
// answered from the store: it does not run again.
func TestClientMessageIDAcrossARestart(t *testing.T) {
	dirs := testDirs(t)
	r := startOn(t, dirs, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	first := result(t, a.call("session/prompt", named(sid, "before the restart", "rs-1")))
	r.stop()
	r.wait(t)
	r2 := startOn(t, dirs, echoAgent)
	b := connect(t, r2.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`}`))
	again := result(t, b.call("session/prompt", named(sid, "before the restart", "rs-1")))
	if again["duplicate"] != true || again["content"] != "echo: before the restart" || again["turnId"] != first["turnId"] {
		t.Fatalf("sent again after the restart: %v", again)
	}
	if n := userMessages(t, b, sid, "before the restart"); n != 1 {
		t.Fatalf("%d user_messages", n)
	}
	if res := result(t, b.call("session/await", `{"sessionId":`+quote(sid)+`,"clientMessageId":"rs-1"}`)); res["turnId"] != first["turnId"] {
		t.Fatalf("awaited after the restart: %v", res)
	}
}

// session/queue/steer names a queued prompt by the clientMessageId it
// was sent with: moved once, and asked again it answers the first move's
// outcome (duplicate) and moves nothing; an unknown id, a prompt that
// ran as its own turn, or both names at once are -32602.
func TestQueueSteerByClientMessageID(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	steerBy := func(cmid string) map[string]any {
		return a.call("session/queue/steer", `{"sessionId":`+quote(sid)+`,"clientMessageId":`+quote(cmid)+`}`)
	}
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 30"))
	a.until("agent_message_chunk")
	queued := a.send("session/prompt", named(sid, "join the turn", "join-1"))
	for !strings.Contains(strings.Join(inputUpdates(a, "join-1"), " "), "queued") {
		a.until("input_update")
	}
	moved := result(t, steerBy("join-1"))
	if moved["outcome"] != "injected" || moved["duplicate"] == true || !strings.HasPrefix(fmt.Sprint(moved["turnId"]), "turn_") {
		t.Fatalf("queue/steer by clientMessageId: %v", moved)
	}
	again := result(t, steerBy("join-1"))
	if again["outcome"] != "injected" || again["duplicate"] != true || again["turnId"] != moved["turnId"] {
		t.Fatalf("the same move asked again: %v", again)
	}
	first := result(t, a.wait(running, "the turn"))
	if res := result(t, a.wait(queued, "the moved prompt")); res["turnId"] != first["turnId"] || first["content"] != "echo: join the turn" {
		t.Fatalf("the turn %v, the moved prompt's answer %v", first, res)
	}
	// Once the turn ended, the store tells it.
	if after := result(t, steerBy("join-1")); after["duplicate"] != true || after["turnId"] != first["turnId"] {
		t.Fatalf("asked after the turn: %v", after)
	}
	if n := userMessages(t, a, sid, "join the turn"); n != 1 {
		t.Fatalf("the moved prompt is in the history %d times", n)
	}
	result(t, a.call("session/prompt", named(sid, "its own turn", "own-1")))
	for _, e := range []map[string]any{steerBy("own-1"), steerBy("never-sent"),
		a.call("session/queue/steer", `{"sessionId":`+quote(sid)+`,"id":"q_x","clientMessageId":"join-1"}`),
		a.call("session/queue/steer", `{"sessionId":`+quote(sid)+`}`)} {
		if errCode(e) != -32602 {
			t.Errorf("want -32602: %v", e)
		}
	}
}
