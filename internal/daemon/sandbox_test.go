package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// session/configure tightens the sandbox of one session, and keeps it
// across a restart; it never loosens past the config's.
func TestSessionTightensItsSandbox(t *testing.T) {
	if sandbox.Available().EnforcedBy != "landlock" {
		t.Skip("no sandbox here")
	}
	dirs := testDirs(t)
	conf := echoAgent + `risk = "full"` + "\n"
	r := startOn(t, dirs, conf)
	a := connect(t, r.dirs.Endpoint, "")
	cwd := cwdOutsideTemp(t)
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	if st := result(t, a.call("status", `{}`))["sandbox"].(map[string]any); st["mode"] != "workspace-write" || st["enforcedBy"] != "landlock" {
		t.Fatalf("status sandbox %v", st)
	}
	write := func(sid, name string) string {
		res := result(t, a.call("session/prompt", prompt(sid, `/tool shell {"command":"echo x > `+name+` && echo wrote"}`)))
		return res["content"].(string)
	}
	if out := write(sid, "a.txt"); !strings.Contains(out, "wrote") {
		t.Fatalf("workspace-write: %q", out)
	}
	cr := result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"sandbox":"read-only","network":false}`))
	if cr["sandbox"] != "read-only" || cr["network"] != false {
		t.Fatalf("configure: %v", cr)
	}
	if out := write(sid, "b.txt"); strings.Contains(out, "wrote") {
		t.Errorf("read-only wrote: %q", out)
	}
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); err == nil {
		t.Error("b.txt was written under read-only")
	}
	a.nc.Close()
	r.stop()
	r.wait(t)

	r = startOn(t, dirs, conf)
	a = connect(t, r.dirs.Endpoint, "")
	if res := result(t, a.call("session/new", `{"sessionId":`+quote(sid)+`}`)); res["resumed"] != true {
		t.Fatal(res)
	}
	if out := write(sid, "c.txt"); strings.Contains(out, "wrote") {
		t.Errorf("after a restart the session's read-only sandbox was lost: %q", out)
	}
	cr = result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"sandbox":"workspace-write"}`))
	if cr["sandbox"] != "workspace-write" || !strings.Contains(write(sid, "d.txt"), "wrote") {
		t.Errorf("back to the config's: %v", cr)
	}
	if r := a.call("session/configure", `{"sessionId":`+quote(sid)+`,"sandbox":"off"}`); errCode(r) != -32602 {
		t.Errorf("sandbox off per session: %v", r)
	}
}

// Under a read-only config a session may not loosen to workspace-write.
func TestSessionCannotLoosenTheSandbox(t *testing.T) {
	if sandbox.Available().EnforcedBy != "landlock" {
		t.Skip("no sandbox here")
	}
	r := startWith(t, echoAgent+"[sandbox]\nmode = \"read-only\"\nnetwork = false\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	if r := a.call("session/configure", `{"sessionId":`+quote(sid)+`,"sandbox":"workspace-write"}`); errCode(r) != -32602 {
		t.Errorf("loosening to workspace-write: %v", r)
	}
	if r := a.call("session/configure", `{"sessionId":`+quote(sid)+`,"network":true}`); errCode(r) != -32602 {
		t.Errorf("allowing the network: %v", r)
	}
}

// cwdOutsideTemp is a session directory not under the temp dirs (/tmp,
// $TMPDIR), which stay writable in every sandbox mode: under /var/tmp,
// else the home directory (the test is skipped when neither can be
// written). Removed when the test ends.
func cwdOutsideTemp(t *testing.T) string {
	t.Helper()
	for _, base := range []string{"/var/tmp", os.Getenv("HOME")} {
		if base == "" || strings.HasPrefix(base, "/tmp") || (os.Getenv("TMPDIR") != "" && strings.HasPrefix(base, os.Getenv("TMPDIR"))) {
			continue
		}
		if d, err := os.MkdirTemp(base, "zeroclaw-sandbox-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	t.Skip("no writable directory outside the temp dirs")
	return ""
}
