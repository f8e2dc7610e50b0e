package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// zeroclaw gateway pair, tokens and revoke against a daemon process
// with its gateway: a script's token and a browser's session are listed
// with their kind and when they lapse (a session: unless used), never
// their secrets; a revoked one is gone.
func TestGatewayPairTokensRevoke(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env, out, errb, _ := testEnv(t, "")
	startDaemon(t, env, "--gateway", addr)
	code := func() string {
		t.Helper()
		out.Reset()
		if c := Main(context.Background(), []string{"gateway", "pair", "--output-format", "json"}, env); c != 0 {
			t.Fatalf("gateway pair: %d %s", c, errb.String())
		}
		var r protocol.GatewayPairResult
		json.Unmarshal(out.Bytes(), &r)
		return r.Code
	}
	pair := func(body string) protocol.PairResponse {
		t.Helper()
		resp, err := http.Post("http://"+addr+"/pair", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p protocol.PairResponse
		json.NewDecoder(resp.Body).Decode(&p)
		if resp.StatusCode != 200 {
			t.Fatalf("pair %s: %d", body, resp.StatusCode)
		}
		return p
	}
	script := pair(fmt.Sprintf(`{"code":%q,"name":"ci job"}`, code()))
	browser := pair(fmt.Sprintf(`{"code":%q,"name":"laptop","cookie":true}`, code()))
	out.Reset()
	if c := Main(context.Background(), []string{"gateway", "tokens"}, env); c != 0 {
		t.Fatalf("gateway tokens: %d %s", c, errb.String())
	}
	text := out.String()
	rows := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		rows[strings.Fields(l)[0]] = strings.Join(strings.Fields(l), " ")
	}
	if !strings.HasPrefix(rows["ID"], "ID KIND NAME CREATED LAST USED EXPIRES") ||
		!strings.HasPrefix(rows[script.TokenID], script.TokenID+" token ci job ") || strings.Contains(rows[script.TokenID], "unless") ||
		!strings.HasPrefix(rows[browser.TokenID], browser.TokenID+" browser laptop ") || !strings.HasSuffix(rows[browser.TokenID], " unless used") {
		t.Errorf("gateway tokens:\n%s", text)
	}
	if strings.Contains(text, script.Token) || strings.Contains(text, browser.Key) {
		t.Errorf("gateway tokens shows a secret:\n%s", text)
	}
	out.Reset()
	Main(context.Background(), []string{"gateway", "tokens", "--output-format", "json"}, env)
	var list protocol.GatewayTokensResult
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Tokens) != 2 {
		t.Fatalf("gateway tokens json: %v %s", err, out.String())
	}
	for _, tk := range list.Tokens {
		exp, err := time.Parse(time.RFC3339, tk.ExpiresAt)
		days := time.Until(exp).Hours() / 24
		if err != nil || (tk.Kind == "token" && (days < 29 || days > 30)) || (tk.Kind == "browser" && (days < 6 || days > 7)) {
			t.Errorf("%s (%s) expires %q: %.1f days away", tk.TokenID, tk.Kind, tk.ExpiresAt, days)
		}
	}
	out.Reset()
	if c := Main(context.Background(), []string{"gateway", "revoke", browser.TokenID}, env); c != 0 || !strings.Contains(out.String(), "revoked") {
		t.Fatalf("revoke: %d %q %q", c, out.String(), errb.String())
	}
	out.Reset()
	Main(context.Background(), []string{"gateway", "tokens"}, env)
	if strings.Contains(out.String(), browser.TokenID) || !strings.Contains(out.String(), script.TokenID) {
		t.Errorf("after revoking the session:\n%s", out.String())
	}
}
