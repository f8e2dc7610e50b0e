package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/schema/schematest"
)

// minimalParams are, for every method of the table, the smallest params
// docs/protocol.md allows ("$SID" stands for a session session/new made,
// "$CWD" for a directory; value, when set, is the member whose value the
// daemon refuses although the params are whole: no queued prompt has
// that id). A new method needs its line here.
var minimalParams = []struct{ method, params, value string }{
	{"initialize", `{}`, ""},
	{"status", `{}`, ""},
	{"session/new", `{}`, ""},
	{"session/new", `{"sessionId":"$SID","cwd":"$CWD"}`, ""},
	{"session/prompt", `{"sessionId":"$SID","prompt":"hi"}`, ""},
	{"session/steer", `{"sessionId":"$SID","prompt":"hi"}`, ""},
	{"session/await", `{"sessionId":"$SID","clientMessageId":"m-none"}`, "clientMessageId"},
	{"session/queue", `{"sessionId":"$SID"}`, ""},
	{"session/queue/remove", `{"sessionId":"$SID","id":"q_none"}`, "id"},
	{"session/queue/steer", `{"sessionId":"$SID","id":"q_none"}`, "id"},
	{"session/queue/clear", `{"sessionId":"$SID"}`, ""},
	{"process/list", `{"sessionId":"$SID"}`, ""},
	{"process/output", `{"sessionId":"$SID","id":"p_none"}`, "id"},
	{"process/kill", `{"sessionId":"$SID","id":"p_none"}`, "id"},
	{"process/write", `{"sessionId":"$SID","id":"p_none","input":""}`, "id"},
	{"session/cancel", `{"sessionId":"$SID"}`, ""},
	{"session/approve", `{"sessionId":"$SID","requestId":"apr_none","decision":"allow_once"}`, ""},
	{"session/list", `{}`, ""},
	{"session/history", `{"sessionId":"$SID"}`, ""},
	{"session/event", `{"sessionId":"$SID","seq":1}`, ""},
	{"session/get", `{"sessionId":"$SID"}`, ""},
	{"session/rename", `{"sessionId":"$SID","title":""}`, ""},
	{"session/watch", `{}`, ""},
	{"session/configure", `{"sessionId":"$SID"}`, ""},
	{"models", `{}`, ""},
	{"session/checkpoints", `{"sessionId":"$SID"}`, ""},
	{"session/diff", `{"sessionId":"$SID"}`, ""},
	{"session/rewind", `{"sessionId":"$SID","turn":1}`, ""},
	{"session/fork", `{"sessionId":"$SID"}`, ""},
	{"session/export", `{"sessionId":"$SID","format":"json"}`, ""},
	{"session/mcp", `{"sessionId":"$SID"}`, ""},
	{"session/compact", `{"sessionId":"$SID"}`, ""},
	{"file/attach", `{"files":[{"dataB64":"aGk="}]}`, ""},
	{"file/upload", `{"dataB64":"aGk="}`, ""},
	{"permissions/list", `{}`, ""},
	{"permissions/revoke", `{"id":"ans_none"}`, ""},
	{"gateway/pair", `{}`, ""},
	{"gateway/tokens", `{}`, ""},
	{"gateway/revoke", `{"tokenId":"tok_none"}`, ""},
	{"daemon/reload", `{}`, ""},
	{"session/goal", `{"sessionId":"$SID","objective":"finish"}`, ""},
	{"session/goal/pause", `{"sessionId":"$SID"}`, ""},
	{"session/goal/resume", `{"sessionId":"$SID"}`, ""},
	{"session/goal/clear", `{"sessionId":"$SID"}`, ""},
	{"schedule/create", `{"prompt":"hi","every":"1h","sessionId":"$SID"}`, ""},
	{"schedule/list", `{}`, ""},
	{"schedule/update", `{"scheduleId":"sch_none"}`, "scheduleId"},
	{"schedule/run", `{"scheduleId":"sch_none"}`, "scheduleId"},
	{"schedule/delete", `{"scheduleId":"sch_none"}`, ""},
	{"session/close", `{"sessionId":"$SID"}`, ""},
	{"session/delete", `{"sessionId":"$SID"}`, ""},
	{"shutdown", `{}`, ""},
}

// For every method, the smallest params the docs allow are valid against
// the published schema, and the daemon takes them: whatever it answers
// (a session that is gone, nothing to rewind), it is not "invalid
// params".
func TestMinimalParamsPerMethod(t *testing.T) {
	have := map[string]bool{}
	for _, c := range minimalParams {
		have[c.method] = true
	}
	for _, m := range Methods() {
		if !have[m] {
			t.Errorf("%s has no minimal params in this test", m)
		}
	}
	p := servePeer(t, Peer{Label: "owner", UID: os.Geteuid()}, nil)
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("A"), 0o644)
	sid := "min"
	for i, c := range minimalParams {
		params := strings.NewReplacer("$SID", sid, "$CWD", strings.Trim(quoteJSON(cwd), `"`)).Replace(c.params)
		schematest.Params(t, c.method, []byte(params))
		m := p.ask(i+1, c.method, params)
		if code, msg, _ := errorOf(m); code == -32602 && (c.value == "" || !strings.HasPrefix(msg, "invalid params: "+c.value+": ")) {
			t.Errorf("%s %s: refused as invalid params: %s", c.method, params, msg)
		}
		if c.method == "session/new" && sid == "min" {
			sid = result(t, m)["sessionId"].(string) // the id the daemon gave
		}
	}
}
