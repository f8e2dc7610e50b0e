package daemon

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// tmpfsDirs returns daemon directories whose data dir is a tmpfs of the
// given size (root only: CI runs as root).
func tmpfsDirs(t *testing.T, size string) config.Dirs {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a tmpfs data dir needs root to mount: skipped (CI runs as root)")
	}
	data := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", data).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", data).Run() })
	return config.Dirs{ConfigDir: t.TempDir(), DataDir: data, Endpoint: filepath.Join(data, "daemon.sock")}
}

func eventsOf(evs []map[string]any, sid string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["sessionId"] == sid {
			out = append(out, e)
		}
	}
	return out
}

// storedSeqs reads a session's whole history through the socket.
func storedSeqs(t *testing.T, p *peer, sid string) (seqs []float64, last float64) {
	t.Helper()
	since := 0.0
	for {
		h := result(t, p.call("session/history", `{"sessionId":`+quote(sid)+`,"sinceSeq":`+ftoa(since)+`}`))
		for _, e := range h["events"].([]any) {
			seqs = append(seqs, e.(map[string]any)["seq"].(float64))
		}
		last = h["lastSeq"].(float64)
		if !h["more"].(bool) {
			return seqs, last
		}
		since = seqs[len(seqs)-1]
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// A full disk mid-turn: the turn ends with stopReason error naming the
// cause, every event the client saw is stored (and nothing it did not see
// is), the daemon keeps serving, and once there is room again the session
// goes on from the last stored seq, which no client saw reused.
func TestDiskFullMidTurn(t *testing.T) {
	dirs := tmpfsDirs(t, "1m")
	r := startOn(t, dirs, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	res := result(t, a.wait(a.send("session/prompt", prompt(sid, "/chunks 200000")), "prompt"))
	dbPath := filepath.Join(dirs.DataDir, DBFile)
	if res["stopReason"] != "error" {
		t.Fatalf("stopReason %v, want error (the disk filled)", res["stopReason"])
	}
	if msg := res["error"].(map[string]any)["message"]; msg != "disk full: "+dbPath {
		t.Fatalf("error %q, want %q", msg, "disk full: "+dbPath)
	}
	seen := eventsOf(a.snapshot(), sid)
	checkSeqs(t, seen, 1)
	// The daemon still answers, and serves what is stored: exactly what
	// the client was shown.
	if st := result(t, a.call("status", `{}`)); st["activeSessions"].(float64) != 1 {
		t.Fatalf("status: %v", st)
	}
	stored, last := storedSeqs(t, a, sid)
	if len(stored) != len(seen) || last != float64(len(seen)) {
		t.Fatalf("client saw %d events, the store holds %d (lastSeq %v)", len(seen), len(stored), last)
	}
	// Room again: the next turn works and numbers on from the stored last.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", dirs.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	before := len(a.snapshot())
	res = result(t, a.wait(a.send("session/prompt", prompt(sid, "hello again")), "prompt"))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("after space came back: %v", res)
	}
	next := eventsOf(a.snapshot()[before:], sid)
	if len(next) == 0 || next[0]["seq"].(float64) != last+1 {
		t.Fatalf("first seq after the failure %v, want %v", next, last+1)
	}
	checkSeqs(t, next, int(last)+1)
	r.stop()
	r.wait(t)
	if err := store.VerifyFile(context.Background(), dbPath); err != nil {
		t.Fatal(err)
	}
}

// A write that fails for one session (an SQLite trigger aborts it) ends
// that session's turn with the cause; another session streaming at the
// same time loses nothing; the failed session works again once the fault
// is gone, from its last stored seq.
func TestOneSessionsFailedWriteLeavesOthersWhole(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	bad := newSession(t, a, `,"keep_siblings":true`)
	good := newSession(t, a, `,"keep_siblings":true`)
	dbPath := filepath.Join(r.dirs.DataDir, DBFile)
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER fault BEFORE INSERT ON segments WHEN NEW.session_id = ` + quoteSQL(bad) + ` AND NEW.last_seq >= 500
		BEGIN SELECT RAISE(ABORT, 'injected fault'); END`); err != nil {
		t.Fatal(err)
	}
	gb := a.send("session/prompt", prompt(bad, "/chunks 50000"))
	gg := a.send("session/prompt", prompt(good, "/chunks 50000"))
	rb, rg := result(t, a.wait(gb, "bad prompt")), result(t, a.wait(gg, "good prompt"))
	if rg["stopReason"] != "end_turn" {
		t.Fatalf("the other session's turn: %v", rg["stopReason"])
	}
	goodEvs := eventsOf(a.snapshot(), good)
	checkSeqs(t, goodEvs, 1)
	if len(goodEvs) != 50000+5 { // input_update, user_message, chunks, context_usage, input_update, turn_complete
		t.Fatalf("the other session delivered %d events, want %d", len(goodEvs), 50005)
	}
	if rb["stopReason"] != "error" || !strings.Contains(rb["error"].(map[string]any)["message"].(string), "injected fault") {
		t.Fatalf("the failed session's turn: %v", rb)
	}
	badEvs := eventsOf(a.snapshot(), bad)
	checkSeqs(t, badEvs, 1)
	stored, last := storedSeqs(t, a, bad)
	if len(stored) != len(badEvs) || int(last) != len(badEvs) || last >= 500 {
		t.Fatalf("failed session: saw %d, stored %d, lastSeq %v", len(badEvs), len(stored), last)
	}
	if _, err := db.Exec(`DROP TRIGGER fault`); err != nil {
		t.Fatal(err)
	}
	before := len(a.snapshot())
	if res := result(t, a.wait(a.send("session/prompt", prompt(bad, "again")), "prompt")); res["stopReason"] != "end_turn" {
		t.Fatalf("after the fault: %v", res)
	}
	checkSeqs(t, eventsOf(a.snapshot()[before:], bad), int(last)+1)
	if err := store.VerifyFile(context.Background(), dbPath); err != nil {
		t.Fatal(err)
	}
}

func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
