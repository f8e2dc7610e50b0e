package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func echoConfig(model string) string {
	return "[providers.echo]\nkind = \"echo\"\n\n[agents.default]\nprovider = \"echo\"\nmodel = \"" + model + "\"\n"
}

// config check validates, prints the effective config with each value's
// origin, names keys by their variable and never shows a secret; config
// path says where the file is.
func TestConfigCheckAndPath(t *testing.T) {
	env, out, errb, dir := testEnv(t, "")
	if code := Main(context.Background(), []string{"config", "path"}, env); code != 0 || strings.TrimSpace(out.String()) != filepath.Join(dir, "config.toml") ||
		!strings.Contains(errb.String(), "does not exist") {
		t.Fatalf("config path: %d %q %q", code, out.String(), errb.String())
	}
	writeConfig(t, dir, `[providers.main]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "SECRET_KEY_VAR"

[mcp.servers.files]
command = "files-server"
env = { TOKEN = "hunter2" }

[[permissions]]
tool = "shell"
pattern = "git push*"
decision = "ask"

[[hooks]]
event = "PreToolUse"
command = "true"

[[permissions]] # the second rule
tool = "write_file"
pattern = "secrets/**"
decision = "deny"
`)
	env, out, errb, _ = testEnv(t, "")
	env.Getenv = func(k string) string {
		switch k {
		case "ZEROCLAW_CONFIG_DIR":
			return dir
		case "SECRET_KEY_VAR":
			return "sk-very-secret"
		}
		return ""
	}
	if code := Main(context.Background(), []string{"config", "check"}, env); code != 0 {
		t.Fatalf("config check: %d %q", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		`kind = "openai"`, "# config.toml:2",
		`api_key_env = "SECRET_KEY_VAR"`, "config.toml:4; set",
		`max_sessions = 64`, "# default",
		`[agents.default]`, `provider = "main"`, "the file's one provider",
		`env = { TOKEN = "<hidden>" }`,
		"[[permissions]]  # 1 of permissions, config.toml:10", `pattern = "git push*"`,
		"[[permissions]]  # 2 of permissions, config.toml:19", `pattern = "secrets/**"`,
		"[[hooks]]  # 1 of hooks, config.toml:15", `event = "PreToolUse"`,
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("config check lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sk-very-secret") || strings.Contains(got, "hunter2") {
		t.Fatalf("config check shows a secret:\n%s", got)
	}
	// Without the variable: a warning, still exit 0.
	env, out, errb, _ = testEnv(t, "")
	env.Getenv = func(k string) string {
		if k == "ZEROCLAW_CONFIG_DIR" {
			return dir
		}
		return ""
	}
	if code := Main(context.Background(), []string{"config", "check"}, env); code != 0 ||
		!strings.Contains(errb.String(), `warning: providers.main.api_key_env = "SECRET_KEY_VAR": the variable is not set`) ||
		!strings.Contains(out.String(), "NOT SET") {
		t.Fatalf("unset key variable: %d %q", code, errb.String())
	}
	// A mistake: exit 1, the file, line and key.
	writeConfig(t, dir, "[daemon]\nmax_sessions = 0\n")
	env, out, errb, _ = testEnv(t, "")
	env.Getenv = func(k string) string { return map[string]string{"ZEROCLAW_CONFIG_DIR": dir}[k] }
	if code := Main(context.Background(), []string{"config", "check"}, env); code != 1 || out.Len() != 0 ||
		!strings.Contains(errb.String(), "config.toml: daemon.max_sessions = 0: must be at least 1") {
		t.Fatalf("bad config: %d %q %q", code, out.String(), errb.String())
	}
	writeConfig(t, dir, "[daemon]\nmax_sesions = 3\n")
	errb.Reset()
	if code := Main(context.Background(), []string{"config", "check"}, env); code != 1 || !strings.Contains(errb.String(), "config.toml:2: unknown key daemon.max_sesions") {
		t.Fatalf("unknown key: %d %q", code, errb.String())
	}
}

// A reload (zeroclaw daemon reload, or SIGHUP) puts a new config in force
// without dropping sessions: the next turn of a session opened before it
// runs on the new config. A bad file is refused and the old one stays.
func TestConfigReload(t *testing.T) {
	env, out, errb, dir := testEnv(t, "")
	writeConfig(t, dir, echoConfig("first"))
	cmd, logs := startDaemon(t, env)
	sock := filepath.Join(dir, "data", "daemon.sock")
	ctx := context.Background()
	c, err := client.Dial(ctx, sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ns protocol.SessionNewResult
	if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{}, &ns); err != nil || ns.Model != "first" {
		t.Fatalf("session/new: %v %+v", err, ns)
	}
	model := func() string {
		var r protocol.SessionConfigureResult
		if err := c.Call(ctx, protocol.MethodSessionConfigure, protocol.SessionConfigureParams{SessionID: ns.SessionID}, &r); err != nil {
			t.Fatal(err)
		}
		return r.Model
	}

	writeConfig(t, dir, echoConfig("second")+"\n[gateway]\nlisten = \"127.0.0.1:9\"\n")
	if code := Main(ctx, []string{"daemon", "reload"}, env); code != 0 || !strings.Contains(out.String(), "reloaded: "+filepath.Join(dir, "config.toml")) ||
		!strings.Contains(errb.String(), "gateway changed; it takes effect at the next start") {
		t.Fatalf("reload: %d %q %q", code, out.String(), errb.String())
	}
	if m := model(); m != "second" {
		t.Fatalf("after reload the session runs on %q, want second", m)
	}
	text := "still here"
	var pr protocol.SessionPromptResult
	if err := c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: ns.SessionID, Prompt: &text}, &pr); err != nil || pr.StopReason != "end_turn" {
		t.Fatalf("a turn after the reload: %v %+v", err, pr)
	}

	// A bad file: refused with its error; the old config stays.
	writeConfig(t, dir, echoConfig("third")+"\n[daemon]\nmax_sessions = 0\n")
	out.Reset()
	errb.Reset()
	if code := Main(ctx, []string{"daemon", "reload"}, env); code != 1 || out.Len() != 0 ||
		!strings.Contains(errb.String(), "daemon.max_sessions = 0: must be at least 1 (the old config stays in force)") || strings.Contains(errb.String(), "-320") {
		t.Fatalf("bad reload: %d %q %q", code, out.String(), errb.String())
	}
	if m := model(); m != "second" {
		t.Fatalf("after a refused reload the session runs on %q, want second", m)
	}

	// SIGHUP does the same.
	writeConfig(t, dir, echoConfig("fourth"))
	cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Model == "fourth" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP: status model %q\n%s", st.Model, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := model(); m != "fourth" {
		t.Fatalf("after SIGHUP the session runs on %q, want fourth", m)
	}
	var st protocol.StatusResult
	out.Reset()
	Main(ctx, []string{"status", "--output-format", "json"}, env)
	json.Unmarshal(out.Bytes(), &st)
	if st.ActiveSessions != 1 || st.PID != cmd.Process.Pid {
		t.Fatalf("the daemon or its session did not survive the reloads: %+v", st)
	}
}

// zeroclaw setup finds a local Ollama (a real HTTP server speaking its
// /api/tags) and writes a config that uses it; without one it asks for a
// provider and the variable of its key.
func TestSetup(t *testing.T) {
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"models":[{"name":"llama3.2:3b"},{"name":"qwen2.5-coder:7b"}]}`))
	}))
	defer ollama.Close()
	env, out, errb, dir := testEnv(t, "\n2\n")
	env.Getenv = func(k string) string {
		return map[string]string{"ZEROCLAW_CONFIG_DIR": dir, "OLLAMA_HOST": ollama.URL}[k]
	}
	if code := Main(context.Background(), []string{"setup"}, env); code != 0 {
		t.Fatalf("setup: %d %q %q", code, out.String(), errb.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "config.toml"))
	if !strings.Contains(string(b), `base_url = "`+ollama.URL+`/v1"`) || !strings.Contains(string(b), `model = "qwen2.5-coder:7b"`) {
		t.Fatalf("config after setup with Ollama:\n%s\n%s", b, errb.String())
	}
	// An existing file is kept unless the user says so.
	env, out, _, _ = testEnv(t, "n\n")
	env.Getenv = func(k string) string { return map[string]string{"ZEROCLAW_CONFIG_DIR": dir}[k] }
	if code := Main(context.Background(), []string{"setup"}, env); code != 0 {
		t.Fatal(code)
	}
	if b2, _ := os.ReadFile(filepath.Join(dir, "config.toml")); string(b2) != string(b) {
		t.Fatal("setup replaced the file after a no")
	}
	// No Ollama: anthropic, with the key's variable named.
	env, out, errb, _ = testEnv(t, "1\nMY_ANTHROPIC_KEY\n\n")
	env.Getenv = func(k string) string {
		return map[string]string{"ZEROCLAW_CONFIG_DIR": dir, "OLLAMA_HOST": "http://127.0.0.1:1"}[k]
	}
	if code := Main(context.Background(), []string{"setup", "--force"}, env); code != 0 {
		t.Fatalf("setup: %d %q", code, errb.String())
	}
	b, _ = os.ReadFile(filepath.Join(dir, "config.toml"))
	if !strings.Contains(string(b), `kind = "anthropic"`) || !strings.Contains(string(b), `api_key_env = "MY_ANTHROPIC_KEY"`) ||
		!strings.Contains(errb.String(), "MY_ANTHROPIC_KEY is not set here") {
		t.Fatalf("config after setup:\n%s\n%s", b, errb.String())
	}
	if fi, _ := os.Stat(filepath.Join(dir, "config.toml")); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("config.toml mode %v", fi.Mode())
	}
}

// zeroclaw agents list: the config's agents and a project's agent files,
// each with where it is defined; what a file gets wrong is a warning.
func TestAgentsList(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\n[agents.scout]\nprovider = \"echo\"\ndescription = \"finds files\"\ntools = [\"glob\"]\n"), 0o600)
	cwd := t.TempDir()
	os.MkdirAll(filepath.Join(cwd, ".claude", "agents"), 0o755)
	os.MkdirAll(filepath.Join(cwd, ".zeroclaw", "agents"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".claude", "agents", "reviewer.md"), []byte("---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, Teleport\n---\nReview.\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, ".zeroclaw", "agents", "scout.md"), []byte("---\ndescription: shadowed\n---\nx\n"), 0o644)
	os.WriteFile(filepath.Join(cwd, ".zeroclaw", "agents", "broken.md"), []byte("no front matter\n"), 0o644)
	code, out, errs := runCLI(t, env, "", "agents", "list", "--cwd", cwd)
	if code != 0 {
		t.Fatalf("agents list: %d %s", code, errs)
	}
	for _, want := range []string{"default", "scout", "finds files", "glob", "reviewer", filepath.Join(cwd, ".claude", "agents", "reviewer.md"), "Reviews code", "read_file,search"} {
		if !strings.Contains(out, want) {
			t.Errorf("agents list has no %q:\n%s", want, out)
		}
	}
	for _, want := range []string{`unknown tool "Teleport"`, "broken.md: no front matter", `the config has an agent "scout"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("agents list warns of no %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out, "shadowed") {
		t.Errorf("a file agent the config has is listed:\n%s", out)
	}
}
