package daemon

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logSaid is a daemon's log that closes said once a line holds want.
type logSaid struct {
	want string
	said chan struct{}
	once sync.Once
}

func (l *logSaid) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(l.want)) {
		l.once.Do(func() { close(l.said) })
	}
	return len(p), nil
}

// gated is a fifo in a session's directory, and the command that waits
// on it: it ends when the test opens the fifo and closes it.
func gated(t *testing.T) (cwd, command string, open func()) {
	cwd = t.TempDir()
	fifo := filepath.Join(cwd, "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return cwd, "cat gate", func() {
		// The open waits for the command's: the command runs then.
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// stayingDaemon starts an ephemeral daemon (an echo agent that may run
// anything) whose log says staying when its lifetime keeps it for work.
func stayingDaemon(t *testing.T) (r *running, staying <-chan struct{}) {
	log := &logSaid{want: "staying for its work", said: make(chan struct{})}
	r = startWith(t, echoAgent+`risk = "full"`+"\n", func(o *Options) {
		o.Ephemeral = true
		o.Logger = slog.New(slog.NewTextHandler(log, nil))
	})
	return r, log.said
}

// stays checks that the daemon's lifetime found work to stay for after
// its last client left, and that it runs still.
func stays(t *testing.T, r *running, staying <-chan struct{}) {
	t.Helper()
	select {
	case <-staying:
	case err := <-r.done:
		r.done <- err
		t.Fatalf("the ephemeral daemon left while its work ran (%v)", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the ephemeral daemon neither stayed for its work nor left")
	}
	select {
	case err := <-r.done:
		r.done <- err
		t.Fatalf("the ephemeral daemon left while its work ran (%v)", err)
	default:
	}
}

// stayingFor is status's stayingFor, as a client sees it.
func stayingFor(t *testing.T, a *peer) string {
	t.Helper()
	w, _ := result(t, a.call("status", `{}`))["stayingFor"].(map[string]any)
	keys := []string{"turns", "queued", "processes", "goals", "subagents"}
	var out []byte
	for _, k := range keys {
		if n, ok := w[k].(float64); ok {
			out = fmt.Appendf(out, "%s=%v ", k, n)
		}
	}
	return string(out)
}

// An ephemeral daemon (one the CLI started) stays after its last client
// left while a background process of its runs (a dev server the
// prompt started), says so in status, and leaves by itself once the
// process ended.
func TestEphemeralStaysForAProcess(t *testing.T) {
	r, staying := stayingDaemon(t)
	cwd, command, open := gated(t)
	a := connect(t, r.dirs.Endpoint, "")
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	out := toolResult(t, a, sid, fmt.Sprintf(`shell {"command":%q,"background":true}`, command))["rawOutput"].(string)
	if got, want := stayingFor(t, a), "processes=1 "; got != want {
		t.Fatalf("status.stayingFor with %q running: %q, want %q", out, got, want)
	}
	a.nc.Close()
	stays(t, r, staying)
	open() // the process ends
	if err := r.wait(t); err != nil {
		t.Fatalf("the ephemeral daemon's end: %v", err)
	}
}

// The same for a running turn no client waits for (zeroclaw schedule
// run ID): it runs to its end after its client left (not cancelled by
// the daemon's end), and then the daemon leaves.
func TestEphemeralStaysForATurn(t *testing.T) {
	r, staying := stayingDaemon(t)
	cwd, command, open := gated(t)
	a := connect(t, r.dirs.Endpoint, "")
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	at := time.Now().AddDate(1, 0, 0).Format(time.RFC3339)
	sch := result(t, a.call("schedule/create", `{"prompt":`+quote(fmt.Sprintf(`/tool shell {"command":%q}`, command))+
		`,"at":`+quote(at)+`,"sessionId":`+quote(sid)+`}`))["schedule"].(map[string]any)
	result(t, a.call("schedule/run", `{"scheduleId":`+quote(sch["scheduleId"].(string))+`}`))
	a.until("tool_call")
	if got, want := stayingFor(t, a), "turns=1 "; got != want {
		t.Fatalf("status.stayingFor with a turn running: %q, want %q", got, want)
	}
	a.nc.Close()
	stays(t, r, staying)
	open() // the command ends, and its turn
	if err := r.wait(t); err != nil {
		t.Fatalf("the ephemeral daemon's end: %v", err)
	}
	// The turn ran to its end: the next daemon finds it complete.
	r2 := startOn(t, r.dirs, echoAgent)
	b := connect(t, r2.dirs.Endpoint, "")
	h := result(t, b.call("session/history", `{"sessionId":`+quote(sid)+`,"limit":1000}`))
	var last map[string]any
	for _, e := range h["events"].([]any) {
		if ev := e.(map[string]any); ev["type"] == "turn_complete" {
			last = ev
		}
	}
	if last == nil || last["stopReason"] != "end_turn" {
		t.Fatalf("the turn the client left: %v, want it complete (end_turn)", last)
	}
}

// The same for a goal (zeroclaw goal set): the daemon stays while the
// goal is active, and leaves once its budget ended it.
func TestEphemeralStaysForAGoal(t *testing.T) {
	r, staying := stayingDaemon(t)
	cwd, command, open := gated(t)
	a := connect(t, r.dirs.Endpoint, "")
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code"}`))["sessionId"].(string)
	objective := fmt.Sprintf("/tool shell {\"command\":%q}", command)
	result(t, a.call("session/goal", `{"sessionId":`+quote(sid)+`,"objective":`+quote(objective)+`,"budget":{"turns":1}}`))
	a.until("tool_call")
	if got, want := stayingFor(t, a), "turns=1 goals=1 "; got != want {
		t.Fatalf("status.stayingFor with a goal's turn running: %q, want %q", got, want)
	}
	a.nc.Close()
	stays(t, r, staying)
	open() // the goal's one turn ends, and with it the goal
	if err := r.wait(t); err != nil {
		t.Fatalf("the ephemeral daemon's end: %v", err)
	}
}
