package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// The test binary doubles as the zeroclaw binary: with ZEROCLAW_TEST_MAIN
// set it runs the command line, so tests start real daemon processes.
func TestMain(m *testing.M) {
	sandbox.ShimMain()
	if os.Getenv("ZEROCLAW_TEST_MAIN") == "1" {
		os.Exit(Main(context.Background(), os.Args[1:], console.OS()))
	}
	if os.Getenv("ZEROCLAW_CONFORMANCE_CLIENT") == "1" && len(os.Args) > 1 {
		os.Exit(conformanceClient(os.Args[len(os.Args)-1]))
	}
	// On Windows the named pipe's library keeps one I/O completion
	// goroutine for the whole process (go-winio's initIO).
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/Microsoft/go-winio.ioCompletionProcessor"))
}

func testEnv(t *testing.T, stdin string) (console.Env, *bytes.Buffer, *bytes.Buffer, string) {
	dir := filepath.Join(testdir.New(t), "cfg")
	vars := map[string]string{"ZEROCLAW_CONFIG_DIR": dir}
	var out, errb bytes.Buffer
	environ := append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
	return console.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] }, Environ: environ}, &out, &errb, dir
}

// hermetic drops what the host's environment must not lend a test: the
// provider keys (a test must never reach a real model) and zeroclaw's own
// settings.
func hermetic(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_API_KEY") || strings.HasSuffix(k, "_AUTH_TOKEN") || k == "OLLAMA_HOST" ||
			strings.HasPrefix(k, "ZEROCLAW_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// startDaemon runs `zeroclaw daemon` as a real process.
func startDaemon(t *testing.T, env console.Env, args ...string) (*exec.Cmd, *lockedBuffer) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, append([]string{"daemon"}, args...)...)
	cmd.Env = env.Environ
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		// The test binary may be built with -race: the daemon's reports.
		if strings.Contains(logs.String(), "WARNING: DATA RACE") {
			t.Errorf("the daemon had a data race:\n%s", logs.String())
		}
	})
	sock := endpointOf(env.Getenv("ZEROCLAW_CONFIG_DIR"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := client.Dial(context.Background(), sock, client.Options{})
		if err == nil {
			c.Close()
			return cmd, logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not ready: %v\n%s", err, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStatusWithoutDaemon(t *testing.T) {
	env, out, errb, _ := testEnv(t, "")
	if code := Main(context.Background(), []string{"status"}, env); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "no daemon is running") || out.Len() != 0 {
		t.Fatalf("stderr %q stdout %q", errb, out)
	}
}

func TestStatusAndRPCAgainstDaemonProcess(t *testing.T) {
	env, out, _, dir := testEnv(t, "")
	cmd, logs := startDaemon(t, env)
	if code := Main(context.Background(), []string{"status", "--output-format", "json"}, env); code != 0 {
		t.Fatalf("status exit %d", code)
	}
	var st map[string]any
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("status json %q: %v", out, err)
	}
	if st["pid"] != float64(cmd.Process.Pid) || st["configDir"] != dir || st["provider"] != "echo" {
		t.Fatalf("status %v", st)
	}
	// The seed's quick test, line by line, through `zeroclaw rpc --no-init`.
	env2, out2, _, _ := testEnv(t, `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":1}
{"jsonrpc":"2.0","method":"status","params":{},"id":2}
`)
	env2.Getenv = env.Getenv
	if code := Main(context.Background(), []string{"rpc", "--no-init"}, env2); code != 0 {
		t.Fatalf("rpc exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out2.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":1,"result":{"protocolVersion":1`) || !strings.Contains(lines[1], `"id":2,"result":{"serverVersion"`) {
		t.Fatalf("rpc output:\n%s", out2)
	}
	// Graceful SIGTERM: exit 0, socket removed, logged.
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("daemon exit after SIGTERM: %v\n%s", err, logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("daemon did not stop within 10s of SIGTERM")
	}
	if _, err := os.Lstat(filepath.Join(dir, "data", "daemon.sock")); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if !strings.Contains(logs.String(), "client connected") || !strings.Contains(logs.String(), `peer="unix:pid=`) {
		t.Fatalf("log lacks the peer label:\n%s", logs)
	}
}

func TestStatusStartsEphemeralDaemon(t *testing.T) {
	env, out, errb, dir := testEnv(t, "")
	if code := Main(context.Background(), []string{"status", "--start"}, env); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "ephemeral") || !strings.Contains(out.String(), "echo (offline") {
		t.Fatalf("status text:\n%s", out)
	}
	// The started daemon exits by itself once we are gone.
	sock := filepath.Join(dir, "data", "daemon.sock")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Lstat(sock); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ephemeral daemon still running 10s after its last client left")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBadConfigIsClearError(t *testing.T) {
	env, _, errb, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[daemon]\nmax_sessions = 64\nmax_sesions = 3\n"), 0o600)
	if code := Main(context.Background(), []string{"daemon"}, env); code != 1 {
		t.Fatalf("exit %d", code)
	}
	want := filepath.Join(dir, "config.toml") + ":3: unknown key daemon.max_sesions"
	if !strings.Contains(errb.String(), want) {
		t.Fatalf("stderr %q, want %q", errb, want)
	}
}

func TestVersionAndUsage(t *testing.T) {
	env, out, errb, _ := testEnv(t, "")
	if Main(context.Background(), []string{"version"}, env) != 0 || !strings.HasPrefix(out.String(), "zeroclaw ") {
		t.Fatalf("version: %q", out)
	}
	if Main(context.Background(), []string{"frobnicate"}, env) != 2 || !strings.Contains(errb.String(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %q", errb)
	}
}

// zeroclaw models lists what the provider offers; prompt --model and
// gateway pair work against a real daemon process.
func TestModelsPromptModelAndGatewayPair(t *testing.T) {
	env, out, errb, _ := testEnv(t, "")
	startDaemon(t, env)
	if code := Main(context.Background(), []string{"models", "--no-start"}, env); code != 0 || out.String() != "* echo\n" {
		t.Fatalf("models: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"prompt", "--no-start", "--model", "echo", "--session", "m1", "hi"}, env); code != 0 || !strings.Contains(out.String(), "echo: hi") {
		t.Fatalf("prompt --model: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	// No gateway runs: pairing says how to start one.
	if code := Main(context.Background(), []string{"gateway", "pair"}, env); code != 1 || !strings.Contains(errb.String(), "--gateway") {
		t.Fatalf("gateway pair without a gateway: %d %q", code, errb.String())
	}
}

// daemon logs, restart and stop, on a daemon started on demand.
func TestDaemonLogsRestartStop(t *testing.T) {
	env, out, errb, _ := testEnv(t, "")
	if code := Main(context.Background(), []string{"status", "--start"}, env); code != 0 {
		t.Fatalf("status --start: %d %s", code, errb.String())
	}
	// Held open so the ephemeral daemon waits for the restart.
	sock := endpointOf(env.Getenv("ZEROCLAW_CONFIG_DIR"))
	pre, err := client.Dial(context.Background(), sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pre.Close()
	var first protocol.StatusResult
	out.Reset()
	Main(context.Background(), []string{"status", "--output-format", "json"}, env)
	json.Unmarshal(out.Bytes(), &first)
	out.Reset()
	if code := Main(context.Background(), []string{"daemon", "logs", "-n", "100"}, env); code != 0 || !strings.Contains(out.String(), "daemon ready") {
		t.Fatalf("logs: %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"daemon", "restart"}, env); code != 0 ||
		!strings.Contains(out.String(), fmt.Sprintf("stopped the daemon (pid %d)", first.PID)) || !strings.Contains(out.String(), "started the daemon (pid ") {
		t.Fatalf("restart: %d %q %q", code, out.String(), errb.String())
	}
	// Held open so the restarted (ephemeral) daemon stays for the rest.
	held, err := client.Dial(context.Background(), sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var second protocol.StatusResult
	out.Reset()
	Main(context.Background(), []string{"status", "--output-format", "json"}, env)
	json.Unmarshal(out.Bytes(), &second)
	if second.PID == 0 || second.PID == first.PID || second.Ephemeral != first.Ephemeral {
		t.Fatalf("after restart: pid %d (was %d), ephemeral %v (was %v)", second.PID, first.PID, second.Ephemeral, first.Ephemeral)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"daemon", "stop"}, env); code != 0 || !strings.Contains(out.String(), "stopped the daemon") {
		t.Fatalf("stop: %d %q %q", code, out.String(), errb.String())
	}
	errb.Reset()
	if code := Main(context.Background(), []string{"daemon", "stop"}, env); code != 1 || !strings.Contains(errb.String(), "no daemon is running") {
		t.Fatalf("stop again: %d %q", code, errb.String())
	}
}

// Conventions: --version and -V, help CMD, a prompt of several words or
// from stdin, a relative --cwd.
func TestCLIConventions(t *testing.T) {
	for _, v := range []string{"--version", "-V"} {
		env, out, _, _ := testEnv(t, "")
		if code := Main(context.Background(), []string{v}, env); code != 0 || !strings.HasPrefix(out.String(), "zeroclaw ") {
			t.Fatalf("%s: %d %q", v, code, out.String())
		}
	}
	// Help is on stdout with exit 0, however asked for.
	for _, args := range [][]string{{"help", "prompt"}, {"prompt", "--help"}, {"prompt", "-h"}, {"help", "daemon", "reload"}, {}} {
		env, out, errb, _ := testEnv(t, "")
		if code := Main(context.Background(), args, env); code != 0 || !strings.Contains(out.String(), "Usage:") || errb.Len() != 0 {
			t.Fatalf("%q: %d %q %q", args, code, out.String(), errb.String())
		}
	}
	// Usage mistakes: exit 2, on stderr, with a one-line hint.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"prompt", "--bogus", "x"}, "unknown flag: --bogus"},
		{[]string{"sessions", "show"}, "want one session id"},
		{[]string{"status", "extra"}, `unexpected argument "extra"`},
		{[]string{"prompt", "hi", "--output-format", "yaml"}, "must be text, json or ndjson"},
		{[]string{"daemon", "logs", "-n", "many"}, "invalid argument"},
	} {
		env, out, errb, _ := testEnv(t, "")
		code := Main(context.Background(), c.args, env)
		lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
		if code != 2 || out.Len() != 0 || !strings.Contains(lines[0], c.want) || len(lines) != 2 || !strings.HasPrefix(lines[1], "Run '") {
			t.Fatalf("%q: %d out %q err %q", c.args, code, out.String(), errb.String())
		}
	}
	// Shell completion.
	for _, sh := range []string{"bash", "zsh", "fish"} {
		env, out, _, _ := testEnv(t, "")
		if code := Main(context.Background(), []string{"completion", sh}, env); code != 0 || !strings.Contains(out.String(), "zeroclaw") {
			t.Fatalf("completion %s: %d %.200q", sh, code, out.String())
		}
	}
	env, _, _, _ := testEnv(t, "")
	startDaemon(t, env)
	dir := testdir.New(t)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	if code, out, errs := runCLI(t, env, "", "prompt", "--no-start", "--cwd", ".", "hello", "there", "world"); code != 0 || !strings.Contains(out, "echo: hello there world") {
		t.Fatalf("words and a relative --cwd: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "from stdin\n", "prompt", "--no-start"); code != 0 || !strings.Contains(out, "echo: from stdin") {
		t.Fatalf("stdin: %d %q %q", code, out, errs)
	}
	// Thoughts: on stderr, on lines of their own, no escape codes when
	// stderr is not a terminal.
	code, out, errs := runCLI(t, env, "", "prompt", "--no-start", "/think pondering deeply\nthe answer")
	if code != 0 || strings.Contains(out, "pondering") || !strings.Contains(errs, "pondering deeply\n") || strings.Contains(errs+out, "\x1b") {
		t.Fatalf("thoughts: %d %q %q", code, out, errs)
	}
	// Flags after the words.
	if code, out, errs := runCLI(t, env, "", "prompt", "hi", "--no-start", "--output-format", "json"); code != 0 || !strings.Contains(out, `"stopReason": "end_turn"`) {
		t.Fatalf("flags after the prompt: %d %q %q", code, out, errs)
	}
	// A daemon's error reads as a sentence, never as a wire code.
	code, out, errs = runCLI(t, env, "", "prompt", "--no-start", "--agent", "nope", "hi")
	if code != 1 || out != "" || !strings.Contains(errs, `unknown agent "nope"`) || strings.Contains(errs, "-326") || strings.Contains(errs, "jsonrpc") {
		t.Fatalf("daemon error: %d %q %q", code, out, errs)
	}
}
