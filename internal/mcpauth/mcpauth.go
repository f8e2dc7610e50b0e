// Package mcpauth keeps the OAuth logins of remote MCP servers: Login
// runs the authorization-code flow with PKCE against the server's
// advertised authorization server (the Go SDK's auth support: protected
// resource metadata, authorization server metadata, dynamic client
// registration), Store keeps what it got (0600, one file a server, in
// the data dir), and Store.Handler gives a server's connection its token,
// renewing it with the refresh token and keeping the renewed one, or
// says that the server needs a login.
package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zeroclaw/zeroclaw/internal/atomicfile"
	"golang.org/x/oauth2"
)

// RenewTimeout bounds a token's renewal.
var RenewTimeout = 30 * time.Second

// Login is what a login to a server leaves: the client it registered as,
// the authorization server's token endpoint and the tokens.
type Login struct {
	Server       string        `json:"server"`
	URL          string        `json:"url"` // the server's; a login holds for it only
	ClientID     string        `json:"clientId"`
	ClientSecret string        `json:"clientSecret,omitempty"`
	AuthURL      string        `json:"authUrl"`
	TokenURL     string        `json:"tokenUrl"`
	AuthStyle    int           `json:"authStyle"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token"`
	At           time.Time     `json:"at"` // when the user logged in
}

func (l *Login) config() *oauth2.Config {
	return &oauth2.Config{ClientID: l.ClientID, ClientSecret: l.ClientSecret, Scopes: l.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: l.AuthURL, TokenURL: l.TokenURL, AuthStyle: oauth2.AuthStyle(l.AuthStyle)}}
}

// Store keeps logins in a directory, a file a server.
type Store struct {
	dir string
	mu  sync.Mutex // one write at a time from this process
}

// Open returns the store in dir (made when a login is saved).
func Open(dir string) *Store { return &Store{dir: dir} }

// In returns the store of a data dir: its mcp-logins directory.
func In(dataDir string) *Store { return Open(filepath.Join(dataDir, "mcp-logins")) }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func (s *Store) path(server string) string {
	return filepath.Join(s.dir, unsafeName.ReplaceAllString(server, "_")+".json")
}

// Load returns the server's login, nil when there is none.
func (s *Store) Load(server string) (*Login, error) {
	b, err := os.ReadFile(s.path(server))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l Login
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("the stored login of %s (%s): %w", server, s.path(server), err)
	}
	return &l, nil
}

// Save keeps l, readable by the user only, replacing the file whole (a
// reader never sees half of it).
func (s *Store) Save(l *Login) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.path(l.Server), b, 0o600)
}

// Remove forgets the server's login; false when there was none.
func (s *Store) Remove(server string) (bool, error) {
	err := os.Remove(s.path(server))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Stamp changes when the server's login file does (a new login): "" when
// there is none.
func (s *Store) Stamp(server string) string {
	if s == nil {
		return ""
	}
	fi, err := os.Stat(s.path(server))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
}

// Handler is what a server's HTTP transport asks for its token. It never
// starts a login itself (a daemon has no browser): a server that wants
// one makes the connection fail, and NeedsLogin says so.
func (s *Store) Handler(server, url string) *Handler {
	return &Handler{s: s, server: server, url: url}
}

// Handler gives one server's connection its stored token.
type Handler struct {
	s           *Store
	server, url string

	mu     sync.Mutex
	stamp  string // of the login src was made from
	src    oauth2.TokenSource
	scopes []string // the login's
	needed error    // why a login is needed, once the server said so
}

var _ auth.OAuthHandler = (*Handler)(nil)

// TokenSource is the stored login's tokens (renewed as they expire), nil
// when there is none for the server's URL.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	stamp := h.s.Stamp(h.server)
	if stamp == h.stamp && h.src != nil {
		return h.src, nil
	}
	l, err := h.s.Load(h.server)
	if err != nil {
		return nil, err
	}
	h.stamp, h.src, h.scopes = stamp, nil, nil
	if l == nil || l.URL != h.url || l.Token == nil {
		return nil, nil
	}
	h.scopes = l.Scopes
	// The renewals outlive the request that first needed them, each
	// bounded: a token endpoint that never answers fails the request.
	rctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, &http.Client{Timeout: RenewTimeout})
	h.src = &keeping{h: h, login: l, src: l.config().TokenSource(rctx, l.Token), last: l.Token.AccessToken}
	return h.src, nil
}

// Authorize is called when the server refused the request (401, 403): the
// user must log in again. A 403 for want of scopes (error
// "insufficient_scope", RFC 6750) names the scopes the call needs: the
// hint asks for them with those the login has (the server's step-up).
func (h *Handler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	why := fmt.Errorf("MCP server %s needs a login (it answered %s): run 'zeroclaw mcp login %s'", h.server, resp.Status, h.server)
	if resp.StatusCode == http.StatusForbidden {
		want, insufficient := stepUp(resp.Header.Values("WWW-Authenticate"))
		h.mu.Lock()
		have := h.scopes
		h.mu.Unlock()
		switch all := Union(have, want); {
		case insufficient && len(want) > 0:
			why = fmt.Errorf("MCP server %s needs more access than its login gives (%s): run 'zeroclaw mcp login %s --scope %q'",
				h.server, strings.Join(all, " "), h.server, strings.Join(all, " "))
		default:
			why = fmt.Errorf("MCP server %s refused the login's scopes (%s): run 'zeroclaw mcp login %s'", h.server, resp.Status, h.server)
		}
	}
	h.mu.Lock()
	h.needed = why
	h.mu.Unlock()
	return why
}

// stepUp reads a 403's challenges: the scopes they ask for, and whether
// the refusal is for want of scopes.
func stepUp(headers []string) (scopes []string, insufficient bool) {
	cs, err := oauthex.ParseWWWAuthenticate(headers)
	if err != nil {
		return nil, false
	}
	for _, c := range cs {
		if c.Scheme != "bearer" {
			continue
		}
		if c.Params["error"] == "insufficient_scope" {
			insufficient = true
		}
		scopes = Union(scopes, strings.Fields(c.Params["scope"]))
	}
	return scopes, insufficient
}

// Union is the scopes of a and b, each once, in the order first seen.
func Union(a, b []string) []string {
	var out []string
	for _, s := range append(slices.Clone(a), b...) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// NeedsLogin is why the server needs a login, nil when it has not said so
// (or the login was renewed since).
func (h *Handler) NeedsLogin() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.needed
}

// keeping renews the token and keeps each renewed one in the store.
type keeping struct {
	h     *Handler
	login *Login
	src   oauth2.TokenSource
	mu    sync.Mutex
	last  string
}

func (k *keeping) Token() (*oauth2.Token, error) {
	t, err := k.src.Token()
	var refused *oauth2.RetrieveError
	switch {
	case errors.As(err, &refused):
		// The authorization server said no (the refresh token expired
		// or was revoked): only a new login helps.
		why := fmt.Errorf("MCP server %s: its login could not be renewed (%v): run 'zeroclaw mcp login %s'", k.h.server, err, k.h.server)
		k.h.mu.Lock()
		k.h.needed = why
		k.h.mu.Unlock()
		return nil, why
	case err != nil:
		// Not an answer (unreachable, too slow): the start fails and is
		// tried again, the login kept.
		return nil, fmt.Errorf("MCP server %s: renewing its login: %w", k.h.server, err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if t.AccessToken != k.last {
		k.last = t.AccessToken
		l := *k.login
		l.Token = t
		if err := k.h.s.Save(&l); err == nil {
			k.h.mu.Lock()
			k.h.stamp = k.h.s.Stamp(k.h.server) // ours: not a new login
			k.h.mu.Unlock()
		}
	}
	k.h.mu.Lock()
	k.h.needed = nil
	k.h.mu.Unlock()
	return t, nil
}
