package daemon

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Background processes through the tools, as a model calls them (the
// echo provider's /tool lines): a server started in the background
// answers a foreground curl in a later call; a prompt answered with
// process_write; a wait that times out; a kill; the limit; and the
// session's delete ends what still runs.
func TestBackgroundProcesses(t *testing.T) {
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	// run makes one call and returns what the tool answered, whole (the
	// echo model's reply shortens it).
	run := func(line string) string {
		t.Helper()
		result(t, a.call("session/prompt", prompt(sid, "/tool "+line)))
		evs := a.snapshot()
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i]["type"] == "tool_result" {
				return evs[i]["rawOutput"].(string)
			}
		}
		t.Fatalf("no tool_result for %s", line)
		return ""
	}
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
	run := func(line string) string {
		t.Helper()
		result(t, a.call("session/prompt", prompt(sid, "/tool "+line)))
		evs := a.snapshot()
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i]["type"] == "tool_result" {
				return evs[i]["rawOutput"].(string)
			}
		}
		t.Fatalf("no tool_result for %s", line)
		return ""
	}
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
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
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
	if w := result(t, a.call("process/write", `{`+ref+`,"input":"hi\n"}`)); w["written"] != float64(3) {
		t.Fatalf("process/write: %v", w)
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
}
