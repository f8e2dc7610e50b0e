package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Background processes through the tools, as a model calls them (the
// echo provider's /tool lines): a server started in the background
// answers a foreground curl in a later call; a prompt answered with
// process_write; a wait that times out; a kill; the limit; and the
// session's delete ends what still runs.
func TestBackgroundProcesses(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	run := func(line string) string { t.Helper(); return toolResult(t, a, sid, line)["rawOutput"].(string) }
	started := regexp.MustCompile(`started (p_[0-9a-f]+) \(pid (\d+)\)`)
	start := func(command string) (string, int) {
		t.Helper()
		out := run(fmt.Sprintf(`shell {"command":%q,"background":true}`, command))
		m := started.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("starting %q: %s", command, out)
		}
		pid, _ := strconv.Atoi(m[2])
		return m[1], pid
	}

	// A dev server, then a client of it in a later call.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	server, _ := start(fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port))
	curl := fmt.Sprintf("for i in $(seq 100); do curl -sf http://127.0.0.1:%d/ >/dev/null && echo reached && exit 0; sleep 0.1; done; exit 1", port)
	if out := run(fmt.Sprintf(`shell {"command":%q}`, curl)); !strings.Contains(out, "reached") {
		t.Fatalf("the server started in the background did not answer: %s", out)
	}
	if out := run(fmt.Sprintf(`process_output {"id":%q}`, server)); !strings.Contains(out, "GET / HTTP") || !strings.Contains(out, server+" is running") {
		t.Errorf("the server's output: %s", out)
	}

	// A prompt answered through stdin.
	asker, _ := start(`read -r -p "name? " n; echo "hello $n"`)
	if out := run(fmt.Sprintf(`process_write {"id":%q,"input":"Ada\n"}`, asker)); !strings.Contains(out, "wrote 4 bytes") {
		t.Fatalf("process_write: %s", out)
	}
	if out := run(fmt.Sprintf(`process_wait {"id":%q,"timeout_secs":30}`, asker)); !strings.Contains(out, "hello Ada") || !strings.Contains(out, "exited with exit code 0") {
		t.Fatalf("after the answer: %s", out)
	}

	// A wait that times out, then a kill.
	sleeper, sleeperPid := start("sleep 300")
	if out := run(fmt.Sprintf(`process_wait {"id":%q,"timeout_secs":1}`, sleeper)); !strings.Contains(out, "still running after 1 s") {
		t.Fatalf("the wait: %s", out)
	}
	if out := run(fmt.Sprintf(`process_kill {"id":%q}`, sleeper)); !strings.Contains(out, sleeper+" killed") {
		t.Fatalf("the kill: %s", out)
	}
	if alive(sleeperPid) {
		t.Errorf("pid %d still runs after process_kill", sleeperPid)
	}

	// The limit: the server and seven more; the ninth is refused.
	var pids []int
	for range 7 {
		_, pid := start("sleep 300")
		pids = append(pids, pid)
	}
	if out := run(`shell {"command":"sleep 300","background":true}`); !strings.Contains(out, "already runs 8 background processes") {
		t.Fatalf("a ninth process: %s", out)
	}
	if out := run(`process_list {}`); strings.Count(out, "running") != 8 || !strings.Contains(out, "killed") || !strings.Contains(out, "exited (exit code 0)") {
		t.Errorf("process_list: %s", out)
	}

	// The session's delete ends them all.
	result(t, a.call("session/delete", `{"sessionId":`+quote(sid)+`}`))
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still runs after the session's delete", pid)
		}
	}
}

// Programs that need a terminal run under one (shell tty): it is a
// terminal to them, a password typed is not echoed, a resize is seen, a
// Ctrl-C is the program's to handle (the sandbox's supervisor does not
// take it for a stop), and a foreground terminal command's result is
// plain text. The tools' details carry the structured fields.
func TestInteractiveTerminals(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	run := func(line string) string { t.Helper(); return toolResult(t, a, sid, line)["rawOutput"].(string) }

	script := `[ -t 0 ] && [ -t 1 ] && echo "is a tty: $TERM"; tput cols; read -r -s -p "Password: " pw; echo; echo "got ${#pw} chars"; read -r _; tput cols`
	res := toolResult(t, a, sid, fmt.Sprintf(`shell {"command":%q,"background":true,"tty":true}`, script))
	var d struct {
		Process struct {
			ID    string
			Pid   int
			TTY   bool
			State string
		}
	}
	if b, _ := json.Marshal(res["details"]); json.Unmarshal(b, &d) != nil || d.Process.ID == "" || !d.Process.TTY || d.Process.State != "running" || d.Process.Pid == 0 {
		t.Fatalf("the start's details: %v (%s)", res["details"], res["rawOutput"])
	}
	id := d.Process.ID
	out := run(fmt.Sprintf(`process_wait {"id":%q,"until":"Password: $","timeout_secs":60,"plain_text":true}`, id))
	if !strings.Contains(out, "is a tty: xterm-256color\n120\nPassword: ") || !strings.Contains(out, `[the output matched "Password: $"]`) {
		t.Fatalf("before the password: %q", out)
	}
	run(fmt.Sprintf(`process_write {"id":%q,"input":"hunter2\r"}`, id))
	out = run(fmt.Sprintf(`process_wait {"id":%q,"until":"got \\d+ chars","timeout_secs":60,"plain_text":true}`, id))
	if !strings.Contains(out, "got 7 chars") || strings.Contains(out, "hunter2") {
		t.Fatalf("after the password (it must not be echoed): %q", out)
	}
	if out = run(fmt.Sprintf(`process_resize {"id":%q,"cols":132,"rows":50}`, id)); !strings.Contains(out, "132x50") {
		t.Fatalf("resize: %s", out)
	}
	run(fmt.Sprintf(`process_write {"id":%q,"input":"\r"}`, id))
	res = toolResult(t, a, sid, fmt.Sprintf(`process_wait {"id":%q,"timeout_secs":60}`, id))
	if out = res["rawOutput"].(string); !strings.Contains(out, "\r\n132\r\n") || !strings.Contains(out, "exited with exit code 0") {
		t.Fatalf("after the resize (the terminal's bytes, CRLF): %q", out)
	}
	if det := res["details"].(map[string]any); det["next"] == nil || det["dropped"] != float64(0) || det["process"].(map[string]any)["exitCode"] != float64(0) {
		t.Fatalf("the wait's details: %v", det)
	}

	// Ctrl-C reaches the program, which handles it and goes on past the
	// grace a stop would have given it.
	py := `python3 -u -c 'import time,sys
try:
    print("ready"); time.sleep(300)
except KeyboardInterrupt:
    print("caught"); sys.stdin.readline(); print("still here")'`
	id = regexp.MustCompile(`p_[0-9a-f]+`).FindString(run(fmt.Sprintf(`shell {"command":%q,"background":true,"tty":true}`, py)))
	run(fmt.Sprintf(`process_wait {"id":%q,"until":"ready","timeout_secs":60}`, id))
	run(fmt.Sprintf(`process_write {"id":%q,"input":"\u0003"}`, id))
	if out = run(fmt.Sprintf(`process_wait {"id":%q,"until":"caught","timeout_secs":60}`, id)); !strings.Contains(out, "caught") {
		t.Fatalf("Ctrl-C: %q", out)
	}
	if out = run(fmt.Sprintf(`process_wait {"id":%q,"timeout_secs":3}`, id)); !strings.Contains(out, "still running after 3 s") {
		t.Fatalf("a handled Ctrl-C ended the program: %q", out)
	}
	run(fmt.Sprintf(`process_write {"id":%q,"input":"\r"}`, id))
	if out = run(fmt.Sprintf(`process_wait {"id":%q,"timeout_secs":60,"plain_text":true}`, id)); !strings.Contains(out, "still here") || !strings.Contains(out, "exited with exit code 0") {
		t.Fatalf("after Ctrl-C: %q", out)
	}

	// In the foreground: the terminal's text, without its escapes.
	if out = run(`shell {"command":"[ -t 1 ] && printf '\\033[31mred\\033[0m and plain\\n'","tty":true}`); out != "red and plain" {
		t.Fatalf("a foreground terminal command: %q", out)
	}
	// A process without a terminal cannot be resized.
	id = regexp.MustCompile(`p_[0-9a-f]+`).FindString(run(`shell {"command":"sleep 300","background":true}`))
	if out = run(fmt.Sprintf(`process_resize {"id":%q,"cols":100,"rows":30}`, id)); !strings.Contains(out, "does not run under a terminal") {
		t.Fatalf("resizing a pipe: %s", out)
	}
}

// alive says whether pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(st), ") Z ")
}

// [tools] bounds a session's processes and what is kept of their output:
// a reader behind the ring is told how much it missed.
func TestBackgroundProcessLimits(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n[tools]\nmax_processes = 1\noutput_ring_bytes = 4096\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	run := func(line string) string { t.Helper(); return toolResult(t, a, sid, line)["rawOutput"].(string) }
	out := run(`shell {"command":"head -c 10000 /dev/zero | tr '\\0' x; echo; echo end","background":true}`)
	id := regexp.MustCompile(`p_[0-9a-f]+`).FindString(out)
	if id == "" {
		t.Fatalf("start: %s", out)
	}
	if out = run(fmt.Sprintf(`process_wait {"id":%q,"timeout_secs":30}`, id)); !strings.Contains(out, "[5909 bytes before this were dropped") ||
		!strings.Contains(out, "end\n") || !strings.Contains(out, "exited with exit code 0; next offset 10005]") {
		t.Fatalf("a read behind the ring: %.300s … %.300s", out, out[max(0, len(out)-300):])
	}
	run(`shell {"command":"sleep 300","background":true}`)
	if out = run(`shell {"command":"sleep 300","background":true}`); !strings.Contains(out, "already runs 1 background processes, its limit ([tools] max_processes)") {
		t.Fatalf("past the limit: %s", out)
	}
}

// A background process that ends is told to every client
// (process_update) and to the model, before its next call: here the
// next turn's, the session being idle when it ended (no turn starts for
// it).
func TestProcessExitReachesClientsAndTheModel(t *testing.T) {
	// It ends once the first turn is over (the test makes the file).
	gate := filepath.Join(t.TempDir(), "go")
	command := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo done-now; exit 3", gate)
	args, _ := json.Marshal(map[string]any{"command": command, "background": true})
	call := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":` +
		quote(string(args)) + `}}]}}]}`
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	fake := &fakeOpenAI{scripts: [][]string{
		{call, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`},
		{content("Started."), stop, `[DONE]`},
		{content("Seen."), stop, `[DONE]`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	r := startWith(t, "[providers.fake]\nkind = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"m\"\n[agents.default]\nprovider = \"fake\"\nrisk = \"full\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`,"keep_siblings":true}`))
	result(t, a.call("session/prompt", prompt(sid, "start it")))
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*peer{a, b} {
		var states []string
		for len(states) < 2 {
			ev := p.until("process_update")
			pr := ev["process"].(map[string]any)
			states = append(states, pr["state"].(string))
			if pr["state"] == "exited" && pr["exitCode"] != float64(3) {
				t.Fatalf("the exit: %v", pr)
			}
		}
		if strings.Join(states, " ") != "running exited" {
			t.Fatalf("a client saw %v", states)
		}
	}
	result(t, a.call("session/prompt", prompt(sid, "what happened?")))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.bodies) != 3 {
		t.Fatalf("%d model calls", len(fake.bodies))
	}
	told := fmt.Sprint(fake.bodies[2]["messages"])
	if !strings.Contains(told, "exited with exit code 3; its last output:\ndone-now") || strings.Contains(fmt.Sprint(fake.bodies[1]["messages"]), "exited with") {
		t.Fatalf("the model was told: %s", told)
	}
}

// A client sees and drives the agent's background processes:
// process/list, session/get, process/write, process/output, process/kill.
func TestProcessMethods(t *testing.T) {
	addr := freeAddr(t)
	r := startWith(t, echoAgent+`risk = "full"`+"\n[gateway]\nmetrics_listen = \""+addr+"\"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	result(t, a.call("session/prompt", prompt(sid, `/tool shell {"command":"read -r x; echo got $x","background":true}`)))
	list := result(t, a.call("process/list", `{"sessionId":`+quote(sid)+`}`))["processes"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["state"] != "running" {
		t.Fatalf("process/list: %v", list)
	}
	id := list[0].(map[string]any)["id"].(string)
	if ps, _ := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))["processes"].([]any); len(ps) != 1 {
		t.Fatalf("session/get's processes: %v", ps)
	}
	ref := `"sessionId":` + quote(sid) + `,"id":` + quote(id)
	// A read that waits for output (waitMs) is answered when it comes;
	// the session's other calls (the write) are not held behind it.
	waited := a.send("process/output", `{`+ref+`,"waitMs":20000}`)
	if w := result(t, a.call("process/write", `{`+ref+`,"input":"hi\n"}`)); w["written"] != float64(3) {
		t.Fatalf("process/write: %v", w)
	}
	if o := result(t, a.wait(waited, "process/output waitMs")); o["output"] != "got hi\n" {
		t.Fatalf("the waiting read: %v", o)
	}
	for ev := a.until("process_update"); ev["process"].(map[string]any)["state"] != "exited"; ev = a.until("process_update") {
	}
	out := result(t, a.call("process/output", `{`+ref+`}`))
	if out["output"] != "got hi\n" || out["state"] != "exited" || out["exitCode"] != float64(0) || out["next"] != float64(7) || out["dropped"] != float64(0) {
		t.Fatalf("process/output: %v", out)
	}
	if k := result(t, a.call("process/kill", `{`+ref+`}`)); k["killed"] != false {
		t.Fatalf("process/kill of an ended process: %v", k)
	}
	if e := a.call("process/output", `{"sessionId":`+quote(sid)+`,"id":"p_none"}`); e["error"] == nil || !strings.Contains(fmt.Sprint(e["error"]), "no process p_none") {
		t.Fatalf("an unknown id: %v", e)
	}
	if ps := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))["processes"]; ps != nil {
		t.Fatalf("session/get lists an ended process: %v", ps)
	}
	// The metrics count them.
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`zeroclaw_background_processes_total{event="started"}`, `zeroclaw_background_processes_total{event="exited"}`, "zeroclaw_background_processes_running "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the metrics have no %s", want)
		}
	}
}

// processUpdate waits for the process_update that says id is in state.
func processUpdate(t *testing.T, a *peer, id, state string) map[string]any {
	t.Helper()
	for {
		p := a.until("process_update")["process"].(map[string]any)
		if p["id"] == id && p["state"] == state {
			return p
		}
	}
}

// waitGone waits until pid no longer runs (a pass over /proc each look:
// there is no event to wait on).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// [tools] keep_processes_on_close: a closed session's processes run on;
// what they did meanwhile is told when the session is open again, where
// they are driven as before; deleting the closed session ends them.
func TestProcessesRunOnAfterClose(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n[tools]\nkeep_processes_on_close = true\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	gate := filepath.Join(t.TempDir(), "go")
	start := func(a *peer, command string) (string, int) {
		t.Helper()
		d := toolResult(t, a, sid, fmt.Sprintf(`shell {"command":%q,"background":true}`, command))["details"].(map[string]any)["process"].(map[string]any)
		return d["id"].(string), int(d["pid"].(float64))
	}
	reader, readerPid := start(a, `read -r x; echo "got $x"`)
	gated, gatedPid := start(a, fmt.Sprintf("while [ ! -e %s ]; do sleep 0.05; done; echo gated-done", gate))
	result(t, a.call("session/close", `{"sessionId":`+quote(sid)+`}`))
	if !alive(readerPid) || !alive(gatedPid) {
		t.Fatalf("the processes ended with the session's close")
	}
	os.WriteFile(gate, nil, 0o600)
	waitGone(t, gatedPid) // it ends while its session is closed

	b := connect(t, r.dirs.Endpoint, "")
	result(t, b.call("session/new", `{"sessionId":`+quote(sid)+`}`))
	if p := processUpdate(t, b, gated, "exited"); p["exitCode"] != float64(0) {
		t.Fatalf("the end it had while closed: %v", p)
	}
	list := result(t, b.call("process/list", `{"sessionId":`+quote(sid)+`}`))["processes"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["state"] != "running" || list[1].(map[string]any)["state"] != "exited" {
		t.Fatalf("process/list after the reopen: %v", list)
	}
	result(t, b.call("process/write", `{"sessionId":`+quote(sid)+`,"id":`+quote(reader)+`,"input":"again\n"}`))
	processUpdate(t, b, reader, "exited")
	if o := result(t, b.call("process/output", `{"sessionId":`+quote(sid)+`,"id":`+quote(reader)+`}`)); o["output"] != "got again\n" {
		t.Fatalf("the kept process's output: %v", o)
	}

	// Closed again with one running, then deleted: it ends.
	_, sleeper := start(b, "sleep 300")
	result(t, b.call("session/close", `{"sessionId":`+quote(sid)+`}`))
	if !alive(sleeper) {
		t.Fatalf("the process ended with the second close")
	}
	result(t, b.call("session/delete", `{"sessionId":`+quote(sid)+`}`))
	if alive(sleeper) {
		t.Errorf("pid %d runs on after its closed session's delete", sleeper)
	}
	if _, err := os.Stat(filepath.Join(r.dirs.DataDir, "processes", sid)); !os.IsNotExist(err) {
		t.Errorf("the deleted session's process output is still there: %v", err)
	}
}

// [tools] wake_on_exit: a process that ends while its session is idle
// starts a turn that tells the model.
func TestWakeOnExit(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n[tools]\nwake_on_exit = true\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	gate := filepath.Join(t.TempDir(), "go")
	out := toolResult(t, a, sid, fmt.Sprintf(`shell {"command":"while [ ! -e %s ]; do sleep 0.05; done; echo finished; exit 4","background":true}`, gate))["rawOutput"].(string)
	id := regexp.MustCompile(`p_[0-9a-f]+`).FindString(out)
	os.WriteFile(gate, nil, 0o600)
	um := a.until("user_message")
	for um["clientId"] != nil {
		um = a.until("user_message") // the prompts'
	}
	if text := um["text"].(string); !strings.Contains(text, id) || !strings.Contains(text, "exited with exit code 4") || !strings.Contains(text, "finished") {
		t.Fatalf("the turn the exit started: %v", um)
	}
	if tc := a.until("turn_complete"); tc["outcome"] != "completed" || !strings.Contains(fmt.Sprint(tc["content"]), "exit code 4") {
		t.Fatalf("its end: %v", tc)
	}
}

// What a background process changes is in the checkpoints: here it
// writes between turns (the next turn's first scan takes it for the
// agent's, a process having run), and a rewind of that turn undoes it.
// Rewinding a turn that started a process still running asks to stop
// it first (rewound false, the processes listed); force stops it.
func TestRewindWithBackgroundProcesses(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	gate := filepath.Join(t.TempDir(), "go")
	writer := toolResult(t, a, sid, fmt.Sprintf(`shell {"command":"while [ ! -e %s ]; do sleep 0.05; done; echo made > made.txt","background":true}`, gate))
	id := writer["details"].(map[string]any)["process"].(map[string]any)["id"].(string)
	os.WriteFile(gate, nil, 0o600)
	processUpdate(t, a, id, "exited")
	result(t, a.call("session/prompt", prompt(sid, "a turn after the process wrote")))
	cps := result(t, a.call("session/checkpoints", `{"sessionId":`+quote(sid)+`}`))["checkpoints"].([]any)
	if len(cps) != 2 {
		t.Fatalf("checkpoints: %v", cps)
	}
	files := fmt.Sprint(cps[1].(map[string]any)["files"])
	if !strings.Contains(files, "made.txt") || !strings.Contains(files, "created") {
		t.Fatalf("the second turn's checkpoint does not hold the process's write: %v", cps)
	}
	if res := result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":2}`)); res["rewound"] != true {
		t.Fatalf("rewind: %v", res)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("made.txt after the rewind: %v", err)
	}

	// A running process started by the turn rewound.
	sleeper := toolResult(t, a, sid, `shell {"command":"sleep 300","background":true}`)["details"].(map[string]any)["process"].(map[string]any)
	pid := int(sleeper["pid"].(float64))
	res := result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":3}`))
	ps, _ := res["processes"].([]any)
	if res["rewound"] != false || len(ps) != 1 || ps[0].(map[string]any)["id"] != sleeper["id"] || !alive(pid) {
		t.Fatalf("a rewind over a running process: %v", res)
	}
	if res = result(t, a.call("session/rewind", `{"sessionId":`+quote(sid)+`,"turn":3,"force":true}`)); res["rewound"] != true || alive(pid) {
		t.Fatalf("a forced rewind over a running process (alive %v): %v", alive(pid), res)
	}
	processUpdate(t, a, sleeper["id"].(string), "killed")
}
