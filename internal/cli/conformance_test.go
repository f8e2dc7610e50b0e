package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// testdata/conformance/package.json pins it) with zeroclaw as the
// client: for each scenario the suite starts its test server and runs
// this test binary with the server's URL (conformanceClient below), which
// uses zeroclaw as a person would (a config naming the server, zeroclaw
// prompt calling its tool, zeroclaw mcp login when the server wants a
// login, the browser played by an HTTP client); then the suite's checks
// are read. Every check must pass: a warning (a SHOULD missed) fails too.
var conformanceScenarios = []string{
	"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry",
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
	"auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
	"auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
}

// conformanceDir is a directory whose node_modules hold the suite:
// $ZEROCLAW_MCP_CONFORMANCE_NODE_MODULES (what .ci/run installs), else an
// npm install into a cache directory.
func conformanceDir(t *testing.T) string {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the conformance suite needs it (.ci/run installs it all)")
	}
	dir := os.Getenv("ZEROCLAW_MCP_CONFORMANCE_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "zeroclaw-mcp-conformance")
		pkg, err := os.ReadFile(filepath.Join("testdata", "conformance", "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		if old, _ := os.ReadFile(filepath.Join(dir, "package.json")); string(old) != string(pkg) {
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				os.Remove(filepath.Join(dir, "package.json"))
				t.Skipf("npm install of the conformance suite in %s: %v\n%s", dir, err, out)
			}
		}
	}
	return dir
}

func TestMCPConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("the conformance suite runs a daemon per scenario")
	}
	modules := conformanceDir(t)
	cli := filepath.Join(modules, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	register, err := filepath.Abs(filepath.Join("testdata", "conformance", "register.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(self, " \t") {
		t.Skipf("the suite splits its client command on spaces, and the test binary's path has one: %q", self)
	}
	for _, scenario := range conformanceScenarios {
		t.Run(strings.ReplaceAll(scenario, "/", "_"), func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			log := filepath.Join(out, "client.log")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "--import", "file://"+filepath.ToSlash(register), cli,
				"client", "--command", self, "--scenario", scenario, "-o", filepath.Join(out, "results"), "--timeout", "90000")
			cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_CONFORMANCE_CLIENT=1", "ZEROCLAW_CONFORMANCE_LOG="+log)
			suite, err := cmd.CombinedOutput()
			clientLog, _ := os.ReadFile(log)
			var checks []conformanceCheck
			filepath.WalkDir(filepath.Join(out, "results"), func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.Name() == "checks.json" {
					b, _ := os.ReadFile(path)
					var cs []conformanceCheck
					if json.Unmarshal(b, &cs) == nil {
						checks = append(checks, cs...)
					}
				}
				return nil
			})
			passed := 0
			var bad []string
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					passed++
				case "FAILURE", "WARNING":
					bad = append(bad, fmt.Sprintf("%s %s: %s %s", c.Status, c.ID, c.Description, c.Details))
				}
			}
			if len(checks) == 0 || len(bad) > 0 || passed == 0 {
				t.Fatalf("%s: %d checks passed, %d did not:\n%s\n(suite: %v)\n%s\nthe client's log:\n%s", scenario, passed, len(bad),
					strings.Join(bad, "\n"), err, tail(string(suite), 4000), tail(string(clientLog), 6000))
			}
			t.Logf("%s: %d checks passed", scenario, passed)
		})
	}
}

type conformanceCheck struct {
	ID          string          `json:"id"`
	Status      string          `json:"status"`
	Description string          `json:"description"`
	Details     json.RawMessage `json:"details"`
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// conformanceTools is the tool each scenario's server offers to call.
var conformanceTools = map[string]string{
	"tools_call":                          `mcp__conf__add_numbers {"a":5,"b":3}`,
	"elicitation-sep1034-client-defaults": `mcp__conf__test_client_elicitation_defaults {}`,
	"sse-retry":                           `mcp__conf__test_reconnection {}`,
}

// loginHint is the command an error tells the user to run.
var loginHint = regexp.MustCompile(`run '(zeroclaw mcp login [^']*?)'`)

// conformanceClient is the test binary run by the suite as its client,
// with the scenario's server URL: zeroclaw used as a person uses it.
// What it did goes to $ZEROCLAW_CONFORMANCE_LOG; its exit code is 0 when
// the tool's call came back (the suite judges the rest).
func conformanceClient(url string) int {
	logf, _ := os.OpenFile(os.Getenv("ZEROCLAW_CONFORMANCE_LOG"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if logf == nil {
		logf = os.Stderr
	}
	say := func(format string, args ...any) { fmt.Fprintf(logf, format+"\n", args...) }
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var creds struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &creds)
	dir, err := os.MkdirTemp("", "zeroclaw-conformance-")
	if err != nil {
		say("%v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	conf := fmt.Sprintf("[mcp]\nturn_wait_ms = 30000\n\n[mcp.servers.conf]\nurl = %q\n", url)
	// The client ID metadata document the suite expects a client to be
	// configured with (it serves none: it only checks the id is used).
	conf += "oauth_client_metadata_url = \"https://conformance-test.local/client-metadata.json\"\n"
	if creds.ClientID != "" {
		conf += fmt.Sprintf("oauth_client_id = %q\noauth_client_secret = %q\n", creds.ClientID, creds.ClientSecret)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(conf), 0o600); err != nil {
		say("%v", err)
		return 1
	}
	say("scenario %s, server %s, config:\n%s", scenario, url, conf)
	var environ []string
	for _, kv := range hermetic(os.Environ()) {
		if !strings.HasPrefix(kv, "MCP_CONFORMANCE_") {
			environ = append(environ, kv)
		}
	}
	environ = append(environ, "ZEROCLAW_CONFIG_DIR="+dir, "ZEROCLAW_TEST_MAIN=1")
	getenv := func(k string) string {
		if k == "ZEROCLAW_CONFIG_DIR" {
			return dir
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	zeroclaw := func(stdin io.Reader, stdout io.Writer, args ...string) int {
		say("$ zeroclaw %s", strings.Join(args, " "))
		code := Main(ctx, args, console.Env{Stdin: stdin, Stdout: io.MultiWriter(stdout, logf), Stderr: logf, Getenv: getenv, Environ: environ})
		say("(exit %d)", code)
		return code
	}
	defer zeroclaw(strings.NewReader(""), io.Discard, "daemon", "stop")

	call := conformanceTools[scenario]
	if call == "" && strings.HasPrefix(scenario, "auth/") {
		call = `mcp__conf__test-tool {}`
	}
	prompt := "hello"
	if call != "" {
		prompt = "/tool " + call
	}
	for try := 0; try < 3; try++ {
		// Each field of a form takes its default (Enter).
		var out strings.Builder
		zeroclaw(strings.NewReader(strings.Repeat("\n", 16)), &out, "prompt", "--approve", "all", prompt)
		if call == "" || strings.Contains(out.String(), " returned: ") {
			return 0
		}
		// Not answered: what does the daemon say of the server? A login
		// to run is run, as its hint says, and the call made again.
		hint := conformanceHint(ctx, dir, getenv)
		say("the server: %s", hint)
		m := loginHint.FindStringSubmatch(hint)
		if m == nil {
			return 1
		}
		args, err := shellWords(strings.TrimPrefix(m[1], "zeroclaw "))
		if err != nil {
			say("the hint %q: %v", m[1], err)
			return 1
		}
		if zeroclawLogin(zeroclaw, append(args, "--no-browser"), say) != 0 {
			return 1 // the login failed: a person stops here too
		}
	}
	return 1
}

// conformanceHint is what status says of the server: its error.
func conformanceHint(ctx context.Context, dir string, getenv func(string) string) string {
	dirs, err := config.ResolveDirs(dir, getenv)
	if err != nil {
		return err.Error()
	}
	c, err := client.Dial(ctx, dirs.Endpoint, client.Options{})
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	var st protocol.StatusResult
	if err := c.Call(ctx, protocol.MethodStatus, struct{}{}, &st); err != nil {
		return err.Error()
	}
	for _, s := range st.MCPServers {
		if s.Name == "conf" {
			return s.State + ": " + s.Error
		}
	}
	return "no server conf in status"
}

// zeroclawLogin runs zeroclaw mcp login and plays the browser: the
// address it prints is opened (redirects followed, as a browser does, to
// the login's loopback port).
func zeroclawLogin(zeroclaw func(io.Reader, io.Writer, ...string) int, args []string, say func(string, ...any)) int {
	r, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := zeroclaw(strings.NewReader(""), w, args...)
		w.Close()
		done <- code
	}()
	var once sync.Once
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
			once.Do(func() {
				go func() {
					resp, err := http.Get(line)
					if err != nil {
						say("the browser: %v", err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					say("the browser: %s", resp.Status)
				}()
			})
		}
	}
	return <-done
}

// shellWords splits a command line as a shell would, for the quoting
// the hints use (words, and "double-quoted" ones).
func shellWords(s string) ([]string, error) {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			w, _ := strconv.Unquote(q)
			words, s = append(words, w), s[len(q):]
			continue
		}
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			end = len(s)
		}
		words, s = append(words, s[:end]), s[end:]
	}
	return words, nil
}
