package daemon

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

type onDisk struct {
	data  string
	mode  fs.FileMode
	mtime time.Time
}

// disk reads every file under root: bytes, mode, mtime.
func disk(t *testing.T, root string) map[string]onDisk {
	t.Helper()
	out := map[string]onDisk{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		fi, _ := d.Info()
		rel, _ := filepath.Rel(root, p)
		f := onDisk{mode: fi.Mode(), mtime: fi.ModTime()}
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			f.data = string(b)
		}
		if fi.IsDir() {
			f.mtime = time.Time{}
		}
		out[filepath.ToSlash(rel)] = f
		return nil
	})
	return out
}

func sameDisk(t *testing.T, what string, got, want map[string]onDisk) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok || g.data != w.data || g.mode != w.mode {
			t.Errorf("%s: %s is %+v (there: %v), want %+v", what, p, g, ok, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not be there", what, p)
		}
	}
}

func toolLine(name, args string) string { return "/tool " + name + " " + args }

// A turn writes, edits, creates, deletes, chmods and moves files through
// the file tools and through sh -c; its checkpoint lists each change,
// the diff shows it, and session/rewind puts the directory back byte for
// byte and mode for mode, leaving the files it never touched alone; a
// hand edit since is a conflict; force wins; the rewind can be undone;
// the history says each rewind.
func TestRewindThroughTheDaemon(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh -c")
	}
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	for name, data := range map[string]string{"a.txt": "alpha\n", "run.sh": "echo hi\n", "b.txt": "beta\n", "gone.txt": "bye\n", "keep.txt": "keep\n"} {
		os.WriteFile(filepath.Join(cwd, name), []byte(data), 0o644)
	}
	old := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	os.Chtimes(filepath.Join(cwd, "keep.txt"), old, old)
	start := disk(t, cwd)
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)

	turn1 := toolLine("edit_file", `{"path":"a.txt","old":"alpha","new":"ALPHA"}`) + "\n" +
		toolLine("write_file", `{"path":"made/new.txt","content":"new\n"}`) + "\n" +
		toolLine("shell", `{"command":"echo n > n.txt && chmod +x run.sh && mv b.txt c.txt && rm gone.txt"}`)
	if res := result(t, a.call("session/prompt", prompt(sid, turn1))); res["stopReason"] != "end_turn" {
		t.Fatalf("turn 1: %v", res)
	}
	result(t, a.call("session/prompt", prompt(sid, "a turn that changes nothing")))

	cps := result(t, a.call("session/checkpoints", `{"sessionId":`+quote(sid)+`}`))["checkpoints"].([]any)
	if len(cps) != 2 {
		t.Fatalf("checkpoints %v", cps)
	}
	one := cps[0].(map[string]any)
	got := map[string]string{}
	for _, f := range one["files"].([]any) {
		f := f.(map[string]any)
		got[f["path"].(string)] = f["change"].(string)
	}
	want := map[string]string{"a.txt": "modified", "made/new.txt": "created", "n.txt": "created", "run.sh": "modified",
		"b.txt": "deleted", "c.txt": "created", "gone.txt": "deleted"}
	if one["turn"] != 1.0 || one["title"] != "/tool edit_file {\"path\":\"a.txt\",\"old\":\"alpha\",\"new\":\"ALPHA\"}" || len(got) != len(want) {
		t.Errorf("turn 1's checkpoint %v", one)
	}
	for p, c := range want {
		if got[p] != c {
			t.Errorf("%s: %q, want %q (%v)", p, got[p], c, got)
		}
	}
	if two := cps[1].(map[string]any); two["turn"] != 2.0 || len(two["files"].([]any)) != 0 {
		t.Errorf("turn 2's checkpoint %v", two)
	}
	diff := result(t, a.call("session/diff", `{"sessionId":`+quote(sid)+`,"turn":1}`))["diff"].(string)
	for _, w := range []string{"-alpha\n+ALPHA\n", "old mode 100644\nnew mode 100755\n", "+++ b/made/new.txt\n", "deleted file mode 100644\n"} {
		if !strings.Contains(diff, w) {
			t.Errorf("the diff lacks %q:\n%s", w, diff)
		}
	}

	// Rewinding a turn that changed nothing (and the conversation after
	// it is only itself): files no-op.
	if res := result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":2,"conversation":false}`)); res["rewound"] != true || fmt.Sprint(res["restored"], res["removed"]) != "[] []" {
		t.Errorf("rewinding nothing: %v", res)
	}

	// A hand edit since the agent's: a conflict, nothing changed.
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("mine\n"), 0o644)
	before := disk(t, cwd)
	res := result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":1}`))
	conflicts, _ := res["conflicts"].([]any)
	if res["rewound"] != false || len(conflicts) != 1 || conflicts[0].(map[string]any)["path"] != "a.txt" {
		t.Fatalf("conflict: %v", res)
	}
	sameDisk(t, "after a refused rewind", disk(t, cwd), before)
	if n := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))["messageCount"]; n == 0.0 {
		t.Errorf("a refused rewind cut the conversation")
	}

	// Forced: the directory is as it started, untouched files keep their
	// mtime, and the conversation is cut back to before turn 1.
	res = result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":1,"force":true}`))
	if res["rewound"] != true {
		t.Fatalf("forced rewind: %v", res)
	}
	now := disk(t, cwd)
	sameDisk(t, "after the rewind", now, start)
	if !now["keep.txt"].mtime.Equal(start["keep.txt"].mtime) {
		t.Errorf("keep.txt's mtime moved: %v, was %v", now["keep.txt"].mtime, start["keep.txt"].mtime)
	}
	if n := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))["messageCount"]; n != 0.0 {
		t.Errorf("the conversation after a rewind to turn 1 holds %v messages", n)
	}
	ev := a.until("rewind")
	if ev["turn"] != 1.0 || ev["files"] != true || ev["conversation"] != true || len(ev["overwritten"].([]any)) != 1 {
		t.Errorf("rewind event %v", ev)
	}
	cps = result(t, a.call("session/checkpoints", `{"sessionId":`+quote(sid)+`}`))["checkpoints"].([]any)
	if cps[0].(map[string]any)["rewound"] != true {
		t.Errorf("turn 1 is not marked rewound: %v", cps[0])
	}

	// Undone: the files and the conversation the rewind replaced are back
	// (the hand edit included).
	res = result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"undo":true}`))
	if res["rewound"] != true {
		t.Fatalf("undo: %v", res)
	}
	sameDisk(t, "after undoing the rewind", disk(t, cwd), before)
	if n := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))["messageCount"]; n == 0.0 {
		t.Errorf("undoing the rewind did not give the conversation back")
	}
	if ev := a.until("rewind"); ev["undo"] != true {
		t.Errorf("undo event %v", ev)
	}
	if r := a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":9}`); errCode(r) != -32602 {
		t.Errorf("a rewind to no such turn: %v", r)
	}
}

// A rewind is refused while a turn runs, and changes nothing.
func TestRewindRefusedWhileATurnRuns(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	result(t, a.call("session/prompt", prompt(sid, "one")))
	done := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 500"))
	a.until("agent_message_chunk")
	res := a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":1}`)
	if errCode(res) != -32002 || !strings.Contains(res["error"].(map[string]any)["message"].(string), "a turn is running") {
		t.Errorf("rewind during a turn: %v", res)
	}
	a.call("session/cancel", `{"sessionId":`+quote(sid)+`}`)
	a.wait(done, "prompt")
}
