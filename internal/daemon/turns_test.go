package daemon

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func approveFrame(sid, req, decision string) string {
	return `{"sessionId":` + quote(sid) + `,"requestId":` + quote(req) + `,"decision":"` + decision + `"}`
}

func TestCancelMidStreamAndMidShell(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	done := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 1000"))
	a.until("agent_message_chunk")
	a.until("agent_message_chunk")
	if c := result(t, a.call("session/cancel", `{"sessionId":`+quote(sid)+`}`)); c["cancelled"] != true {
		t.Fatalf("cancel: %v", c)
	}
	res := result(t, a.wait(done, "prompt"))
	content := res["content"].(string)
	if res["stopReason"] != "cancelled" || !strings.HasPrefix(content, "ok ok ") || len(content) >= 3000 {
		t.Fatalf("cancelled result %v", res)
	}
	tc := a.until("turn_complete")
	if tc["outcome"] != "cancelled" || tc["content"] != content {
		t.Errorf("turn_complete %v", tc)
	}
	// Streamed text equals the partial content.
	var streamed string
	for _, e := range a.snapshot() {
		if e["type"] == "agent_message_chunk" {
			streamed += e["text"].(string)
		}
	}
	if streamed != content {
		t.Errorf("streamed %d bytes, result %d", len(streamed), len(content))
	}
	// Nothing running: cancel says so, not an error.
	if c := result(t, a.call("session/cancel", `{"sessionId":`+quote(sid)+`}`)); c["cancelled"] != false {
		t.Errorf("idle cancel: %v", c)
	}

	done = a.send("session/prompt", prompt(sid, `/tool shell {"command":"sleep 30"}`))
	a.until("tool_call")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	a.call("session/cancel", `{"sessionId":`+quote(sid)+`}`)
	res = result(t, a.wait(done, "prompt"))
	if res["stopReason"] != "cancelled" || time.Since(start) > 4*time.Second {
		t.Errorf("shell cancel: %v after %s", res, time.Since(start))
	}
	tr := a.until("tool_result")
	if tr["isError"] != true || !strings.Contains(tr["rawOutput"].(string), "[cancelled]") {
		t.Errorf("shell result %v", tr)
	}
	// The session goes on.
	if res := result(t, a.call("session/prompt", prompt(sid, "still here"))); res["content"] != "echo: still here" {
		t.Errorf("after cancel: %v", res)
	}
}

func TestApprovalTimeoutRejectAndAllowAlways(t *testing.T) {
	r := startWith(t, "[daemon]\napproval_timeout_secs = 1\n"+echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	write := func(name string) string {
		return `/tool write_file {"path":"` + name + `","content":"x"}`
	}
	// Timeout: a rejection by "timeout".
	done := a.send("session/prompt", prompt(sid, write("t.txt")))
	req := a.until("approval_request")
	if req["timeoutSecs"].(float64) != 1 || len(req["options"].([]any)) != 8 {
		t.Errorf("request %v", req)
	}
	res := a.until("approval_resolved")
	if res["by"] != "timeout" || res["decision"] != "reject_once" {
		t.Errorf("timeout resolution %v", res)
	}
	if tr := a.until("tool_result"); tr["isError"] != true || !strings.Contains(tr["rawOutput"].(string), "no approval within 1 s") {
		t.Errorf("timeout result %v", tr)
	}
	a.wait(done, "prompt")
	// An answer after the timeout is not accepted.
	if late := result(t, a.call("session/approve", approveFrame(sid, req["requestId"].(string), "allow_once"))); late["accepted"] != false {
		t.Errorf("late answer %v", late)
	}

	// Reject with a reason.
	done = a.send("session/prompt", prompt(sid, write("r.txt")))
	req = a.until("approval_request")
	a.call("session/approve", `{"sessionId":`+quote(sid)+`,"requestId":`+quote(req["requestId"].(string))+`,"decision":"reject_once","reason":"not now"}`)
	if tr := a.until("tool_result"); !strings.Contains(tr["rawOutput"].(string), "rejected by the user: not now") {
		t.Errorf("reject result %v", tr)
	}
	a.wait(done, "prompt")

	// allow_always: asked once, then never again for that tool.
	done = a.send("session/prompt", prompt(sid, write("a.txt")))
	req = a.until("approval_request")
	a.call("session/approve", approveFrame(sid, req["requestId"].(string), "allow_always"))
	if tr := a.until("tool_result"); tr["isError"] != false {
		t.Errorf("allowed result %v", tr)
	}
	a.wait(done, "prompt")
	before := len(a.snapshot())
	res2 := result(t, a.call("session/prompt", prompt(sid, write("b.txt"))))
	if !strings.Contains(res2["content"].(string), "returned: wrote 1 bytes") {
		t.Errorf("second write %v", res2)
	}
	for _, e := range a.snapshot()[before:] {
		if e["type"] == "approval_request" {
			t.Error("asked again after allow_always")
		}
	}
	// Bad decision: a clear params error.
	if e := a.call("session/approve", approveFrame(sid, "apr_x", "maybe")); errCode(e) != -32602 {
		t.Errorf("bad decision: %v", e)
	}
}

func TestAskUserThroughElicitation(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, `{"elicitation":{"form":{}}}`)
	sid := newSession(t, a, "")
	ask := func(reply string, extra string) string {
		a.onRequest = func(method string, params map[string]any) string {
			if method != "elicitation/create" || params["sessionId"] != sid || params["mode"] != "form" || params["message"] != "Colour?" {
				t.Errorf("request %s %v", method, params)
			}
			return reply
		}
		res := result(t, a.call("session/prompt", prompt(sid, `/tool ask_user {"question":"Colour?","choices":["red","blue"]`+extra+`}`)))
		return res["content"].(string)
	}
	for _, tc := range []struct{ name, reply, extra, want string }{
		{"accept", `"result":{"action":"accept","content":{"answer":"blue"}}`, "", "tool ask_user returned: the user answered: blue"},
		{"decline", `"result":{"action":"decline"}`, "", "tool ask_user returned: the user declined to answer"},
		{"null result", `"result":null`, "", "tool ask_user returned: the user declined to answer"},
		{"error", `"error":{"code":-1,"message":"no UI"}`, "", "tool ask_user failed: the client failed to ask: jsonrpc error -1: no UI"},
		{"timeout", "", `,"timeout_secs":1`, "tool ask_user failed: the user did not answer within 1s"},
	} {
		if got := ask(tc.reply, tc.extra); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A client without elicitation: the model hears it cannot ask.
	b := connect(t, r.dirs.Endpoint, "")
	sid2 := newSession(t, b, "")
	res := result(t, b.call("session/prompt", prompt(sid2, `/tool ask_user {"question":"x"}`)))
	if !strings.Contains(res["content"].(string), "cannot answer questions") {
		t.Errorf("no elicitation: %v", res)
	}
}

func TestQueueFullLimitAndEviction(t *testing.T) {
	r := startWith(t, "[daemon]\nprompt_queue = 1\nmax_sessions = 2\n"+echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	first := a.send("session/prompt", prompt(sid, "/delay 50\n/chunks 20"))
	a.until("agent_message_chunk")
	second := a.send("session/prompt", prompt(sid, "queued"))
	third := a.call("session/prompt", prompt(sid, "too many"))
	if errCode(third) != -32002 {
		t.Fatalf("third prompt: %v", third)
	}
	if result(t, a.wait(first, "first"))["stopReason"] != "end_turn" || result(t, a.wait(second, "second"))["content"] != "echo: queued" {
		t.Error("queued prompts did not both run")
	}

	// Eviction: a new session of the same mode closes the idle sibling...
	r2 := result(t, a.call("session/new", `{"mode":"code"}`))
	if ev := r2["evicted"].([]any); len(ev) != 1 || ev[0] != sid {
		t.Fatalf("evicted %v, want [%s]", r2["evicted"], sid)
	}
	if e := a.call("session/prompt", prompt(sid, "x")); errCode(e) != -32000 || !strings.Contains(e["error"].(map[string]any)["message"].(string), "not live") {
		t.Errorf("prompt to evicted session: %v", e)
	}
	// ...unless keep_siblings; then the limit applies.
	r3 := result(t, a.call("session/new", `{"mode":"code","keep_siblings":true}`))
	if len(r3["evicted"].([]any)) != 0 {
		t.Errorf("keep_siblings evicted %v", r3["evicted"])
	}
	if e := a.call("session/new", `{"mode":"chat","keep_siblings":true}`); errCode(e) != -32001 {
		t.Errorf("over the limit: %v", e)
	}
	// Another mode is not a sibling: with the flag off, code sessions stay
	// and the limit still holds.
	if e := a.call("session/new", `{"mode":"chat"}`); errCode(e) != -32001 {
		t.Errorf("chat session over the limit: %v", e)
	}
	// The evicted session's history is kept and it can be resumed.
	res := result(t, a.call("session/new", `{"sessionId":`+quote(sid)+`,"mode":"code"}`))
	if res["resumed"] != true || res["messageCount"].(float64) != 4 {
		t.Errorf("resume evicted: %v", res)
	}
	// Params errors are clear.
	for _, bad := range []string{`{"cwd":"relative"}`, `{"cwd":"/no/such/dir"}`, `{"agentAlias":"nope"}`, `{"mode":"x"}`, `{"sessionId":"bad id!"}`} {
		if e := a.call("session/new", bad); errCode(e) != -32602 {
			t.Errorf("session/new %s: %v", bad, e)
		}
	}
	// Acting on a session one is not attached to.
	b := connect(t, r.dirs.Endpoint, "")
	if e := b.call("session/prompt", prompt(sid, "x")); errCode(e) != -32003 {
		t.Errorf("unattached prompt: %v", e)
	}
}

func TestReattachReplaysFromSinceSeq(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	a.send("session/prompt", prompt(sid, "/delay 5\n/chunks 200"))
	var seen float64
	for i := 0; i < 20; i++ {
		seen = a.until("agent_message_chunk")["seq"].(float64)
	}
	a.nc.Close() // vanish mid-turn
	time.Sleep(50 * time.Millisecond)
	b := connect(t, r.dirs.Endpoint, "")
	att := result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`,"mode":"code"}`))
	last := att["lastSeq"].(float64)
	h := result(t, b.call("session/history", `{"sessionId":`+quote(sid)+`,"sinceSeq":`+fmt.Sprint(seen)+`}`))
	b.until("turn_complete")
	// history (seen, last] + live (last, end] = everything after seen, once.
	var seqs []float64
	for _, e := range h["events"].([]any) {
		if s := e.(map[string]any)["seq"].(float64); s <= last {
			seqs = append(seqs, s)
		}
	}
	for _, e := range b.snapshot() {
		seqs = append(seqs, e["seq"].(float64))
	}
	for i, s := range seqs {
		if s != seen+1+float64(i) {
			t.Fatalf("replayed seq %d is %v, want %v (seen %v, attach lastSeq %v)", i, s, seen+1+float64(i), seen, last)
		}
	}
	full := result(t, b.call("session/history", `{"sessionId":`+quote(sid)+`}`))
	if n := len(full["events"].([]any)); float64(n) != seqs[len(seqs)-1] || n != 1+200+4 {
		t.Errorf("history has %d events, last seq %v", n, seqs[len(seqs)-1])
	}
}

// A client that attaches and then never reads is disconnected once it has
// made no progress for the stall timeout while behind; the turn and the
// other client go on, and lose nothing. The stall timeout is short, but
// not so short that the reading client, descheduled for a moment on a
// loaded machine (-race, a disk busy with fsyncs), counts as stuck too: at
// 300 ms it did, one run in four, and lost the prompt's answer with it.
func TestClientThatNeverReadsIsDropped(t *testing.T) {
	r := startWith(t, echoAgent, func(o *Options) { o.StallTimeout = 2 * time.Second })
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")

	stuck, err := net.Dial("unix", r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	fmt.Fprintf(stuck, `{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}`+"\n")
	fmt.Fprintf(stuck, `{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":%s,"keep_siblings":true},"id":2}`+"\n", quote(sid))
	time.Sleep(100 * time.Millisecond) // attached; from now on it reads nothing

	const chunks = 30000
	done := a.send("session/prompt", prompt(sid, fmt.Sprintf("/chunks %d", chunks)))
	a.until("agent_message_chunk")
	// The daemon still answers while the turn streams.
	if st := result(t, a.call("status", `{}`)); st["activeSessions"].(float64) != 1 {
		t.Errorf("status during the turn: %v", st)
	}
	res := result(t, a.wait(done, "prompt"))
	if res["stopReason"] != "end_turn" || len(res["content"].(string)) != 3*chunks {
		t.Fatalf("result %v", res["stopReason"])
	}
	evs := a.snapshot()
	if len(evs) != chunks+5 {
		t.Fatalf("the reading client got %d events, want %d", len(evs), chunks+5)
	}
	checkSeqs(t, evs, 1)

	// The stuck client, behind and making no progress, is cut off.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := result(t, a.call("status", `{}`))
		if st["sessions"].([]any)[0].(map[string]any)["clients"].(float64) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stuck client still attached: %v", st["sessions"])
		}
	}
	// Its socket ends after what the kernel had buffered: far short of
	// the whole stream.
	stuck.SetReadDeadline(time.Now().Add(10 * time.Second))
	n := 0
	br := bufio.NewReader(stuck)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the stuck client's connection was never closed (it read %d events)", n)
			}
			break
		}
		if strings.Contains(string(line), "session/update") {
			n++
		}
	}
	if n >= chunks {
		t.Errorf("stuck client got all %d events: it was never dropped", n)
	}
}

func TestCloseListAndDelete(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	a.call("session/prompt", prompt(sid, "first words"))
	if c := result(t, a.call("session/close", `{"sessionId":`+quote(sid)+`}`)); c["closed"] != true {
		t.Fatalf("close: %v", c)
	}
	if e := a.call("session/prompt", prompt(sid, "x")); errCode(e) != -32000 {
		t.Errorf("prompt after close: %v", e)
	}
	list := result(t, a.call("session/list", `{}`))
	ss := list["sessions"].([]any)
	if list["total"].(float64) != 1 || len(ss) != 1 {
		t.Fatalf("list %v", list)
	}
	if s := ss[0].(map[string]any); s["live"] != false || s["title"] != "first words" || s["lastSeq"].(float64) != 8 || s["messageCount"].(float64) != 2 {
		t.Errorf("listed %v", s)
	}
	if st := result(t, a.call("status", `{}`)); st["activeSessions"].(float64) != 0 {
		t.Errorf("status after close: %v", st)
	}
	if d := result(t, a.call("session/delete", `{"sessionId":`+quote(sid)+`}`)); d["deleted"] != true {
		t.Fatalf("delete: %v", d)
	}
	for _, m := range []string{"session/delete", "session/history"} {
		if e := a.call(m, `{"sessionId":`+quote(sid)+`}`); errCode(e) != -32000 {
			t.Errorf("%s after delete: %v", m, e)
		}
	}
	if e := a.call("session/cancel", `{}`); errCode(e) != -32602 {
		t.Errorf("cancel without sessionId: %v", e)
	}
	if l := result(t, a.call("session/list", `{}`)); l["total"].(float64) != 0 {
		t.Errorf("list after delete %v", l)
	}
}

func TestAttachments(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	src := filepath.Join(t.TempDir(), "report.txt")
	os.WriteFile(src, []byte("quarterly"), 0o644)
	res := result(t, a.call("session/prompt", `{"sessionId":`+quote(sid)+`,"prompt":"read this","attachments":[{"path":`+quote(src)+`},{"dataB64":"iVBORw0KGgo=","mimeType":"image/png"}]}`))
	content := res["content"].(string)
	uploads := filepath.Join(r.dirs.DataDir, "uploads")
	if !strings.HasPrefix(content, "echo: read this\n\n[Document: report.txt] "+uploads+"/") || !strings.Contains(content, "\n[IMAGE:"+uploads+"/") {
		t.Fatalf("prompt with attachments: %q", content)
	}
	fa := result(t, a.call("file/attach", `{"files":[{"path":`+quote(src)+`}]}`))
	f := fa["files"].([]any)[0].(map[string]any)
	if f["deduplicated"] != true || f["sizeBytes"].(float64) != 9 || !strings.HasPrefix(f["refId"].(string), "sha256:") || !strings.Contains(content, f["marker"].(string)) {
		t.Errorf("file/attach %v", f)
	}
	if b, _ := os.ReadFile(f["path"].(string)); string(b) != "quarterly" {
		t.Errorf("stored %q", b)
	}
	for _, bad := range []string{`{"files":[{"path":"relative"}]}`, `{"files":[]}`, `{"files":[{"dataB64":"%%%"}]}`} {
		if e := a.call("file/attach", bad); errCode(e) != -32602 {
			t.Errorf("file/attach %s: %v", bad, e)
		}
	}
	if e := a.call("session/prompt", `{"sessionId":`+quote(sid)+`,"prompt":"x","attachments":[{"path":"/no/such"}]}`); errCode(e) != -32602 ||
		!strings.Contains(e["error"].(map[string]any)["message"].(string), "attachments[0]") {
		t.Errorf("bad attachment: %v", e)
	}
}
