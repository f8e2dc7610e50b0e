package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// authServer is the server's own OAuth authorization server (-oauth), as
// a remote MCP server's is: metadata (RFC 9728, RFC 8414), dynamic client
// registration (RFC 7591), the authorization-code grant with PKCE (S256
// only) that a user's browser goes through (here it consents at once),
// refresh tokens that rotate, and access tokens that last expiresIn.
type authServer struct {
	base      string
	expiresIn time.Duration
	// pre is a client registered beforehand (-client-id): any loopback
	// redirect URI is its (RFC 8252: the port is the app's to pick).
	pre string

	mu      sync.Mutex
	clients map[string][]string // client id → redirect URIs
	codes   map[string]grant
	access  map[string]time.Time // token → expiry
	refresh map[string]bool
	hang    bool // the token endpoint answers nothing
}

type grant struct{ client, redirect, challenge string }

func newAuthServer(base string, expiresIn time.Duration, pre string) *authServer {
	return &authServer{base: base, expiresIn: expiresIn, pre: pre, clients: map[string][]string{}, codes: map[string]grant{},
		access: map[string]time.Time{}, refresh: map[string]bool{}}
}

// protect serves mcp to holders of a live access token, and the OAuth
// endpoints beside it.
func (a *authServer) protect(mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	meta := a.base + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/mcp", auth.RequireBearerToken(a.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta})(mcp))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: a.base + "/mcp", AuthorizationServers: []string{a.base}, ScopesSupported: []string{"tools"}}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"issuer": a.base, "authorization_endpoint": a.base + "/authorize",
			"token_endpoint": a.base + "/token", "registration_endpoint": a.base + "/register",
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"tools", "offline_access"}})
	})
	mux.HandleFunc("POST /register", a.register)
	mux.HandleFunc("GET /authorize", a.authorize)
	mux.HandleFunc("POST /token", a.token)
	// The admin's button: every token stops working, refresh tokens too.
	// And the broken one: the token endpoint stops answering.
	mux.HandleFunc("POST /hang-token", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.hang = true
		a.mu.Unlock()
	})
	mux.HandleFunc("POST /revoke-all", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.access, a.refresh = map[string]time.Time{}, map[string]bool{}
		a.mu.Unlock()
	})
	return mux
}

func (a *authServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.access[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: exp}, nil
}

func (a *authServer) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := "client-" + rand.Text()[:8]
	a.mu.Lock()
	a.clients[id] = m.RedirectURIs
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": m.RedirectURIs,
		"token_endpoint_auth_method": "none", "grant_types": m.GrantTypes, "response_types": []string{"code"}})
}

// authorize is where the browser lands: a registered client, its own
// redirect URI and an S256 challenge, or an error; the user consents.
func (a *authServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	uris, ok := a.clients[q.Get("client_id")]
	a.mu.Unlock()
	redirect := q.Get("redirect_uri")
	known := false
	for _, u := range uris {
		known = known || u == redirect
	}
	if ru, err := url.Parse(redirect); a.pre != "" && q.Get("client_id") == a.pre && err == nil && ru.Scheme == "http" && ru.Hostname() == "127.0.0.1" {
		ok, known = true, true
	}
	if !ok || !known {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	bq := back.Query()
	bq.Set("state", q.Get("state"))
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != a.base+"/mcp" {
		bq.Set("error", "invalid_request")
	} else {
		code := rand.Text()
		a.mu.Lock()
		a.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
		a.mu.Unlock()
		bq.Set("code", code)
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (a *authServer) token(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	hang := a.hang
	a.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		client := r.Form.Get("client_id")
		if id, _, ok := r.BasicAuth(); ok {
			client = id // client_secret_basic: a public client's secret is empty
		}
		g, ok := a.codes[r.Form.Get("code")]
		delete(a.codes, r.Form.Get("code")) // a code is used once
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != r.Form.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		if !a.refresh[r.Form.Get("refresh_token")] {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(a.refresh, r.Form.Get("refresh_token")) // they rotate
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := rand.Text(), rand.Text()
	a.access[access] = time.Now().Add(a.expiresIn)
	a.refresh[refresh] = true
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer",
		"expires_in": int(a.expiresIn / time.Second), "refresh_token": refresh})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
