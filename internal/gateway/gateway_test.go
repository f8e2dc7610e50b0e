package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/schema/schematest"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// gw is a daemon with its gateway, started in this process.
type gw struct {
	t    testing.TB
	url  string
	sock string
	done chan error
	stop context.CancelFunc
	http *http.Client
}

func start(t *testing.T, tune func(*config.Config, *daemon.Options)) *gw {
	t.Helper()
	dirs, err := config.ResolveDirs(filepath.Join(t.TempDir(), "cfg"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return startOn(t, dirs, tune)
}

// startOn starts a daemon on dirs (again, to restart one); its gateway
// listens on 127.0.0.1:0 unless tune says otherwise, or is off.
func startOn(t *testing.T, dirs config.Dirs, tune func(*config.Config, *daemon.Options)) *gw {
	t.Helper()
	cfg := config.Default(func(string) string { return "" })
	cfg.Gateway.Enabled, cfg.Gateway.Listen = true, "127.0.0.1:0"
	o := daemon.Options{Version: "test", Dirs: dirs, Config: cfg}
	if tune != nil {
		tune(cfg, &o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	o.Ready = func(string) { close(ready) }
	g := &gw{t: t, sock: dirs.Endpoint, done: make(chan error, 1), stop: cancel, http: &http.Client{Timeout: 30 * time.Second}}
	go func() { g.done <- daemon.Run(ctx, o) }()
	select {
	case <-ready:
	case err := <-g.done:
		cancel()
		t.Fatalf("daemon did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-g.done:
		case <-time.After(15 * time.Second):
			t.Error("daemon did not stop")
		}
		g.http.CloseIdleConnections()
	})
	if !cfg.Gateway.Enabled {
		return g
	}
	st := g.socketCall(protocol.MethodStatus, struct{}{})
	var s protocol.StatusResult
	json.Unmarshal(st, &s)
	if g.url = s.Gateway; g.url == "" {
		t.Fatal("status names no gateway")
	}
	return g
}

// halt stops the daemon and waits until it is gone.
func (g *gw) halt() {
	g.t.Helper()
	g.stop()
	select {
	case err := <-g.done:
		g.done <- err // for the cleanup
		if err != nil {
			g.t.Fatalf("the daemon stopped with %v", err)
		}
	case <-time.After(15 * time.Second):
		g.t.Fatal("the daemon did not stop")
	}
	g.http.CloseIdleConnections()
}

// socketCall calls a method as the daemon's own user, on its socket.
func (g *gw) socketCall(method string, params any) json.RawMessage {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, g.sock, client.Options{})
	if err != nil {
		g.t.Fatal(err)
	}
	defer c.Close()
	var res json.RawMessage
	if err := c.Call(ctx, method, params, &res); err != nil {
		g.t.Fatalf("%s: %v", method, err)
	}
	return res
}

func (g *gw) code() string {
	var r protocol.GatewayPairResult
	json.Unmarshal(g.socketCall(protocol.MethodGatewayPair, struct{}{}), &r)
	if len(strings.ReplaceAll(r.Code, "-", "")) < 8 || r.URL != g.url {
		g.t.Fatalf("pairing code %+v", r)
	}
	return r.Code
}

// pair pairs a new client and returns its token.
func (g *gw) pair(name string) (tok, id string) {
	g.t.Helper()
	resp, body := g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q,"name":%q}`, g.code(), name))
	var p protocol.PairResponse
	json.Unmarshal(body, &p)
	if resp.StatusCode != 200 || !strings.HasPrefix(p.Token, "zc_") || p.TokenID == "" {
		g.t.Fatalf("pair: %d %s", resp.StatusCode, body)
	}
	return p.Token, p.TokenID
}

func (g *gw) do(method, path string, hdr map[string]string, body string) (*http.Response, []byte) {
	g.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, g.url+path, rd)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// pairBrowser pairs as the dashboard does: a session whose cookie is
// set and whose page key is in the answer.
func (g *gw) pairBrowser(name string) (cookie, key, id string) {
	g.t.Helper()
	resp, body := g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q,"name":%q,"cookie":true}`, g.code(), name))
	var p protocol.PairResponse
	json.Unmarshal(body, &p)
	for _, c := range resp.Cookies() {
		if c.Name == "zc_session" {
			cookie = c.Value
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.MaxAge <= 0 || c.MaxAge > 31*24*3600 {
				g.t.Errorf("the session cookie: %+v", c)
			}
		}
	}
	if resp.StatusCode != 200 || p.Token != "" || !strings.HasPrefix(p.Key, "zk_") || cookie == "" || p.ExpiresAt == "" {
		g.t.Fatalf("pair a browser: %d %s (cookie %q)", resp.StatusCode, body, cookie)
	}
	return cookie, p.Key, p.TokenID
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func kind(body []byte) string {
	var e struct {
		Error struct{ Kind string } `json:"error"`
	}
	json.Unmarshal(body, &e)
	return e.Error.Kind
}

func TestAuthRules(t *testing.T) {
	g := start(t, func(c *config.Config, _ *daemon.Options) {
		c.Gateway.AllowedOrigins = []string{"https://app.example.com"}
	})
	tok, _ := g.pair("tests")
	cookie, key, _ := g.pairBrowser("browser")
	session := func(cookie, key string) map[string]string {
		return map[string]string{"Cookie": cookie, "X-Zeroclaw-Key": key}
	}
	cases := []struct {
		name, method, path string
		hdr                map[string]string
		status             int
		kind               string
	}{
		{"health needs no token", "GET", "/health", nil, 200, ""},
		{"dashboard page needs no token", "GET", "/", nil, 200, ""},
		{"no token", "GET", "/api/status", nil, 401, "unauthorized"},
		{"a bad token", "GET", "/api/status", bearer("zc_not-a-token"), 401, "unauthorized"},
		{"not bearer", "GET", "/api/status", map[string]string{"Authorization": "Basic " + tok}, 401, "unauthorized"},
		{"the token", "GET", "/api/status", bearer(tok), 200, ""},
		{"bearer in lower case", "GET", "/api/status", map[string]string{"Authorization": "bearer " + tok}, 200, ""},
		{"BEARER in upper case", "GET", "/api/status", map[string]string{"Authorization": "BEARER  " + tok}, 200, ""},
		{"a script's token as a cookie", "GET", "/api/sessions", map[string]string{"Cookie": "zc_session=" + tok}, 401, "unauthorized"},
		{"the session cookie alone (any local server sees it)", "GET", "/api/sessions", map[string]string{"Cookie": "zc_session=" + cookie}, 401, "unauthorized"},
		{"the session cookie alone, on a webhook", "POST", "/webhook?wait=true", map[string]string{"Cookie": "zc_session=" + cookie}, 401, "unauthorized"},
		{"the page key alone", "GET", "/api/sessions", map[string]string{"X-Zeroclaw-Key": key}, 401, "unauthorized"},
		{"the page key as a bearer token", "GET", "/api/sessions", bearer(key), 401, "unauthorized"},
		{"the cookie with another key", "GET", "/api/sessions", session("zc_session="+cookie, "zk_"+strings.Repeat("A", 43)), 401, "unauthorized"},
		{"the session: cookie and key", "GET", "/api/sessions", session("zc_session="+cookie, key), 200, ""},
		{"the session behind a cookie tossed by another port", "GET", "/api/sessions", session("zc_session=tossed; zc_session="+cookie, key), 200, ""},
		{"openapi needs the token", "GET", "/api/openapi.json", nil, 401, "unauthorized"},
		{"webhook needs the token", "POST", "/webhook", nil, 401, "unauthorized"},
		{"ws needs the token", "GET", "/ws", nil, 401, "unauthorized"},
		{"rebinding Host", "GET", "/api/status", map[string]string{"Authorization": "Bearer " + tok, "Host": "attacker.example:42617"}, 421, "misdirected_host"},
		{"rebinding Host, even for health", "GET", "/health", map[string]string{"Host": "attacker.example"}, 421, "misdirected_host"},
		{"localhost is this gateway", "GET", "/api/status", map[string]string{"Authorization": "Bearer " + tok, "Host": "localhost:1"}, 200, ""},
		{"a foreign Origin", "GET", "/api/status", map[string]string{"Authorization": "Bearer " + tok, "Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"a foreign Origin on pairing", "POST", "/pair", map[string]string{"Origin": "null"}, 403, "forbidden_origin"},
		{"an allowed Origin", "GET", "/api/status", map[string]string{"Authorization": "Bearer " + tok, "Origin": "https://app.example.com"}, 200, ""},
		{"its own Origin", "GET", "/api/status", map[string]string{"Authorization": "Bearer " + tok, "Origin": g.url}, 200, ""},
		{"unknown route", "GET", "/api/nothing", bearer(tok), 404, "not_found"},
		{"unknown session", "GET", "/api/sessions/nope", bearer(tok), 404, "session_not_found"},
	}
	for _, c := range cases {
		resp, body := g.do(c.method, c.path, c.hdr, "")
		if resp.StatusCode != c.status || kind(body) != c.kind {
			t.Errorf("%s: %d %s, want %d %q", c.name, resp.StatusCode, body, c.status, c.kind)
		}
		if strings.Contains(string(body), tok) {
			t.Errorf("%s: the answer shows the token", c.name)
		}
	}
	// The dashboard's page may not be framed, nor run other scripts.
	resp, _ := g.do("GET", "/", nil, "")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("dashboard CSP %q", csp)
	}
}

func TestPairingCodesAndTheirLimits(t *testing.T) {
	g := start(t, nil)
	code := g.code()
	// Any case, with or without the dash.
	resp, body := g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q}`, strings.ToLower(strings.ReplaceAll(code, "-", ""))))
	if resp.StatusCode != 200 {
		t.Fatalf("pair: %d %s", resp.StatusCode, body)
	}
	// A code works once.
	resp, body = g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q}`, code))
	if resp.StatusCode != 401 || kind(body) != "bad_code" {
		t.Fatalf("a used code: %d %s", resp.StatusCode, body)
	}
	// Another local user's wrong codes come from the loopback address
	// the owner shares: however many, the owner's fresh code pairs.
	for i := range 3 * pairing.FailBurst {
		if resp, body = g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":"WRONG-%05d"}`, i)); resp.StatusCode != 401 || kind(body) != "bad_code" {
			t.Fatalf("wrong code %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if resp, body = g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q}`, g.code())); resp.StatusCode != 200 {
		t.Fatalf("the owner's code after another user's guesses: %d %s", resp.StatusCode, body)
	}
	// Guessing is bounded per code: once CodeGuesses wrong codes were
	// tried while it was valid, the code is withdrawn and its right code
	// refused, saying why; a fresh one pairs.
	waiting := g.code()
	for i := range pairing.CodeGuesses {
		if resp, body = g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":"GUESS-%05d"}`, i)); resp.StatusCode != 401 || kind(body) != "bad_code" {
			t.Fatalf("guess %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body = g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q}`, waiting))
	if resp.StatusCode != 401 || kind(body) != "code_burned" || !strings.Contains(string(body), "wrong codes were tried while it was valid") || !strings.Contains(string(body), "zeroclaw gateway pair") {
		t.Fatalf("a code after %d wrong guesses: %d %s", pairing.CodeGuesses, resp.StatusCode, body)
	}
	if resp, body = g.do("POST", "/pair", nil, fmt.Sprintf(`{"code":%q}`, g.code())); resp.StatusCode != 200 {
		t.Fatalf("a fresh code after the withdrawal: %d %s", resp.StatusCode, body)
	}
	// Bad bodies are answered, not crashed on.
	for _, b := range []string{`{`, `[]`, `{"code":7}`, strings.Repeat("x", 10000)} {
		if resp, _ := g.do("POST", "/pair", nil, b); resp.StatusCode != 400 && resp.StatusCode != 413 {
			t.Errorf("body %.20q: %d", b, resp.StatusCode)
		}
	}
	// The tokens list names the paired one, never a token.
	raw := g.socketCall(protocol.MethodGatewayTokens, struct{}{})
	var tl protocol.GatewayTokensResult
	json.Unmarshal(raw, &tl)
	if len(tl.Tokens) != 3 || tl.Tokens[0].TokenID == "" || strings.Contains(string(raw), "zc_") {
		t.Fatalf("tokens: %s", raw)
	}
}

// wsDial opens /ws (or /acp) with the token in the header.
func wsDial(t *testing.T, g *gw, path, tok string, o *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	if o == nil {
		o = &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, strings.Replace(g.url, "http", "ws", 1)+path, o)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (%d)", path, err, status)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func wsCall(t *testing.T, c *websocket.Conn, frame string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reply to %s: %v", frame, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("a frame that is not JSON: %q", b)
		}
		if m["method"] == protocol.MethodSessionUpdate {
			var raw struct{ Params json.RawMessage }
			json.Unmarshal(b, &raw)
			schematest.Event(t, raw.Params) // over /ws as over the socket
		}
		if _, ok := m["method"]; !ok {
			return m
		}
	}
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// The socket's handshake and envelope rules hold over /ws, message for
// message.
func TestWSHandshakeAndEnvelope(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("ws")
	c := wsDial(t, g, "/ws", tok, nil)
	cases := []struct {
		frame string
		code  float64
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"status"}`, -32010},
		{`{not json`, -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":99}}`, -32011},
		{`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}`, 0},
		{`{"jsonrpc":"1.0","id":4,"method":"status"}`, -32600},
		{"{\"jsonrpc\":\"2.0\",\n\"id\":5,\n\"method\":\"status\"}", 0}, // JSON whitespace, newlines included
		{`{"jsonrpc":"2.0","id":6,"method":"nope"}`, -32601},
		{`{"jsonrpc":"2.0","id":7,"method":"gateway/pair"}`, -32003}, // only on the socket
		{`{"jsonrpc":"2.0","id":8,"method":"shutdown"}`, -32003},
		{`{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"sessionId":"x","prompt":"hi","attachments":[{"path":"/etc/passwd"}]}}`, -32602},
		{`{"jsonrpc":"2.0","id":10,"method":"file/attach","params":{"files":[{"path":"/etc/passwd"}]}}`, -32602},
		{`{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"mcpServers":[{"name":"x","command":"/bin/sh"}]}}`, -32602}, // would run on the daemon's machine
	}
	for _, cs := range cases {
		m := wsCall(t, c, cs.frame)
		if errCode(m) != cs.code {
			t.Errorf("%s: %v, want code %v", cs.frame, m, cs.code)
		}
	}
	// A binary message is not JSON-RPC: the connection closes with 1003.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Write(ctx, websocket.MessageBinary, []byte(`{}`))
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Fatalf("after a binary message: %v", err)
	}
}

// A token revoked on the socket closes the WebSockets it opened at once,
// and opens nothing after.
func TestRevokedTokenClosesOpenWebSocket(t *testing.T) {
	g := start(t, nil)
	tok, id := g.pair("to revoke")
	other, _ := g.pair("to keep")
	c := wsDial(t, g, "/ws", tok, nil)
	keep := wsDial(t, g, "/ws", "", &websocket.DialOptions{Subprotocols: []string{"zeroclaw.v1", "bearer." + other}})
	if keep.Subprotocol() != "zeroclaw.v1" {
		t.Errorf("subprotocol %q", keep.Subprotocol())
	}
	wsCall(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	wsCall(t, keep, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	var r protocol.GatewayRevokeResult
	json.Unmarshal(g.socketCall(protocol.MethodGatewayRevoke, protocol.GatewayRevokeParams{TokenID: id}), &r)
	if !r.Revoked {
		t.Fatal("not revoked")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("the revoked token's WebSocket: %v", err)
	}
	if resp, body := g.do("GET", "/api/status", bearer(tok), ""); resp.StatusCode != 401 {
		t.Fatalf("revoked token: %d %s", resp.StatusCode, body)
	}
	if m := wsCall(t, keep, `{"jsonrpc":"2.0","id":2,"method":"status"}`); errCode(m) != 0 {
		t.Fatalf("the other token's WebSocket: %v", m)
	}
}

// GET /api/sessions/{id}/export downloads the session as a document that
// can load and run nothing.
func TestExportRoute(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("a script")
	resp, body := g.do("POST", "/webhook?wait=true", bearer(tok), `{"prompt":"<b>hello</b>","sessionId":"exported","cwd":`+strconv.Quote(t.TempDir())+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("webhook: %d %s", resp.StatusCode, body)
	}
	resp, body = g.do("GET", "/api/sessions/exported/export?format=html", bearer(tok), "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="exported.html"` || !strings.Contains(string(body), "echo: &lt;b&gt;hello&lt;/b&gt;") {
		t.Errorf("html export: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if resp, body = g.do("GET", "/api/sessions/exported/export", bearer(tok), ""); resp.StatusCode != 200 || !strings.Contains(string(body), "## Turn 1") {
		t.Errorf("markdown export: %d %s", resp.StatusCode, body)
	}
	if resp, _ = g.do("GET", "/api/sessions/exported/export?format=pdf", bearer(tok), ""); resp.StatusCode != 400 {
		t.Errorf("a bad format: %d", resp.StatusCode)
	}
	if resp, _ = g.do("GET", "/api/sessions/exported/export", nil, ""); resp.StatusCode != 401 {
		t.Errorf("without a token: %d", resp.StatusCode)
	}
}
