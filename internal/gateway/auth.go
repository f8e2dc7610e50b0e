package gateway

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
)

// cookieName is the dashboard's session cookie: one half of a browser's
// session, HttpOnly and SameSite=Strict, so the page's script never
// holds it and no other site's page can send it. Cookies are not scoped
// by port, though: the browser sends it to every server on this host,
// so it is worth nothing without the other half, the page key, which
// the page keeps in its origin's storage and sends as keyHeader (or,
// for a WebSocket, the subprotocol "key.<key>").
const (
	cookieName = "zc_session"
	keyHeader  = "X-Zeroclaw-Key"
	// maxCookies bounds the zc_session cookies tried: a page on another
	// port can add cookies of that name (with a longer path, sent first),
	// which must not hide the real one.
	maxCookies = 4
)

// apiError is the body of every refusal.
type apiError struct {
	Error struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	var e apiError
	e.Error.Kind, e.Error.Message = kind, msg
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"kind":"internal","message":"encoding the answer failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// hostAllowed: a Host header naming this gateway. DNS rebinding points a
// name the attacker owns at 127.0.0.1; the browser then sends that name.
// Loopback names, IP literals (which no DNS answer can rebind), the
// listen host, and with TLS the names of the certificate (a rebound name
// would fail the certificate check first) are this gateway.
func (g *Gateway) hostAllowed(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "" {
		return false
	}
	if config.IsLoopback(host) || net.ParseIP(host) != nil {
		return true
	}
	if lh, _, err := net.SplitHostPort(g.o.Config.Listen); err == nil && strings.EqualFold(strings.Trim(lh, "[]"), host) {
		return true
	}
	if g.tls != nil {
		for _, c := range g.tls.Certificates {
			if c.Leaf != nil && c.Leaf.VerifyHostname(host) == nil {
				return true
			}
		}
	}
	return false
}

// originAllowed: no Origin (not a browser, or a same-origin GET), the
// gateway's own origin, or one of allowed_origins.
func (g *Gateway) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if strings.EqualFold(o, scheme+"://"+r.Host) {
		return true
	}
	for _, a := range g.o.Config.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), o) {
			return true
		}
	}
	return false
}

// credentials finds what the request offers as its credential: the
// Authorization header's bearer token (the scheme in any case, RFC 9110),
// a browser session (a zc_session cookie with the page key), or a
// WebSocket subprotocol "bearer.<token>". Each is checked in turn.
func credentials(r *http.Request) []string {
	if h := strings.TrimSpace(r.Header.Get("Authorization")); h != "" {
		scheme, tok, _ := strings.Cut(h, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return nil
		}
		return []string{strings.TrimSpace(tok)}
	}
	var out []string
	if key := pageKey(r); key != "" {
		for i, c := range r.CookiesNamed(cookieName) {
			if i == maxCookies {
				break
			}
			out = append(out, pairing.Join(c.Value, key))
		}
	}
	for _, p := range wsProtocols(r) {
		if tok, ok := strings.CutPrefix(p, "bearer."); ok {
			out = append(out, tok)
			break
		}
	}
	return out
}

// pageKey is a browser session's page key: the header, or for a
// WebSocket (which cannot set headers) the subprotocol "key.<key>".
func pageKey(r *http.Request) string {
	if k := r.Header.Get(keyHeader); k != "" {
		return k
	}
	for _, p := range wsProtocols(r) {
		if k, ok := strings.CutPrefix(p, "key."); ok {
			return k
		}
	}
	return ""
}

// check returns the first of the request's credentials that is live.
func (g *Gateway) check(r *http.Request) (pairing.Info, bool) {
	for _, c := range credentials(r) {
		if info, ok := g.o.Keeper.Check(c); ok {
			return info, true
		}
	}
	return pairing.Info{}, false
}

func wsProtocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

type ctxKey struct{}

// token returns the token that authenticated r.
func token(r *http.Request) pairing.Info {
	info, _ := r.Context().Value(ctxKey{}).(pairing.Info)
	return info
}

// statusWriter remembers the status for the audit log, and closes the
// connection after an answer sent before the request's body was read:
// the server would otherwise wait for the rest of the body before
// answering (to keep the connection), and a peer that never sends it
// would never get the answer.
type statusWriter struct {
	http.ResponseWriter
	status int
	body   *deadlineBody // nil: the request has no body
}

func (w *statusWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
		if w.body != nil && !w.body.eof.Load() {
			w.Header().Set("Connection", "close")
			// After the answer, the server reads what is left of the
			// body (to keep the connection) with no deadline of its own:
			// the body's last moment is now, so a body never sent does
			// not hold the connection open.
			w.body.setDeadline(time.Now())
		}
	}
	w.ResponseWriter.WriteHeader(s)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController and the WebSocket upgrade reach
// the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP checks every request (Host, Origin, token) before routing it.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	peer := "ws:" + r.RemoteAddr
	var info pairing.Info
	defer func() {
		// The audit log: who, what, the answer; the token's id, never
		// the token (nor the query string, where one could be pasted).
		g.log.Info("gateway request", "peer", peer, "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"tokenId", info.ID, "ms", time.Since(t0).Milliseconds())
	}()
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		rc := http.NewResponseController(w)
		sw.body = &deadlineBody{body: r.Body, setDeadline: rc.SetReadDeadline, end: t0.Add(BodyMax)}
		r.Body = sw.body
	}
	h := sw.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if !g.hostAllowed(r) {
		writeError(sw, http.StatusMisdirectedRequest, "misdirected_host", "this gateway does not answer for host "+quoteHost(r.Host))
		return
	}
	if !g.originAllowed(r) {
		writeError(sw, http.StatusForbidden, "forbidden_origin", "requests from origin "+quoteHost(r.Header.Get("Origin"))+" are not allowed (gateway.allowed_origins)")
		return
	}
	if !g.public(r) {
		var ok bool
		if info, ok = g.check(r); !ok {
			writeError(sw, http.StatusUnauthorized, "unauthorized", "a valid token is required: pair with `zeroclaw gateway pair` and POST /pair")
			return
		}
		authenticatedConn(r.Context())
		r = r.WithContext(contextWith(r.Context(), info))
	}
	g.routes.ServeHTTP(sw, r)
}

func quoteHost(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	b, _ := json.Marshal(s)
	return string(b)
}
