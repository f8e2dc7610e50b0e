package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// marked are the processes whose environment holds mark.
func marked(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte(mark)) {
			if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); !bytes.Contains(st, []byte(") Z ")) {
				pids = append(pids, pid) // a zombie is gone, only not yet reaped
			}
		}
	}
	return pids
}

// Three stdio MCP servers, one of which starts a grandchild (a sleep of
// five minutes): a reload that removes that one ends all of it; after a
// kill -9 of the daemon, nothing of the others runs on.
func TestMCPServersDieWithTheDaemon(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	bin := mcpServer(t)
	k, v := "ZEROCLAW_FAULT_MARK", fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	mark, markC := k+"="+v+"-", k+"="+v+"-c"
	servers := fmt.Sprintf("[mcp.servers.a]\ncommand = %q\nenv = { %s = %q }\n\n[mcp.servers.b]\ncommand = %q\nenv = { %s = %q }\n\n",
		bin, k, v+"-ab", bin, k, v+"-ab")
	withC := servers + fmt.Sprintf("[mcp.servers.c]\ncommand = \"sh\"\nargs = [\"-c\", %q]\nenv = { %s = %q }\n", "sleep 300 & exec "+bin, k, v+"-c")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(withC), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startDaemon(t, env)
	c, _ := dialUpdates(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The servers start with the daemon: wait (a status a round trip)
	// until all are ready.
	readyAll := func(n int) {
		for ready := 0; ready < n; {
			var st protocol.StatusResult
			if err := c.Call(ctx, protocol.MethodStatus, struct{}{}, &st); err != nil {
				t.Fatal(err)
			}
			ready = 0
			for _, s := range st.MCPServers {
				if s.State == "ready" {
					ready++
				}
			}
		}
	}
	readyAll(3)
	before := marked(mark)
	// Three supervisors, three servers, one sleep; and an init of its
	// namespaces per server where the shim gives them namespaces.
	perServer := 2
	if sandbox.Isolation() == "" {
		perServer = 3
	}
	if len(before) != 3*perServer+1 || len(marked(markC)) != perServer+1 {
		t.Fatalf("%d processes of the servers, %d of c, want %d (per server: %d, and a sleep) and %d: %v", len(before), len(marked(markC)), 3*perServer+1, perServer, perServer+1, before)
	}
	gone := func(what, mark string, since time.Time) {
		t.Helper()
		for left := marked(mark); len(left) > 0; left = marked(mark) {
			if time.Since(since) > 10*time.Second {
				t.Fatalf("still running 10 s after %s: %v", what, left)
			}
			time.Sleep(5 * time.Millisecond) // /proc has no event to wait on
		}
		t.Logf("every process ended %v after %s", time.Since(since).Round(time.Millisecond), what)
	}
	// A reload that removes c ends c, its grandchild included.
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(servers), 0o600); err != nil {
		t.Fatal(err)
	}
	reloaded := time.Now()
	if code, out, errs := runCLI(t, env, "", "daemon", "reload"); code != 0 {
		t.Fatalf("reload: %d %q %q", code, out, errs)
	}
	gone("the reload that removed c", markC, reloaded)
	// a and b go on (started again, their set changed: the old ones
	// may still be ending as the new ones start).
	readyAll(2)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	gone("the daemon's kill -9", mark, time.Now())
}

// Background processes a session started, and what they started, end
// when the daemon is killed (-9).
func TestBackgroundProcessesDieWithTheDaemon(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	cmd, _ := startDaemon(t, env)
	mark := fmt.Sprintf("ZEROCLAW_FAULT_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	for i := range 2 {
		tree := fmt.Sprintf(`export %s; sleep 30%d & sleep 31%d`, mark, i, i)
		code, out, errs := runCLI(t, env, "", "prompt", "--approve", "all", "--session", "bg-kill", "--cwd", t.TempDir(),
			fmt.Sprintf(`/tool shell {"command":%q,"background":true}`, tree))
		if code != 0 || !strings.Contains(out, "in the background") {
			t.Fatalf("starting a background process: %d %q %q", code, out, errs)
		}
	}
	// Each is a shell and two sleeps; the shell may not have started its
	// sleeps yet: wait for all four (each look a pass over /proc).
	for deadline := time.Now().Add(30 * time.Second); len(marked(mark)) < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("the background processes did not start: %v", marked(mark))
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	for left := marked(mark); len(left) > 0; left = marked(mark) {
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("still running 10 s after the daemon's kill -9: %v", left)
		}
		time.Sleep(5 * time.Millisecond) // /proc has no event to wait on
	}
	t.Logf("every background process ended %v after the daemon's kill -9", time.Since(killed).Round(time.Millisecond))

	// The next daemon says in the session's history that they were lost.
	startDaemon(t, env)
	if code, out, errs := runCLI(t, env, "", "prompt", "--session", "bg-kill", "hello again"); code != 0 {
		t.Fatalf("resuming: %d %q %q", code, out, errs)
	}
	code, out, errs := runCLI(t, env, "", "sessions", "export", "bg-kill")
	if code != 0 || strings.Count(out, ") lost") != 2 {
		t.Fatalf("the export does not say both processes were lost: %d %q %q", code, out, errs)
	}
}

// A daemon kill -9 while a sub-agent runs: after the restart the child
// is interrupted in its own session, and its parent's history says so
// (and its task call was answered "interrupted").
func TestSubagentInterruptedByACrash(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	noContinue(t, dir)
	cmd, _ := startDaemon(t, env)
	sock := endpointOf(env.Getenv("ZEROCLAW_CONFIG_DIR"))
	c, err := client.Dial(context.Background(), sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ns protocol.SessionNewResult
	if err := c.Call(context.Background(), protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: "crash-parent", Cwd: t.TempDir(), Mode: "code"}, &ns); err != nil {
		t.Fatal(err)
	}
	line := `/tool task {"description":"a long one","prompt":"/delay 2000\nslow work here"}`
	go c.Call(context.Background(), protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: "crash-parent", Prompt: &line}, nil)
	// Wait until the child runs: the parent's list of children says so.
	var child string
	for deadline := time.Now().Add(20 * time.Second); child == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sub-agent never started")
		}
		var l protocol.SessionListResult
		if c.Call(context.Background(), protocol.MethodSessionList, protocol.SessionListParams{ParentSessionID: "crash-parent"}, &l) == nil && len(l.Sessions) == 1 && l.Sessions[0].State == "running" {
			child = l.Sessions[0].SessionID
		}
	}
	// The list tells a live session's state from memory: the store must
	// have the child running too before the kill.
	runningInStore(t, c, child)
	c.Close()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	startDaemon(t, env)
	if code, out, errs := runCLI(t, env, "", "prompt", "--session", "crash-parent", "after the crash"); code != 0 {
		t.Fatalf("resuming the parent: %d %q %q", code, out, errs)
	}
	code, out, errs := runCLI(t, env, "", "sessions", "export", "crash-parent")
	if code != 0 || !strings.Contains(out, "sub-agent "+child+" (a long one, agent default) interrupted") || !strings.Contains(out, "interrupted") {
		t.Fatalf("the parent's export does not say the child was interrupted: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI(t, env, "", "sessions", "list", "--output-format", "json")
	if code != 0 || !strings.Contains(out, child) {
		t.Fatalf("sessions list: %d %q %q", code, out, errs)
	}
	var l []protocol.SessionInfo
	json.Unmarshal([]byte(out), &l)
	found := false
	for _, s := range l {
		if s.SessionID == child {
			found = true
			if s.State != "interrupted" || s.ParentSessionID != "crash-parent" {
				t.Fatalf("the child after the crash: %+v", s)
			}
		}
	}
	if !found {
		t.Fatalf("sessions list has no %s: %s", child, out)
	}
	// The parent's session/get tells the child, interrupted.
	code, out, errs = runCLI(t, env, `{"jsonrpc":"2.0","method":"session/get","params":{"sessionId":"crash-parent"},"id":1}`+"\n", "rpc")
	if code != 0 || !strings.Contains(out, `"children":[{"sessionId":"`+child+`"`) || !strings.Contains(out, `"state":"interrupted"`) {
		t.Fatalf("the parent's session/get after the crash: %d %q %q", code, out, errs)
	}
}

// A background sub-agent cut by a daemon kill -9 while its parent was
// idle: the parent is told, once, when it is next loaded.
func TestBackgroundSubagentInterruptedByACrash(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	noContinue(t, dir)
	cmd, _ := startDaemon(t, env)
	line := `/tool task {"description":"in the back","prompt":"/delay 3000\nslow work here","background":true}`
	if code, out, errs := runCLI(t, env, "", "prompt", "--session", "idle-parent", "--cwd", t.TempDir(), line); code != 0 {
		t.Fatalf("starting the task: %d %q %q", code, out, errs)
	}
	c, err := client.Dial(context.Background(), endpointOf(env.Getenv("ZEROCLAW_CONFIG_DIR")), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var l protocol.SessionListResult
	if err := c.Call(context.Background(), protocol.MethodSessionList, protocol.SessionListParams{ParentSessionID: "idle-parent"}, &l); err != nil || len(l.Sessions) != 1 || l.Sessions[0].State != "running" {
		t.Fatalf("the child before the crash: %+v %v", l, err)
	}
	child := l.Sessions[0].SessionID
	runningInStore(t, c, child)
	c.Close()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	for range 2 { // loaded twice (a daemon stop between): told once
		d, _ := startDaemon(t, env)
		if code, out, errs := runCLI(t, env, "", "prompt", "--session", "idle-parent", "again"); code != 0 {
			t.Fatalf("resuming the parent: %d %q %q", code, out, errs)
		}
		d.Process.Signal(syscall.SIGTERM)
		d.Wait()
	}
	startDaemon(t, env)
	code, out, errs := runCLI(t, env, "", "sessions", "export", "idle-parent")
	if n := strings.Count(out, "sub-agent "+child+" (in the back, agent default) interrupted"); code != 0 || n != 1 {
		t.Fatalf("the parent's export says the child was interrupted %d times: %d %q %q", n, code, out, errs)
	}
}

// runningInStore waits until session id's turn has started in the store
// (its user_message is committed after its running state).
func runningInStore(t *testing.T, c *client.Client, id string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var h protocol.SessionHistoryResult
		if c.Call(context.Background(), protocol.MethodSessionHistory, protocol.SessionHistoryParams{SessionID: id}, &h) == nil &&
			strings.Contains(string(joinRaw(h.Events)), `"type":"user_message"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn of %s never started in the store", id)
		}
	}
}
