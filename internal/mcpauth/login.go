package mcpauth

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Flow is how a login meets its user and its server.
type Flow struct {
	Server string // its name in the config
	URL    string
	// Client makes the login's requests (nil: http.DefaultClient); the
	// server's configured headers go in its transport.
	Client *http.Client
	// ClientID (and ClientSecret) is a client registered beforehand with
	// the authorization server; empty: register one (dynamic client
	// registration).
	ClientID, ClientSecret string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// that describes zeroclaw: used as the client id with an authorization
	// server that says it takes one (client_id_metadata_document_supported),
	// in place of registering.
	ClientMetadataURL string
	// Scopes are asked for besides those the server names (a step-up: the
	// scopes a call was refused for, with those of the login before).
	Scopes []string
	// Open shows the user the address to log in at (and may open a
	// browser); the login waits for the browser's return.
	Open func(authURL string) error
}

// Result is what a login did.
type Result struct {
	Login *Login
	Tools int // the server's tools, listed with the new token
}

// Run logs in to the server: it connects without a token; the server's
// refusal names its authorization server, which the SDK discovers,
// registers a client with (unless one is given) and sends the user to;
// the browser comes back to a listener on a loopback port, the code is
// exchanged (PKCE) and the connection made again with the token, which
// proves it. The caller keeps the login (Store.Save).
func (f Flow) Run(ctx context.Context) (*Result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("a port for the browser to come back to: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s/callback", ln.Addr())
	back := make(chan callback, 1)
	var state atomic.Pointer[string] // of the login under way
	srv := &http.Server{Handler: callbackHandler(back, &state), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	var got *Login
	var tap *latest
	hc := f.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	hc = &http.Client{Transport: &legacyIssuer{next: cmp.Or(hc.Transport, http.DefaultTransport), server: f.URL}, Timeout: hc.Timeout}
	asked := false
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         redirect,
		RequestRefreshToken: true,
		Client:              hc,
		ScopeFilter:         func(named []string) []string { return Union(named, f.Scopes) },
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := url.Parse(args.URL)
			if err != nil {
				return nil, err
			}
			if asked {
				// The server refused the new login too and asks for more
				// (a step-up): one login sends the user once, never in a
				// loop.
				return nil, fmt.Errorf("the server refused the new login as well and asks for more access (scopes %q): run 'zeroclaw mcp login %s --scope %q' if you mean to give it",
					u.Query().Get("scope"), f.Server, u.Query().Get("scope"))
			}
			st := u.Query().Get("state")
			state.Store(&st)
			if err := f.Open(args.URL); err != nil {
				return nil, err
			}
			select {
			case cb := <-back:
				if cb.err != "" {
					return nil, fmt.Errorf("the authorization server refused: %s", cb.err)
				}
				asked = true // a code: the user went through once
				return &auth.AuthorizationResult{Code: cb.code, State: cb.state, Iss: cb.iss}, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("no login came back: %w", ctx.Err())
			}
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got = &Login{Server: f.Server, URL: f.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle),
				Scopes: c.Scopes, Token: t, At: time.Now().UTC()}
			// Checking the login renews the token where it is short-lived,
			// and a renewal may replace the refresh token: the login
			// keeps the latest.
			tap = &latest{src: c.TokenSource(ctx, t), tok: t}
			return tap, nil
		},
	}
	if f.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: f.ClientMetadataURL}
	}
	if f.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: f.ClientID}
		if f.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: f.ClientSecret}
		}
		cfg.PreregisteredClient = pre
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "zeroclaw", TokenEndpointAuthMethod: "none", ApplicationType: "native",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "zeroclaw", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.URL, HTTPClient: hc, OAuthHandler: h, MaxRetries: 1}, nil)
	if err != nil {
		return nil, fmt.Errorf("logging in to %s: %w", f.URL, err)
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing its tools with the new login: %w", err)
		}
		n++
	}
	if got == nil {
		return nil, errors.New("the server answered without a login: it needs none")
	}
	cs.Close() // no request renews the token after this
	l := *got
	l.Token = tap.last()
	return &Result{Login: &l, Tools: n}, nil
}

// legacyIssuer lets a server of MCP's 2025-03-26 revision be logged in
// to. That revision has no protected resource metadata: the
// authorization server is the MCP server's origin, and its metadata
// (origin/.well-known/oauth-authorization-server) may name an issuer
// other than the origin (the conformance suite's names origin/oauth);
// the revision never asked a client to compare the two, while the SDK
// checks RFC 8414's rule everywhere. So, once the server was seen to
// have no resource metadata, that one document's issuer is read as the
// origin the SDK expects. Nothing else is changed, and a server with
// resource metadata is checked in full.
type legacyIssuer struct {
	next   http.RoundTripper
	server string
	noPRM  atomic.Bool
}

func (t *legacyIssuer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet {
		return resp, err
	}
	su, perr := url.Parse(t.server)
	if perr != nil || r.URL.Scheme != su.Scheme || r.URL.Host != su.Host {
		return resp, err
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource"):
		if resp.StatusCode == http.StatusNotFound {
			t.noPRM.Store(true)
		}
	case r.URL.Path == "/.well-known/oauth-authorization-server" && t.noPRM.Load() && resp.StatusCode == http.StatusOK:
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		var meta map[string]any
		if rerr == nil && json.Unmarshal(body, &meta) == nil {
			meta["issuer"] = su.Scheme + "://" + su.Host
			body, _ = json.Marshal(meta)
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		resp.Header.Del("Content-Length")
	}
	return resp, err
}

// latest is a token source that remembers the last token it gave.
type latest struct {
	src oauth2.TokenSource
	mu  sync.Mutex
	tok *oauth2.Token
}

func (l *latest) Token() (*oauth2.Token, error) {
	t, err := l.src.Token()
	if err == nil {
		l.mu.Lock()
		l.tok = t
		l.mu.Unlock()
	}
	return t, err
}

func (l *latest) last() *oauth2.Token {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tok
}

type callback struct{ code, state, iss, err string }

// callbackHandler takes the browser's return: the code, or the error.
// Only a return with the login's state counts: another local process
// that finds the port cannot end the login with a code of its own.
func callbackHandler(back chan<- callback, state *atomic.Pointer[string]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if want := state.Load(); want == nil || *want == "" || q.Get("state") != *want {
			http.Error(w, "not the login under way", http.StatusBadRequest)
			return
		}
		cb := callback{code: q.Get("code"), state: q.Get("state"), iss: q.Get("iss")}
		msg := "You are logged in: you can close this tab and go back to zeroclaw."
		if e := q.Get("error"); e != "" || cb.code == "" {
			cb.err = e + " " + q.Get("error_description")
			if e == "" {
				cb.err = "no code in the answer"
			}
			msg = "The login failed: " + cb.err
		}
		select {
		case back <- cb:
		default:
			msg = "This login was already answered."
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>zeroclaw</title><p>%s</p>\n", html.EscapeString(msg))
	})
}
