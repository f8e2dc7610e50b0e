package daemon

import (
	"testing"
	"time"
)

// change waits for a session/changed notification about sid for which
// ok holds, and returns it.
func (p *peer) change(sid string, what string, ok func(map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ch := <-p.changes:
			if ch["sessionId"] == sid && ok(ch) {
				return ch
			}
		case <-deadline:
			p.t.Fatalf("no session/changed for %s: %s", sid, what)
		}
	}
}

func info(ch map[string]any) map[string]any {
	s, _ := ch["session"].(map[string]any)
	return s
}

// A client that watches the list is told of sessions' changes as they
// commit (created, titled, idle, renamed, deleted; changes that come
// while one is being told are told once, as they stand), without asking; titles read as a person would write them, a name given stays,
// and the list can be searched.
func TestSessionListIsLiveRenamableAndSearchable(t *testing.T) {
	r := startWith(t, echoAgent)
	watcher := connect(t, r.dirs.Endpoint, "")
	if res := result(t, watcher.call("session/watch", `{}`)); res["watching"] != true {
		t.Fatalf("session/watch: %v", res)
	}
	p := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, p, "")
	watcher.change(sid, "created", func(ch map[string]any) bool { return info(ch) != nil })
	p.call("session/prompt", prompt(sid, "# Fix the **login** bug in [auth](http://x/y)\n\nmore words"))
	done := watcher.change(sid, "titled and idle", func(ch map[string]any) bool {
		s := info(ch)
		return s["state"] == "idle" && s["title"] != ""
	})
	if got := info(done)["title"]; got != "Fix the login bug in auth" {
		t.Fatalf("title %q, want the first line without Markdown", got)
	}
	// Renamed by a client that is not attached; the next turn keeps it.
	res := result(t, watcher.call("session/rename", `{"sessionId":`+quote(sid)+`,"title":"  Login\nwork "}`))
	if res["title"] != "Login work" {
		t.Fatalf("rename: %v", res)
	}
	watcher.change(sid, "renamed", func(ch map[string]any) bool { return info(ch)["title"] == "Login work" })
	p.call("session/prompt", prompt(sid, "another"))
	if got := result(t, p.call("session/get", `{"sessionId":`+quote(sid)+`}`))["title"]; got != "Login work" {
		t.Fatalf("after a turn the title is %q", got)
	}
	if r := watcher.call("session/rename", `{"sessionId":"nope","title":"x"}`); r["error"] == nil {
		t.Fatalf("renaming an unknown session: %v", r)
	}
	// Search: title, id or cwd, any case; wildcards are literal.
	other := newSession(t, p, "")
	for q, want := range map[string]int{"LOGIN": 1, sid[4:12]: 1, "nothing like it": 0, "%": 0, "ses%": 0, "s_s": 0} {
		res := result(t, watcher.call("session/list", `{"query":`+quote(q)+`}`))
		if got := len(res["sessions"].([]any)); got != want {
			t.Errorf("query %q: %d sessions, want %d: %v", q, got, want, res)
		}
	}
	if r := watcher.call("session/list", `{"query":"x","offset":3}`); r["error"] == nil {
		t.Errorf("a query with offset paging: %v", r)
	}
	// Deleted: told too.
	watcher.call("session/delete", `{"sessionId":`+quote(other)+`}`)
	watcher.change(other, "deleted", func(ch map[string]any) bool { return ch["deleted"] == true })
}
