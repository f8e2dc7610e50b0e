package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// mcpServer is the MCP test server (internal/mcptools/testdata/server).
func mcpServer(t *testing.T) string { return mcptest.Server(t) }

// oauthServer runs the MCP test server over HTTP behind its own OAuth
// authorization server; it returns the server's URL. Its tokens last 5 s:
// the daemon renews one at each request.
func oauthServer(t *testing.T) string { return mcptest.HTTP(t, "-oauth", "-expires-in", "5s") }

// A remote server that wants OAuth, from the user's side: the daemon
// says it needs a login (status, and the tool's answer), zeroclaw mcp
// login runs the flow through the "browser" and keeps the tokens 0600,
// the daemon's next turn uses the server at once, renewing the token and
// keeping the renewal; logout forgets it.
func TestMCPLoginEndToEnd(t *testing.T) {
	srvURL := oauthServer(t)
	env, _, _, dir := testEnv(t, "")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "[mcp]\nturn_wait_ms = 30000\n[mcp.servers.web]\nurl = \"" + srvURL + "\"\ntrust = true\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, env)
	cwd := testdir.New(t)

	// The first turn waits out the server's first start: refused, for
	// want of a login.
	code, out, errs := runCLI(t, env, "", "prompt", "--cwd", cwd, `/tool mcp__web__add {"a":1,"b":2}`)
	if code != 0 {
		t.Fatalf("prompt: exit %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "", "status", "--output-format", "json")
	var st struct {
		MCPServers []struct{ Name, State, Auth, Error string }
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || len(st.MCPServers) != 1 {
		t.Fatalf("status: %d %v %s", code, err, out)
	}
	if s := st.MCPServers[0]; s.State != "failed" || s.Auth != "login_required" || !strings.Contains(s.Error, "zeroclaw mcp login web") {
		t.Fatalf("before the login: %+v", s)
	}
	if _, out, _ = runCLI(t, env, "", "status"); !strings.Contains(out, "mcp:        web failed, 0 tools: MCP server web needs a login") {
		t.Fatalf("status text:\n%s", out)
	}

	// The login: the address printed, the browser sent there.
	pr, pw := io.Pipe()
	env2, _, errb, _ := testEnv(t, "")
	env2.Getenv, env2.Environ, env2.Stdout = env.Getenv, env.Environ, pw
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"mcp", "login", "web", "--no-browser"}, env2)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var printed []string
	for lines.Scan() {
		l := lines.Text()
		printed = append(printed, l)
		if strings.HasPrefix(l, "http://") {
			resp, err := http.Get(l)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(page), "You are logged in") {
				t.Fatalf("the browser's page: %s", page)
			}
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("mcp login: exit %d\n%s\n%s", code, strings.Join(printed, "\n"), errb)
	}
	if last := printed[len(printed)-1]; last != "Logged in to web (13 tools); the daemon uses the login from now on." {
		t.Fatalf("mcp login printed:\n%s", strings.Join(printed, "\n"))
	}
	file := filepath.Join(dir, "data", "mcp-logins", "web.json")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kept login: %v %v", fi, err)
	}
	saved, _ := os.ReadFile(file)

	// The daemon takes the login at once, with no turn to prompt it:
	// status says ready (each status is a round trip; no sleep).
	loggedIn := time.Now()
	for {
		_, out, _ = runCLI(t, env, "", "status", "--output-format", "json")
		st.MCPServers = nil
		if json.Unmarshal([]byte(out), &st); len(st.MCPServers) == 1 && st.MCPServers[0].State == "ready" {
			break
		}
		if time.Since(loggedIn) > 30*time.Second {
			t.Fatalf("the server is not ready after the login, with no turn: %+v", st.MCPServers)
		}
	}
	t.Logf("ready %v after the login returned", time.Since(loggedIn).Round(time.Millisecond))
	if _, out, _ = runCLI(t, env, "", "status"); !strings.Contains(out, "mcp:        web ready, 12 tools, MCP 2025-11-25") {
		t.Errorf("status after the login:\n%s", out)
	}

	// The next turn finds the server started again with the login.
	code, out, errs = runCLI(t, env, "", "prompt", "--cwd", cwd, `/tool mcp__web__add {"a":40,"b":2}`)
	if code != 0 || !strings.Contains(out, "tool mcp__web__add returned: 42") {
		t.Fatalf("after the login: exit %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "", "status", "--output-format", "json")
	st.MCPServers = nil
	if json.Unmarshal([]byte(out), &st); st.MCPServers[0].State != "ready" || st.MCPServers[0].Auth != "" {
		t.Fatalf("after the login: %+v", st.MCPServers[0])
	}
	if now, _ := os.ReadFile(file); string(now) == string(saved) {
		t.Fatal("the daemon's renewed token was not kept")
	}

	// The server revokes every token: the next call is refused, says
	// what to run, and the server wants a login again.
	if _, err := http.Post(strings.TrimSuffix(srvURL, "/mcp")+"/revoke-all", "text/plain", nil); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, env, "", "prompt", "--cwd", cwd, `/tool mcp__web__add {"a":1,"b":1}`)
	if code != 0 || !strings.Contains(out, "its login could not be renewed") || !strings.Contains(out, "zeroclaw mcp login web") {
		t.Fatalf("after the revocation: exit %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, env, "", "status", "--output-format", "json")
	st.MCPServers = nil
	if json.Unmarshal([]byte(out), &st); st.MCPServers[0].State != "failed" || st.MCPServers[0].Auth != "login_required" {
		t.Fatalf("after the revocation: %+v", st.MCPServers[0])
	}

	if code, out, _ := runCLI(t, env, "", "mcp", "logout", "web"); code != 0 || out != "Logged out of web.\n" {
		t.Fatalf("logout: %d %q", code, out)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the login is still kept: %v", err)
	}
	if code, _, errs := runCLI(t, env, "", "mcp", "login", "nosuch"); code != 1 || !strings.Contains(errs, `no MCP server "nosuch"`) {
		t.Fatalf("an unknown server: %d %q", code, errs)
	}
}

// A server's configured headers (which may hold a key) go with the
// login's requests to the server's own host only, never to another one
// (its authorization server elsewhere).
func TestLoginHeadersStayWithTheServer(t *testing.T) {
	seen := make(chan string, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen <- r.Header.Get("X-Key") })
	server, other := httptest.NewServer(h), httptest.NewServer(h)
	defer server.Close()
	defer other.Close()
	c := &http.Client{Transport: withHeaders(server.URL+"/mcp", map[string]string{"X-Key": "secret"})}
	for _, u := range []string{server.URL + "/mcp", other.URL + "/token"} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if a, b := <-seen, <-seen; a != "secret" || b != "" {
		t.Fatalf("the server got %q, another host %q", a, b)
	}
}
