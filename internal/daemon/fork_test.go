package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func history(t *testing.T, p *peer, sid string) []map[string]any {
	t.Helper()
	h := result(t, p.call("session/history", `{"sessionId":`+quote(sid)+`,"limit":10000}`))
	var out []map[string]any
	for _, e := range h["events"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// A fork at a seq inside a turn ends at that turn's start: its history
// is the source's events up to there (its own id, seqs from 1), its
// model sees the conversation up to there, session/get says where it
// came from, and the source is untouched.
func TestForkInTheMiddleOfATurn(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	src := newSession(t, a, "")
	for _, p := range []string{"one", "/think hmm\ntwo", "three"} {
		result(t, a.call("session/prompt", prompt(src, p)))
	}
	evs := history(t, a, src)
	var mid float64 // an event inside turn 2
	turnStart := 0.0
	for _, e := range evs {
		if e["type"] == "user_message" && e["text"] == "/think hmm\ntwo" {
			turnStart = e["seq"].(float64)
		}
		if turnStart > 0 && e["type"] == "agent_thought_chunk" {
			mid = e["seq"].(float64)
			break
		}
	}
	srcInfo := result(t, a.call("session/get", `{"sessionId":`+quote(src)+`}`))
	res := result(t, a.call("session/fork", `{"sessionId":`+quote(src)+`,"atSeq":`+ftoa(mid)+`,"newSessionId":"fork-1"}`))
	if res["sessionId"] != "fork-1" {
		t.Fatalf("fork: %v", res)
	}
	info := result(t, a.call("session/get", `{"sessionId":"fork-1"}`))
	from, _ := info["forkedFrom"].(map[string]any)
	if from["sessionId"] != src || from["seq"] != mid || info["lastSeq"] != turnStart-1 || info["messageCount"] != 2.0 || info["cwd"] != srcInfo["cwd"] {
		t.Errorf("the fork: %v", info)
	}
	fevs := history(t, a, "fork-1")
	if len(fevs) != int(turnStart-1) {
		t.Fatalf("the fork's history has %d events, want %v", len(fevs), turnStart-1)
	}
	for i, e := range fevs {
		if e["sessionId"] != "fork-1" || e["seq"] != float64(i+1) || e["type"] != evs[i]["type"] || e["text"] != evs[i]["text"] {
			t.Fatalf("fork event %d: %v, source's %v", i, e, evs[i])
		}
	}
	if after := result(t, a.call("session/get", `{"sessionId":`+quote(src)+`}`)); after["lastSeq"] != srcInfo["lastSeq"] || after["messageCount"] != srcInfo["messageCount"] {
		t.Errorf("the source changed: %v, was %v", after, srcInfo)
	}
	// The fork goes on by itself.
	result(t, a.call("session/new", `{"sessionId":"fork-1"}`))
	if res := result(t, a.call("session/prompt", prompt("fork-1", "in the fork"))); res["content"] != "echo: in the fork" {
		t.Errorf("prompt in the fork: %v", res)
	}
	if n := result(t, a.call("session/get", `{"sessionId":"fork-1"}`))["messageCount"]; n != 4.0 {
		t.Errorf("the fork's transcript holds %v messages, want 4", n)
	}
	// A fork of all of it; bad seqs and ids are refused.
	all := result(t, a.call("session/fork", `{"sessionId":`+quote(src)+`}`))["sessionId"].(string)
	if got := result(t, a.call("session/get", `{"sessionId":`+quote(all)+`}`)); got["lastSeq"] != srcInfo["lastSeq"] || got["messageCount"] != srcInfo["messageCount"] {
		t.Errorf("a fork of everything: %v", got)
	}
	if r := a.call("session/fork", `{"sessionId":`+quote(src)+`,"atSeq":99999}`); errCode(r) != -32602 {
		t.Errorf("a fork past the end: %v", r)
	}
	if r := a.call("session/fork", `{"sessionId":`+quote(src)+`,"newSessionId":"fork-1"}`); errCode(r) != -32602 {
		t.Errorf("a fork onto an existing id: %v", r)
	}
}

// Each export format holds the session; the HTML, opened in headless
// Chromium, runs nothing the model wrote.
func TestExport(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	attack := `<script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">`
	result(t, a.call("session/prompt", prompt(sid, "/think considering\n"+toolLine("write_file", `{"path":"x.txt","content":"hello"}`))))
	result(t, a.call("session/prompt", prompt(sid, attack)))
	export := func(format string) string {
		t.Helper()
		res := result(t, a.call("session/export", `{"sessionId":`+quote(sid)+`,"format":"`+format+`"}`))
		return res["content"].(string)
	}
	md := export("markdown")
	for _, w := range []string{"## Turn 1", "## Turn 2", "*Thinking:*", "**Tool** `write_file` (edit)", `"path":"x.txt"`, "wrote 5 bytes", "echo: " + attack} {
		if !strings.Contains(md, w) {
			t.Errorf("the Markdown lacks %q:\n%s", w, md)
		}
	}
	var doc struct {
		Session struct{ SessionID string }
		Turns   []struct {
			Prompt, Outcome string
			Items           []struct{ Kind, Tool, Output string }
		}
	}
	if err := json.Unmarshal([]byte(export("json")), &doc); err != nil || doc.Session.SessionID != sid || len(doc.Turns) != 2 ||
		doc.Turns[1].Prompt != attack || doc.Turns[0].Outcome != "completed" {
		t.Fatalf("the JSON: %+v %v", doc, err)
	}
	kinds := []string{}
	for _, it := range doc.Turns[0].Items {
		kinds = append(kinds, it.Kind)
	}
	if strings.Join(kinds, " ") != "thought tool text" {
		t.Errorf("turn 1's items %v", kinds)
	}
	page := export("html")
	if strings.Contains(page, "<script") || strings.Contains(page, "<img") || !strings.Contains(page, "&lt;script&gt;") {
		t.Fatalf("the HTML carries the model's markup as markup:\n%s", page)
	}
	if r := a.call("session/export", `{"sessionId":`+quote(sid)+`,"format":"pdf"}`); errCode(r) != -32602 {
		t.Errorf("a bad format: %v", r)
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s to open the HTML in (.ci/run installs it)", chromium)
	}
	file := filepath.Join(t.TempDir(), "session.html")
	os.WriteFile(file, []byte(page), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=2000", "--dump-dom", "file://"+file)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	_, title, _ := strings.Cut(dom, "<title>")
	title, _, _ = strings.Cut(title, "</title>")
	if strings.Contains(title, "pwned") || title == "" || !strings.Contains(dom, "echo: &lt;script&gt;") || strings.Contains(dom, "<img") {
		t.Errorf("in the browser the model's markup ran or the page is not there:\n%s", dom)
	}
}
