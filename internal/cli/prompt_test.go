package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// runCLI runs one command in-process with stdin and returns exit code,
// stdout and stderr.
func runCLI(t *testing.T, env console.Env, stdin string, args ...string) (int, string, string) {
	t.Helper()
	env2, out, errb, _ := testEnv(t, stdin)
	env2.Getenv, env2.Environ = env.Getenv, env.Environ
	code := Main(context.Background(), args, env2)
	return code, out.String(), errb.String()
}

func TestPromptStreamsTextJSONAndNDJSON(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", cwd, "hello there")
	if code != 0 || out != "echo: hello there\n" {
		t.Fatalf("text: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "", "prompt", "--cwd", cwd, "--output-format", "json", "hi")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res["stopReason"] != "end_turn" || res["content"] != "echo: hi" {
		t.Fatalf("json: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, env, "", "prompt", "--cwd", cwd, "--output-format", "ndjson", "/think hmm\nok")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var types []string
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("ndjson line %q: %v", l, err)
		}
		types = append(types, m["type"].(string))
		if i < len(lines)-1 && m["seq"].(float64) != float64(i+1) {
			t.Errorf("line %d seq %v", i, m["seq"])
		}
	}
	if got := strings.Join(types, " "); code != 0 || got != "input_update user_message agent_thought_chunk agent_message_chunk agent_message_chunk context_usage input_update turn_complete prompt_result" {
		t.Errorf("ndjson exit %d types %s", code, got)
	}
	// The prompt from stdin.
	code, out, _ = runCLI(t, env, "piped words\n", "prompt", "--cwd", cwd, "-")
	if code != 0 || out != "echo: piped words\n" {
		t.Errorf("stdin prompt: %d %q", code, out)
	}
	// A failed turn: exit 1 with one line naming the provider.
	code, out, errs = runCLI(t, env, "", "prompt", "--cwd", cwd, "/fail model down")
	if code != 1 || out != "" || errs != "zeroclaw prompt: the turn failed: provider echo (echo:): model down\n" {
		t.Errorf("failed turn: exit %d stdout %q stderr %q", code, out, errs)
	}
	// Usage errors exit 2.
	if code, _, _ := runCLI(t, env, "", "prompt", "--output-format", "xml", "x"); code != 2 {
		t.Errorf("bad format exit %d", code)
	}
	if code, _, _ := runCLI(t, env, "", "prompt"); code != 2 {
		t.Errorf("no prompt exit %d", code)
	}
}

func TestPromptApprovalsAndQuestionsFromPipedInput(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	write := `/tool write_file {"path":"f.txt","content":"data"}`
	code, out, errs := runCLI(t, env, "n\n", "prompt", "--cwd", cwd, write)
	if code != 0 || !strings.Contains(out, "write_file was not run: rejected by the user") || !strings.Contains(errs, "Allow write_file? Write f.txt (4 bytes)") {
		t.Fatalf("reject: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(cwd, "f.txt")); err == nil {
		t.Fatal("rejected write happened")
	}
	// "e" explains, then "y" allows.
	code, out, errs = runCLI(t, env, "e\ny\n", "prompt", "--cwd", cwd, write)
	if code != 0 || !strings.Contains(out, "returned: wrote 4 bytes") || !strings.Contains(errs, `input {"path":"f.txt","content":"data"}`) {
		t.Fatalf("explain+allow: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "", "prompt", "--cwd", cwd, "--approve", "all", `/tool shell {"command":"echo approved-all"}`)
	if code != 0 || !strings.Contains(out, "returned: approved-all") {
		t.Fatalf("--approve all: %d %q", code, out)
	}
	code, out, _ = runCLI(t, env, "", "prompt", "--cwd", cwd, "--approve", "none", `/tool shell {"command":"echo x"}`)
	if code != 0 || !strings.Contains(out, "--approve none") {
		t.Fatalf("--approve none: %d %q", code, out)
	}
	// Stdin closed with no answer: rejected, not hung.
	code, out, _ = runCLI(t, env, "", "prompt", "--cwd", cwd, `/tool shell {"command":"echo x"}`)
	if code != 0 || !strings.Contains(out, "rejected by the user: no answer") {
		t.Fatalf("no answer: %d %q", code, out)
	}
	// A question's text is shown, never obeyed: its control sequences
	// (a title change here) are printed as ^[, its line breaks kept.
	_, _, errs = runCLI(t, env, "/decline\n", "prompt", "--cwd", cwd, `/tool ask_user {"question":"Line one\nEvil\u001b]0;pwned\u0007?","choices":["a","b"]}`)
	if strings.ContainsRune(errs, 0x1b) || !strings.Contains(errs, "? Line one\nEvil^[]0;pwned^G?") {
		t.Fatalf("a question with control sequences: %q", errs)
	}
	// ask_user: a choice by number; poll with several.
	code, out, errs = runCLI(t, env, "2\n", "prompt", "--cwd", cwd, `/tool ask_user {"question":"Colour?","choices":["red","blue"]}`)
	if code != 0 || out != "tool ask_user returned: the user answered: blue\n" || !strings.Contains(errs, "? Colour?\n  1) red\n  2) blue") {
		t.Fatalf("ask_user: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "1 3\n", "prompt", "--cwd", cwd, `/tool poll {"question":"Which?","options":["a","b","c"],"multi":true}`)
	if code != 0 || out != "tool poll returned: the user chose: [\"a\",\"c\"]\n" {
		t.Fatalf("poll: %d %q", code, out)
	}
	// Enter alone insists on a required answer; /decline and /cancel are
	// answers of their own.
	code, out, errs = runCLI(t, env, "\n/decline\n", "prompt", "--cwd", cwd, `/tool ask_user {"question":"Name?"}`)
	if code != 0 || out != "tool ask_user returned: the user declined to answer\n" || !strings.Contains(errs, "this field is required") {
		t.Fatalf("declined: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "/cancel\n", "prompt", "--cwd", cwd, `/tool ask_user {"question":"Name?"}`)
	if code != 0 || out != "tool ask_user returned: the user cancelled the question\n" {
		t.Fatalf("cancelled: %d %q", code, out)
	}
}

func TestPromptStartsDaemonOnDemandAndSessionsCommands(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	cwd := testdir.New(t)
	if code, _, errs := runCLI(t, env, "", "prompt", "--no-start", "--cwd", cwd, "x"); code != 1 || !strings.Contains(errs, "no daemon is running") {
		t.Fatalf("--no-start without a daemon: %d %q", code, errs)
	}
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", cwd, "--session", "demo-1", "first")
	if code != 0 || out != "echo: first\n" {
		t.Fatalf("auto-started prompt: %d %q %q", code, out, errs)
	}
	// The session goes on with --session (the ephemeral daemon may have
	// gone between the two; the store keeps the session either way).
	if code, out, _ := runCLI(t, env, "", "prompt", "--session", "demo-1", "second"); code != 0 || out != "echo: second\n" {
		t.Fatalf("second prompt: %d %q", code, out)
	}
	code, out, _ = runCLI(t, env, "", "sessions", "list", "--output-format", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 || list[0]["sessionId"] != "demo-1" || list[0]["title"] != "first" {
		t.Fatalf("sessions list: %d %q", code, out)
	}
	code, out, _ = runCLI(t, env, "", "sessions", "show", "demo-1")
	if code != 0 || out != "> first\necho: first\n> second\necho: second\n" {
		t.Fatalf("sessions show: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, env, "", "sessions", "delete", "demo-1"); code != 0 || out != "deleted demo-1\n" {
		t.Fatalf("delete: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, env, "", "sessions", "show", "demo-1"); code != 1 || !strings.Contains(errs, "session not found") {
		t.Fatalf("show deleted: %d %q", code, errs)
	}
	if code, _, _ := runCLI(t, env, "", "sessions", "frob"); code != 2 {
		t.Errorf("unknown verb exit %d", code)
	}
	// The daemon the client started exits by itself once we are gone.
	waitEphemeralGone(t, dir)
}

// cutProxy forwards a socket to the daemon's and cuts the first
// connection after limit bytes from the daemon.
func cutProxy(t *testing.T, target string, limit int) string {
	path := filepath.Join(testdir.New(t), "proxy.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	first := true
	go func() {
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			dc, err := net.Dial("unix", target)
			if err != nil {
				cc.Close()
				continue
			}
			n := -1
			if first {
				n, first = limit, false
			}
			go func() { io.Copy(dc, cc); dc.Close() }()
			go func() {
				defer cc.Close()
				defer dc.Close()
				if n < 0 {
					io.Copy(cc, dc)
					return
				}
				io.CopyN(cc, dc, int64(n))
			}()
		}
	}()
	return path
}

func TestPromptReconnectsAndReplaysWithoutDuplicates(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	proxy := cutProxy(t, filepath.Join(dir, "data", "daemon.sock"), 4000)
	vars := map[string]string{"ZEROCLAW_CONFIG_DIR": dir, "ZEROCLAW_SOCKET": proxy}
	env.Getenv = func(k string) string { return vars[k] }
	code, out, errs := runCLI(t, env, "", "prompt", "--no-start", "--cwd", testdir.New(t), "--output-format", "ndjson", "/delay 2\n/chunks 300")
	if code != 0 || !strings.Contains(errs, "reconnecting") {
		t.Fatalf("exit %d stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Every event once, in order, then the answer.
	for i, l := range lines[:len(lines)-1] {
		var m map[string]any
		json.Unmarshal([]byte(l), &m)
		if m["seq"].(float64) != float64(i+1) {
			t.Fatalf("line %d has seq %v: a gap or a repeat", i, m["seq"])
		}
	}
	if n := len(lines); n != 1+300+4+1 || !strings.Contains(lines[n-1], `"type":"prompt_result","sessionId"`) || !strings.Contains(lines[n-1], `"stopReason":"end_turn"`) {
		t.Fatalf("%d lines, last %s", len(lines), lines[len(lines)-1])
	}
	// In text mode the reply is printed exactly once too.
	vars["ZEROCLAW_SOCKET"] = cutProxy(t, filepath.Join(dir, "data", "daemon.sock"), 4000)
	code, out, errs = runCLI(t, env, "", "prompt", "--no-start", "--cwd", testdir.New(t), "/delay 2\n/chunks 300")
	if code != 0 || out != strings.Repeat("ok ", 300)+"\n" || !strings.Contains(errs, "reconnecting") {
		t.Fatalf("text after reconnect: %d %q %q", code, out, errs)
	}
}

// Two clients that find no daemon at once start one between them: the
// lock decides, and both are served by the winner.
func TestConcurrentAutoStartStartsOneDaemon(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	type out struct {
		code   int
		stdout string
	}
	results := make(chan out, 3)
	for i := range 3 {
		go func() {
			code, o, _ := runCLI(t, env, "", "prompt", "--cwd", dir, fmt.Sprintf("client %d", i))
			results <- out{code, o}
		}()
	}
	for range 3 {
		r := <-results
		if r.code != 0 || !strings.HasPrefix(r.stdout, "echo: client ") {
			t.Fatalf("a racing client: %+v", r)
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "data", "daemon.log"))
	if n := strings.Count(string(log), `msg="daemon ready"`); n != 1 {
		t.Fatalf("%d daemons became ready:\n%s", n, log)
	}
	// Wait for the ephemeral daemon to go, so the test leaves nothing behind.
	waitEphemeralGone(t, dir)
}

func TestACPStatusAndUnknownWord(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	code, out, _ := runCLI(t, env, "", "acp", "status", "--output-format", "json")
	var st map[string]any
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("acp status: %d %q", code, out)
	}
	p := st["protocol"].(map[string]any)
	if st["kind"] != "acp" || st["supported"] != true || st["status"] != "supported" || st["phase"] != "stdio_bridge" ||
		st["serve_alias_only"] != false || st["exit_code"].(float64) != 0 || st["schema_version"] != "1.0" ||
		p["json_rpc"] != true || p["daemon"] != true || p["version"].(float64) != 1 || p["serve_starts_daemon"] != true ||
		p["endpoint"] != endpointOf(dir) {
		t.Errorf("envelope %v", st)
	}
	code, out, errs := runCLI(t, env, "", "acp", "start", "--output-format", "json")
	var e map[string]any
	if err := json.Unmarshal([]byte(errs), &e); code != 1 || out != "" || err != nil || e["type"] != "error" || e["kind"] != "unsupported_acp_invocation" || e["exit_code"].(float64) != 1 {
		t.Errorf("acp start: %d stdout %q stderr %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, env, "", "acp", "start"); code != 1 || !strings.Contains(errs, `unknown acp subcommand "start"`) {
		t.Errorf("acp start (text): %d %q", code, errs)
	}
}

// A turn that reaches a spending limit exits 5 and says which limit;
// the list shows what each session cost.
func TestPromptStopsAtTheBudget(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	// The offline model, priced at $1 an input token: any turn crosses.
	conf := "[providers.echo]\nkind = \"echo\"\n[providers.echo.pricing]\ninput = 1000000\noutput = 0\n" +
		"[agents.default]\nprovider = \"echo\"\n[budget]\nmax_cost_usd_per_session = 0.5\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, env)
	cwd := testdir.New(t)
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", cwd, "--output-format", "json", "hello")
	var res struct {
		SessionID, StopReason, Notice string
		Usage                         struct{ CostUsd float64 }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 5 || res.StopReason != "budget" || res.Usage.CostUsd < 1 ||
		!strings.Contains(errs, "max_cost_usd_per_session = 0.5") {
		t.Fatalf("exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(t, env, "", "prompt", "--session", res.SessionID, "again")
	if code != 5 || out != "" || !strings.Contains(errs, "the session's budget is spent") {
		t.Errorf("past the budget: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "", "sessions", "list")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("$%.4f  ", res.Usage.CostUsd)) {
		t.Errorf("sessions list %q does not show the cost $%.4f", out, res.Usage.CostUsd)
	}
}

// zeroclaw sessions checkpoints, diff, rewind (and --undo), fork and
// export, on a real daemon.
func TestSessionsRewindForkExport(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	startDaemon(t, env)
	cwd := testdir.New(t)
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", cwd, "--output-format", "json", `/tool write_file {"path":"made.txt","content":"made\n"}`)
	var res struct{ SessionID string }
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("prompt: %d %q %q", code, out, errs)
	}
	id := res.SessionID
	code, out, _ = runCLI(t, env, "", "sessions", "checkpoints", id)
	if code != 0 || !strings.Contains(out, "turn 1") || !strings.Contains(out, "created  made.txt (0 → 5 bytes)") {
		t.Errorf("checkpoints: %d %q", code, out)
	}
	if code, out, _ = runCLI(t, env, "", "sessions", "diff", id, "1"); code != 0 || !strings.Contains(out, "+++ b/made.txt\n") || !strings.Contains(out, "+made\n") {
		t.Errorf("diff: %d %q", code, out)
	}
	if code, out, _ = runCLI(t, env, "", "sessions", "rewind", id, "1"); code != 0 || out != "removed  made.txt\n" {
		t.Errorf("rewind: %d %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made.txt")); err == nil {
		t.Error("made.txt is still there after the rewind")
	}
	if code, out, _ = runCLI(t, env, "", "sessions", "rewind", id, "--undo"); code != 0 || out != "restored made.txt\n" {
		t.Errorf("undo: %d %q", code, out)
	}
	if code, _, errs = runCLI(t, env, "", "sessions", "rewind", id); code != 2 || !strings.Contains(errs, "give the turn") {
		t.Errorf("rewind without a turn: %d %q", code, errs)
	}
	code, out, _ = runCLI(t, env, "", "sessions", "fork", id, "--new-id", "forked-1")
	if code != 0 || !strings.Contains(out, "into forked-1") {
		t.Errorf("fork: %d %q", code, out)
	}
	file := filepath.Join(testdir.New(t), "s.html")
	if code, _, errs = runCLI(t, env, "", "sessions", "export", "forked-1", "--format", "html", "-o", file); code != 0 {
		t.Fatalf("export: %d %q", code, errs)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), "write_file") {
		t.Errorf("the exported page: %.300s", b)
	}
}

// zeroclaw prompt on a session where another client's turn runs: its
// prompt waits behind that turn, and its output is its own turn alone
// (text and ndjson), not the other client's reply streaming before it.
func TestPromptShowsOnlyItsOwnTurn(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	startDaemon(t, env)
	other, updates := dialUpdates(t, dir)
	ctx := context.Background()
	if _, err := other.NewSession(ctx, protocol.SessionNewParams{SessionID: "shared", Cwd: testdir.New(t)}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "ndjson"} {
		slow := "/delay 5\n/chunks 200"
		done := make(chan error, 1)
		go func() {
			done <- other.Call(ctx, "session/prompt", protocol.SessionPromptParams{SessionID: "shared", Prompt: &slow}, nil)
		}()
		for u := range updates {
			if u.Type == "agent_message_chunk" {
				break
			}
		}
		code, out, errs := runCLI(t, env, "", "prompt", "--session", "shared", "--output-format", format, "mine")
		if code != 0 {
			t.Fatalf("%s: %d %s", format, code, errs)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		switch format {
		case "text":
			if out != "echo: mine\n" {
				t.Errorf("text output %q", out)
			}
		case "ndjson":
			if strings.Contains(out, `"ok `) || !strings.Contains(out, `"text":"mine"`) || !strings.Contains(out, `"type":"prompt_result"`) {
				t.Errorf("ndjson output %s", out)
			}
		}
		for len(updates) > 0 {
			<-updates
		}
	}
}

// A reply cut at the output limit inside a tool call's arguments: the
// prompt says the limit and the tool, and exits 6 (docs/cli.md).
func TestPromptMaxTokensExitCode(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"choices":[{"index":0,"delta":{"content":"Writing the file."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"a lo"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`, `[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", d)
		}
	}))
	defer model.Close()
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.fake]\nkind = \"openai\"\nbase_url = \""+model.URL+
		"\"\nmodel = \"m\"\nmax_tokens = 300\n[agents.default]\nprovider = \"fake\"\n"), 0o600)
	defer runCLI(t, env, "", "daemon", "stop")
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", t.TempDir(), "write a.txt")
	if code != 6 || out != "Writing the file.\n" || !strings.Contains(errs, "max_tokens = 300") || !strings.Contains(errs, "a call to write_file, which was not run") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// zeroclaw permissions list says each answer's scope: an "always" for
// the session (a on stdin) is the session's, until it ends; one for the
// project (p) is stored for the project (issue 50, item 12). Both are
// revoked by their ids.
func TestPermissionsListSaysTheScope(t *testing.T) {
	env, _, _, _ := testEnv(t, "")
	startDaemon(t, env)
	cwd := testdir.New(t)
	code, _, errs := runCLI(t, env, "a\n", "prompt", "--cwd", cwd, "--session", "scoped", `/tool shell {"command":"echo a"}`)
	if code != 0 || !strings.Contains(errs, "(allowed for the rest of this session (not stored): every call of shell)") {
		t.Fatalf("a: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, env, "p\n", "prompt", "--cwd", cwd, "--session", "scoped", `/tool write_file {"path":"w.txt","content":"x"}`)
	if code != 0 || !strings.Contains(errs, "(allowed in this project, this session and later ones, until revoked (zeroclaw permissions): every call of write_file)") {
		t.Fatalf("p: exit %d, stderr %q", code, errs)
	}
	code, out, errs := runCLI(t, env, "", "permissions", "list", "--cwd", cwd)
	if code != 0 {
		t.Fatalf("list: exit %d %q", code, errs)
	}
	var ids []string
	for _, want := range []string{
		`project allow write_file   "*"  (for the project ` + cwd + `, stored until revoked)`,
		`session allow shell        "*"  (for the session scoped in ` + cwd + ` only, until it ends; not stored)`,
	} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.HasSuffix(l, want) {
				found, ids = true, append(ids, strings.Fields(l)[0])
			}
		}
		if !found {
			t.Errorf("permissions list lacks %q:\n%s", want, out)
		}
	}
	for _, id := range ids {
		if code, out, errs := runCLI(t, env, "", "permissions", "revoke", id); code != 0 || out != "revoked "+id+"\n" {
			t.Errorf("revoke %s: exit %d %q %q", id, code, out, errs)
		}
	}
	if code, out, _ := runCLI(t, env, "", "permissions", "list", "--cwd", cwd); code != 0 || out != "no permission rules\n" {
		t.Errorf("after the revokes: %q", out)
	}
}
