package daemon

import (
	"strings"
	"testing"
)

// A steer during a streaming turn joins the model's next call; the turn
// ends on its answer; the steer is in the history as a steered
// user_message of the turn. With no turn running it is promptRequired,
// or starts one; a steer for another turn is refused naming the running
// one.
func TestSteer(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	steer := func(params string) map[string]any {
		return a.call("session/steer", `{"sessionId":`+quote(sid)+`,`+params+`}`)
	}
	done := a.send("session/prompt", prompt(sid, "/delay 10\n/chunks 100"))
	first := a.until("user_message")
	turn := first["turnId"].(string)
	if !strings.HasPrefix(turn, "turn_") {
		t.Fatalf("user_message %v", first)
	}
	a.until("agent_message_chunk")
	if g := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`)); g["runningTurnId"] != turn {
		t.Errorf("session/get runningTurnId %v, want %s", g["runningTurnId"], turn)
	}
	if r := steer(`"prompt":"x","expectedTurnId":"turn_other"`); errCode(r) != -32002 || r["error"].(map[string]any)["data"].(map[string]any)["runningTurnId"] != turn {
		t.Errorf("a steer for another turn: %v", r)
	}
	res := result(t, steer(`"prompt":"use the other file","expectedTurnId":"`+turn+`"`))
	if res["outcome"] != "injected" || res["turnId"] != turn {
		t.Fatalf("steer: %v", res)
	}
	pr := result(t, a.wait(done, "prompt"))
	if pr["turnId"] != turn || pr["content"] != "echo: use the other file" {
		t.Errorf("the turn's answer %v", pr)
	}
	steered := a.until("user_message")
	if steered["steered"] != true || steered["text"] != "use the other file" || steered["turnId"] != turn {
		t.Errorf("the steer in the history %v", steered)
	}
	if tc := a.until("turn_complete"); tc["turnId"] != turn {
		t.Errorf("turn_complete %v", tc)
	}
	// No turn: nothing, or a new one.
	if res := result(t, steer(`"prompt":"idle"`)); res["outcome"] != "promptRequired" {
		t.Errorf("an idle steer: %v", res)
	}
	if res := result(t, steer(`"prompt":"start it","idleBehavior":"start"`)); res["outcome"] != "startedNewTurn" {
		t.Errorf("an idle steer that starts: %v", res)
	}
	if tc := a.until("turn_complete"); tc["content"] != "echo: start it" {
		t.Errorf("the started turn %v", tc)
	}
}

// A steer racing the turn's end is injected (and the model sees it,
// once) or answered promptRequired (and nothing runs): never both,
// never lost.
func TestSteerRacingTheTurnsEnd(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	injected, required := 0, 0
	for i := range 200 {
		text := "steer " + ftoa(float64(i))
		done := a.send("session/prompt", prompt(sid, "hi"))
		res := result(t, a.call("session/steer", `{"sessionId":`+quote(sid)+`,"prompt":`+quote(text)+`}`))
		result(t, a.wait(done, "prompt")) // after the turn, steers and all
		seen := 0
		for _, e := range history(t, a, sid) {
			if e["type"] == "user_message" && e["text"] == text {
				seen++
			}
		}
		switch res["outcome"] {
		case "injected":
			injected++
			if seen != 1 {
				t.Fatalf("steer %d injected, seen %d times", i, seen)
			}
		case "promptRequired":
			required++
			if seen != 0 {
				t.Fatalf("steer %d answered promptRequired, yet seen %d times", i, seen)
			}
		default:
			t.Fatalf("steer %d: %v", i, res)
		}
	}
	t.Logf("of 200 racing steers: %d injected, %d promptRequired", injected, required)
}
