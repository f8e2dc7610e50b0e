package daemon

import (
	"bufio"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// A connection's read loop never waits on a slow call: one connection
// sends, in one write, a session/new for a session whose id is still
// closing (its turn's command ignores SIGTERM, so the close waits for
// the SIGKILL), a session/prompt for that session naming an MCP prompt
// of a server that never answers, then a status and a session/cancel of
// another session. The status and the cancel are answered first; the
// session/new and the prompt (which waits behind its session/new: calls
// about one session keep their order) come after.
func TestReadLoopNeverWaits(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	cwd := t.TempDir()
	gate := filepath.Join(t.TempDir(), "never")
	r := startWith(t, echoAgent+`risk = "full"
[mcp]
turn_wait_ms = 200
[mcp.servers.slow]
command = "`+mcptest.Server(t)+`"
args = ["-start-gate", "`+gate+`"]
`)
	a := connect(t, r.dirs.Endpoint, "")
	closing := result(t, a.call("session/new", `{"sessionId":"closing","cwd":`+quote(cwd)+`}`))["sessionId"].(string)
	other := result(t, a.call("session/new", `{"sessionId":"other","keep_siblings":true}`))["sessionId"].(string)
	// A turn whose command says when it got SIGTERM (by a builtin's
	// redirection: nothing to start on a loaded machine, where a touch
	// could miss the SIGKILL KillGrace later), and goes on.
	a.send("session/prompt", prompt(closing, toolLine("shell", `{"command":"trap 'echo > got-term' TERM; echo > started; while :; do sleep 0.05; done"}`)))
	waitFile(t, filepath.Join(cwd, "started"))
	a.send("session/close", `{"sessionId":"closing"}`)
	waitFile(t, filepath.Join(cwd, "got-term")) // the close has begun

	nc, err := transport.Dial(t.Context(), r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	frames := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`,
		`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"sessionId":"closing","keep_siblings":true}}`,
		`{"jsonrpc":"2.0","id":"prompt","method":"session/prompt","params":{"sessionId":"closing","prompt":"/mcp__slow__review file=a.go"}}`,
		`{"jsonrpc":"2.0","id":"status","method":"status","params":{}}`,
		`{"jsonrpc":"2.0","id":"cancel","method":"session/cancel","params":{"sessionId":"` + other + `"}}`,
	}
	if _, err := nc.Write([]byte(strings.Join(frames, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	var order []string
	answers := map[string]map[string]any{}
	br := bufio.NewReader(nc)
	for len(answers) < 5 {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("after %v: %v", order, err)
		}
		var m map[string]any
		json.Unmarshal(line, &m)
		id, ok := m["id"]
		if !ok || m["method"] != nil {
			continue // an event
		}
		key, _ := id.(string)
		if key == "" {
			key = "init"
		}
		order = append(order, key)
		answers[key] = m
	}
	// Status and cancel are answered before the slow ones. The lane runs
	// new before prompt, but their answers are written by their own
	// goroutines: a loaded machine may write the prompt's first.
	if pos := slices.Index[[]string]; pos(order, "init") != 0 || max(pos(order, "status"), pos(order, "cancel")) > min(pos(order, "new"), pos(order, "prompt")) {
		t.Errorf("answered in the order %v, want status and cancel before the slow ones", order)
	}
	// session/cancel of another session: answered (it is not this
	// connection's: refused, at once).
	if answers["cancel"]["error"] == nil && answers["cancel"]["result"] == nil {
		t.Errorf("cancel: %v", answers["cancel"])
	}
	if res, _ := answers["new"]["result"].(map[string]any); res == nil || res["resumed"] != true {
		t.Errorf("session/new of the closed session: %v", answers["new"])
	}
	// The MCP prompt is read in the turn: the server never answered,
	// so the turn failed, saying why.
	res, _ := answers["prompt"]["result"].(map[string]any)
	if res == nil || res["stopReason"] != "error" || !strings.Contains(res["error"].(map[string]any)["message"].(string), "/mcp__slow__review") {
		t.Errorf("prompt: %v", answers["prompt"])
	}
}

// waitFile waits for a file a command makes.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// $/cancelRequest (vscode-jsonrpc's) of a running session/prompt ends its
// turn as session/cancel does, and the prompt answers cancelled; of a
// queued one, removes it from the queue (answered cancelled) while the
// running turn goes on.
func TestCancelRequestOfAPrompt(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	lastID := func() string {
		a.mu.Lock()
		defer a.mu.Unlock()
		return fmt.Sprint(a.nextID)
	}
	running := a.send("session/prompt", prompt(sid, "/delay 50\n/chunks 100000"))
	runningID := lastID()
	a.until("agent_message_chunk")
	queued := a.send("session/prompt", prompt(sid, "never run"))
	queuedID := lastID()
	for {
		ev := a.until("queue_update")
		if items, _ := ev["items"].([]any); len(items) == 1 {
			break
		}
	}
	notify := func(id string) {
		if _, err := a.nc.Write([]byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}` + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	notify(queuedID)
	if res := result(t, a.wait(queued, "the queued prompt")); res["stopReason"] != "cancelled" {
		t.Errorf("the queued prompt: %v", res)
	}
	notify(runningID)
	if res := result(t, a.wait(running, "the running prompt")); res["stopReason"] != "cancelled" {
		t.Errorf("the running prompt: %v", res)
	}
	if tc := a.until("turn_complete"); tc["outcome"] != "cancelled" {
		t.Errorf("turn_complete: %v", tc)
	}
	for _, ev := range a.snapshot() {
		if ev["type"] == "user_message" && ev["text"] == "never run" {
			t.Error("the withdrawn prompt ran")
		}
	}
}

// Neither a steer nor an upload's part holds the read loop. With the
// store's write lock held by another process's connection, a steer into
// the running turn cannot be answered (it is answered once its
// input_update is committed), yet a status sent behind it is answered;
// the steer is answered once the lock is let go. An upload's parts, sent
// without waiting for each other's answers, are taken in order (they
// run off the read loop, in a lane of their own): the file stored is
// theirs in the order sent.
func TestReadLoopSteerAndUploadOffTheLoop(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	running := a.send("session/prompt", prompt(sid, "/delay 20\n/chunks 100000"))
	a.until("agent_message_chunk")

	db, err := sql.Open("sqlite", "file:"+filepath.Join(r.dirs.DataDir, DBFile)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lock, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	steer := a.send("session/steer", `{"sessionId":"`+sid+`","prompt":"and also this"}`)
	result(t, a.call("status", `{}`))
	select {
	case m := <-steer:
		t.Fatalf("the steer was answered before its commit could be: %v", m)
	default:
	}
	if _, err := lock.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if res := result(t, a.wait(steer, "the steer")); res["outcome"] != "injected" {
		t.Errorf("steer: %v", res)
	}
	a.call("session/cancel", `{"sessionId":"`+sid+`"}`)
	a.wait(running, "the prompt")

	parts := []string{"first,", "second,", "third,", "last"}
	first := result(t, a.call("file/upload", `{"dataB64":"`+base64.StdEncoding.EncodeToString([]byte(parts[0]))+`"}`))
	id := first["uploadId"].(string)
	var answers []chan map[string]any
	for i, part := range parts[1:] {
		final := ""
		if i == len(parts)-2 {
			final = `,"final":true,"filename":"order.txt","mimeType":"text/plain"`
		}
		answers = append(answers, a.send("file/upload", `{"uploadId":"`+id+`","dataB64":"`+base64.StdEncoding.EncodeToString([]byte(part))+`"`+final+`}`))
	}
	want := len(parts[0])
	var last map[string]any
	for i, ch := range answers {
		last = result(t, a.wait(ch, "a part"))
		want += len(parts[i+1])
		if got := int(last["receivedBytes"].(float64)); got != want {
			t.Errorf("part %d: received %d bytes, want %d", i+2, got, want)
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "")))
	if file, _ := last["file"].(map[string]any); file == nil || file["refId"] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("the stored file is not the parts in order: %v", last)
	}
}
