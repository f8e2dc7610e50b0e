package mcpauth

import (
	"context"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server runs the MCP test server over HTTP with args; it returns its URL.
func server(t *testing.T, args ...string) string { return mcptest.HTTP(t, args...) }

// browse is the user in the browser: it follows the address to the
// authorization server, which consents and sends it back to zeroclaw.
func browse(t *testing.T) func(string) error {
	return func(u string) error {
		resp, err := http.Get(u)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Host == "" {
			return fmt.Errorf("the browser ended at %s: %s", resp.Request.URL, resp.Status)
		}
		return nil
	}
}

// tools lists the server's tools through h, as the daemon connects.
func tools(ctx context.Context, srvURL string, h *Handler) (int, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srvURL, OAuthHandler: h, MaxRetries: 1}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// The whole life of a login: the flow (discovery, registration, the
// browser, the code exchanged with PKCE), the tokens kept 0600, a
// connection that renews the short-lived token and keeps the renewal
// (refresh tokens rotate: the old one no longer works), and, once the
// server revokes everything, a connection that says a login is needed.
func TestLoginKeepRenewAndLose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Tokens last 5 s, under the 10 s a client renews them ahead of
	// their expiry: every request renews one.
	srvURL := server(t, "-oauth", "-expires-in", "5s")
	res, err := Flow{Server: "web", URL: srvURL, Open: browse(t)}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := res.Login
	if res.Tools != 13 || l.ClientID == "" || l.Token.RefreshToken == "" || l.URL != srvURL || !strings.HasSuffix(l.TokenURL, "/token") {
		t.Fatalf("login %+v, %d tools", l, res.Tools)
	}
	store := Open(filepath.Join(t.TempDir(), "logins"))
	if err := store.Save(l); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(store.path("web"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the kept login: %v %v", fi.Mode(), err)
	}
	before := store.Stamp("web")

	h := store.Handler("web", srvURL)
	if n, err := tools(ctx, srvURL, h); err != nil || n != 13 {
		t.Fatalf("with the kept login: %d tools, %v", n, err)
	}
	kept, err := store.Load("web")
	if err != nil || kept.Token.RefreshToken == l.Token.RefreshToken || kept.Token.AccessToken == l.Token.AccessToken {
		t.Fatalf("the renewed token was not kept: %+v %v", kept.Token, err)
	}
	if store.Stamp("web") == before || h.NeedsLogin() != nil {
		t.Fatalf("stamp %q, needs login %v", store.Stamp("web"), h.NeedsLogin())
	}
	// A second connection (a later daemon) starts from the kept one.
	if n, err := tools(ctx, srvURL, store.Handler("web", srvURL)); err != nil || n != 13 {
		t.Fatalf("from the kept renewal: %d tools, %v", n, err)
	}

	// The login was for this URL: another server's gets no token.
	if ts, err := store.Handler("web", srvURL+"/other").TokenSource(ctx); ts != nil || err != nil {
		t.Fatalf("a login for another url was used: %v %v", ts, err)
	}

	// Revoked at the server: the renewal is refused, and the handler
	// says a login is needed, naming the command.
	if _, err := http.Post(strings.TrimSuffix(srvURL, "/mcp")+"/revoke-all", "text/plain", nil); err != nil {
		t.Fatal(err)
	}
	h = store.Handler("web", srvURL)
	if _, err := tools(ctx, srvURL, h); err == nil {
		t.Fatal("connected with revoked tokens")
	}
	if why := h.NeedsLogin(); why == nil || !strings.Contains(why.Error(), "zeroclaw mcp login web") {
		t.Fatalf("needs login: %v", why)
	}

	if gone, err := store.Remove("web"); !gone || err != nil {
		t.Fatalf("remove: %v %v", gone, err)
	}
	if l, err := store.Load("web"); l != nil || err != nil {
		t.Fatalf("after remove: %+v %v", l, err)
	}
}

// Without a login at all, the server's refusal is a login needed, not a
// start's error.
func TestNoLoginNeedsOne(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srvURL := server(t, "-oauth")
	h := Open(t.TempDir()).Handler("web", srvURL)
	if _, err := tools(ctx, srvURL, h); err == nil {
		t.Fatal("connected without a login")
	}
	if why := h.NeedsLogin(); why == nil || !strings.Contains(why.Error(), "401") {
		t.Fatalf("needs login: %v", why)
	}
}

// The user declines in the browser: the login fails saying so; a
// server that wants no login is told apart.
func TestLoginRefusedOrNotNeeded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srvURL := server(t, "-oauth")
	decline := func(u string) error {
		au, err := url.Parse(u)
		if err != nil {
			return err
		}
		q := au.Query()
		back := q.Get("redirect_uri") + "?error=access_denied&state=" + url.QueryEscape(q.Get("state"))
		resp, err := http.Get(back)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if _, err := (Flow{Server: "web", URL: srvURL, Open: decline}).Run(ctx); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("declined: %v", err)
	}
	open := server(t)
	if _, err := (Flow{Server: "open", URL: open, Open: browse(t)}).Run(ctx); err == nil || !strings.Contains(err.Error(), "needs none") {
		t.Fatalf("no login needed: %v", err)
	}
}

// A client registered beforehand (oauth_client_id) logs in as itself,
// registering nothing.
func TestLoginAsARegisteredClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srvURL := server(t, "-oauth", "-client-id", "zeroclaw-desktop")
	res, err := Flow{Server: "web", URL: srvURL, ClientID: "zeroclaw-desktop", Open: browse(t)}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Login.ClientID != "zeroclaw-desktop" || res.Tools != 13 {
		t.Fatalf("login %+v", res.Login)
	}
	if _, err := (Flow{Server: "web", URL: srvURL, ClientID: "someone-else", Open: browse(t)}).Run(ctx); err == nil {
		t.Fatal("an unknown client logged in")
	}
}

// A token endpoint that does not answer is not a login lost: the
// connection fails once the renewal's bound has passed, and the login is
// kept, to be tried again.
func TestRenewalThatHangsIsNotALoginLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srvURL := server(t, "-oauth", "-expires-in", "5s")
	res, err := Flow{Server: "web", URL: srvURL, Open: browse(t)}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	store := Open(t.TempDir())
	if err := store.Save(res.Login); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Post(strings.TrimSuffix(srvURL, "/mcp")+"/hang-token", "text/plain", nil); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { RenewTimeout = d }(RenewTimeout)
	RenewTimeout = 100 * time.Millisecond
	h := store.Handler("web", srvURL)
	if _, err := tools(ctx, srvURL, h); err == nil || !strings.Contains(err.Error(), "renewing its login") {
		t.Fatalf("connected, or not saying why: %v", err)
	}
	if h.NeedsLogin() != nil {
		t.Fatalf("a hung renewal marked the login lost: %v", h.NeedsLogin())
	}
	if l, _ := store.Load("web"); l == nil || l.Token.RefreshToken != res.Login.Token.RefreshToken {
		t.Fatal("the login was not kept")
	}
}

// Another local process that finds the login's port cannot end the login
// with a code of its own: a return without the login's state is refused
// and the real one still counts.
func TestCallbackWithoutTheStateIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srvURL := server(t, "-oauth")
	open := func(u string) error {
		au, err := url.Parse(u)
		if err != nil {
			return err
		}
		forged := au.Query().Get("redirect_uri") + "?code=forged&state=guess"
		resp, err := http.Get(forged)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			return fmt.Errorf("a forged return was taken: %s", resp.Status)
		}
		return browse(t)(u)
	}
	if _, err := (Flow{Server: "web", URL: srvURL, Open: open}).Run(ctx); err != nil {
		t.Fatal(err)
	}
}
