package acp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/acp/acptest"
)

// interopDir returns a directory holding the npm packages of
// testdata/interop/package.json: $ZEROCLAW_ACP_NODE_MODULES (what .ci/run
// installs), else an npm install into a cache directory.
func interopDir(t *testing.T) string {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the ACP interop test needs Node 20 (.ci/run installs the npm packages)")
	}
	dir := os.Getenv("ZEROCLAW_ACP_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "zeroclaw-acp-interop")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "acpx", "package.json")); err != nil {
			os.MkdirAll(dir, 0o755)
			pkg, _ := os.ReadFile(filepath.Join("testdata", "interop", "package.json"))
			os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
			}
		}
	}
	script, _ := os.ReadFile(filepath.Join("testdata", "interop", "sdk-client.mjs"))
	if err := os.WriteFile(filepath.Join(dir, "sdk-client.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// zeroclawEnv is the environment of a zeroclaw run by a test: never the
// host's provider keys or zeroclaw settings (it runs on the offline echo
// provider), its own config dir and home.
func zeroclawEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasSuffix(k, "_API_KEY") && !strings.HasSuffix(k, "_AUTH_TOKEN") && k != "OLLAMA_HOST" && !strings.HasPrefix(k, "ZEROCLAW_") {
			env = append(env, kv)
		}
	}
	return append(env, "ZEROCLAW_CONFIG_DIR="+filepath.Join(t.TempDir(), "cfg"), "HOME="+t.TempDir())
}

// acpProcess runs `bin acp` in env, as an editor spawns it: its stdin,
// its stdout's messages decoded, and the process. At the test's end the
// process is killed and the daemon it started stopped.
func acpProcess(t *testing.T, bin string, env []string) (*exec.Cmd, io.WriteCloser, chan map[string]any) {
	t.Cleanup(func() {
		c := exec.Command(bin, "daemon", "stop")
		c.Env = env
		c.Run()
	})
	cmd := exec.Command(bin, "acp")
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan map[string]any, 4096)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	return cmd, stdin, lines
}

// buildZeroclaw builds the real binary for the clients to spawn.
func buildZeroclaw(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "zeroclaw")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/zeroclaw/zeroclaw/cmd/zeroclaw")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestInteropWithACPClientsFromNPM(t *testing.T) {
	dir := interopDir(t)
	bin := buildZeroclaw(t)
	env := zeroclawEnv(t)
	cwd := t.TempDir()
	defer func() {
		// Stop the daemon the clients started.
		c := exec.Command(bin, "rpc")
		c.Env = env
		c.Stdin = strings.NewReader(`{"jsonrpc":"2.0","method":"shutdown","id":1}` + "\n")
		c.Run()
	}()

	t.Run("sdk", func(t *testing.T) {
		cmd := exec.Command("node", filepath.Join(dir, "sdk-client.mjs"), bin, cwd)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sdk client: %v\n%s", err, out)
		}
		var got struct {
			ProtocolVersion int    `json:"protocolVersion"`
			LoadSession     bool   `json:"loadSession"`
			SessionID       string `json:"sessionId"`
			First           struct{ StopReason, Text string }
			Tool            struct {
				StopReason string
				Asked      int
				Kinds      []string
				Output     string
			}
			Cancel string
			Replay struct {
				Users  []string
				Events int
			}
			Steering struct {
				Supported   bool
				Outcome     string
				StopReasons []string
				Order       []string
				Text        string
				Idle        string
				Reason      string
			}
			Editor struct {
				ResumedOptions int
				Mode           string
				StopReason     string
				Asked          int
				Writes         []struct{ Path, Content string }
				Commands       int
				Listed         int
			}
			Task struct {
				StopReason string
				Kind       string
				Child      string
				Texts      []string
				Updates    []json.RawMessage
			}
			ChildLoad struct {
				Users []string
				Text  string
			}
			Plan struct {
				StopReason, Content, Mode string
				Options                   []string
				Request                   json.RawMessage
			}
			Goal struct {
				Advertised               bool
				SetState, State, Summary string
				Line, Cleared            string
				Kept                     bool
			}
			Killed struct {
				StopReason  string
				Pid         int
				ChunksAfter int
				Resumed     *struct {
					Kind    string
					Attempt int
					Text    string
				}
				Updates []json.RawMessage
			}
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("summary %q: %v", out, err)
		}
		if got.ProtocolVersion != 1 || !got.LoadSession || got.SessionID == "" {
			t.Errorf("initialize/new: %+v", got)
		}
		if got.First.StopReason != "end_turn" || got.First.Text != "echo: hello from node" {
			t.Errorf("first prompt: %+v", got.First)
		}
		var toolKinds []string
		for _, k := range got.Tool.Kinds {
			if k != "usage_update:" && k != "session_info_update:" { // beside every turn
				toolKinds = append(toolKinds, k)
			}
		}
		if got.Tool.StopReason != "end_turn" || got.Tool.Asked != 1 || got.Tool.Output != "node-approved\n" || len(toolKinds) < 3 ||
			strings.Join(toolKinds[:3], " ") != "tool_call:pending tool_call_update:in_progress tool_call_update:completed" {
			t.Errorf("tool prompt: %+v", got.Tool)
		}
		if got.Cancel != "cancelled" {
			t.Errorf("cancel: %q", got.Cancel)
		}
		ed := got.Editor
		if ed.ResumedOptions != 3 || ed.Mode != "full" || ed.StopReason != "end_turn" || ed.Asked != 0 || ed.Commands == 0 || ed.Listed == 0 ||
			len(ed.Writes) != 1 || ed.Writes[0].Path != filepath.Join(cwd, "node.txt") || ed.Writes[0].Content != "from node" {
			t.Errorf("the editor phase: %+v", ed)
		}
		if _, err := os.Stat(filepath.Join(cwd, "node.txt")); err == nil {
			t.Error("the write went to the disk, not through the editor")
		}
		st := got.Steering
		// The turns ran in the order sent (the answers may come in
		// either order: JSON-RPC does not order them).
		steered, queued := strings.Index(st.Text, "echo: steered from node"), strings.Index(st.Text, "echo: queued from node")
		if !st.Supported || st.Outcome != "injected" || strings.Join(st.StopReasons, " ") != "end_turn end_turn" ||
			!strings.HasPrefix(st.Text, "ok ok") || steered < 0 || queued < steered || len(st.Order) != 2 ||
			st.Idle != "promptRequired" || st.Reason != "noRunningTurn" {
			t.Errorf("steering: %+v", st)
		}
		if len(got.Replay.Users) != 3 || got.Replay.Users[0] != "hello from node" || got.Replay.Events < 10 {
			t.Errorf("load replay: %+v", got.Replay)
		}
		// A task: one tool call of kind think whose updates name the
		// child's session and carry its answer; every update the SDK
		// received is a valid SessionNotification; the child's session
		// loads in another agent process like any session.
		tk := got.Task
		if tk.StopReason != "end_turn" || tk.Kind != "think" || !strings.HasPrefix(tk.Child, "ses_") || len(tk.Texts) < 3 ||
			!strings.Contains(tk.Texts[0], tk.Child) || !strings.Contains(tk.Texts[len(tk.Texts)-1], "echo: hello from the child") {
			t.Errorf("the task phase: stop %q, kind %q, child %q, contents %q", tk.StopReason, tk.Kind, tk.Child, tk.Texts)
		}
		if len(tk.Updates) < 4 {
			t.Errorf("the task phase kept %d updates", len(tk.Updates))
		}
		for _, u := range tk.Updates {
			acptest.Validate(t, "SessionNotification", u)
		}
		if len(got.ChildLoad.Users) != 1 || !strings.Contains(got.ChildLoad.Users[0], "hello from the child") ||
			!strings.Contains(got.ChildLoad.Text, "echo: ") {
			t.Errorf("session/load of the child: %+v", got.ChildLoad)
		}
		// The daemon killed mid-prompt: the SDK's prompt is answered
		// end_turn, once; the turn streamed on from the next daemon,
		// which said it goes on (a thought, named in _meta), in
		// updates the schema accepts.
		k := got.Killed
		if k.StopReason != "end_turn" || k.Pid == 0 || k.ChunksAfter == 0 || k.Resumed == nil || k.Resumed.Kind != "agent_thought_chunk" ||
			k.Resumed.Attempt != 2 || !strings.Contains(k.Resumed.Text, "the daemon restarted during this turn") {
			t.Errorf("the kill -9 phase: stop %q, pid %d, chunks after %d, resumed %+v", k.StopReason, k.Pid, k.ChunksAfter, k.Resumed)
		}
		for _, u := range k.Updates {
			acptest.Validate(t, "SessionNotification", u)
		}
		// The plan mode's end: a permission request (schema-valid) whose
		// content is the plan, its three options; proceeding (its first)
		// switched the mode to ask.
		if pl := got.Plan; pl.StopReason != "end_turn" || pl.Content != "1. read\n2. write" || strings.Join(pl.Options, " ") != "proceed_ask proceed_accept_edits keep_planning" || pl.Mode != "ask" {
			t.Errorf("the plan phase: %+v", pl)
		} else {
			acptest.Validate(t, "RequestPermissionRequest", pl.Request)
		}
		// The goal extension: advertised, set, met, read back, its
		// change shown as a line, and cleared with keep.
		if g := got.Goal; !g.Advertised || g.SetState != "active" || g.State != "met" || g.Summary != "met from node" || !strings.Contains(g.Line, "goal met") ||
			g.Cleared != "cleared" || !g.Kept {
			t.Errorf("the goal extension: %+v", g)
		}
	})

	t.Run("acpx", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "acpx"), "--format", "json", "--approve-all",
			"--agent", bin+" acp", "exec", `/tool shell {"command":"echo acpx-ok"}`)
		cmd.Env = env
		cmd.Dir = cwd
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("acpx: %v\n%s", err, out)
		}
		s := string(out)
		for _, want := range []string{`"method":"session/request_permission"`, `"optionId":"allow_once"`,
			`"rawOutput":"acpx-ok\n"`, `"status":"completed"`, `"result":{"stopReason":"end_turn"}`} {
			if !strings.Contains(s, strings.ReplaceAll(want, "\n", `\n`)) {
				t.Errorf("acpx output lacks %s:\n%s", want, s)
			}
		}
	})
}
