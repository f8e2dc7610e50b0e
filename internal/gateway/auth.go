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

// cookieName is the dashboard's session cookie: the token, HttpOnly and
// SameSite=Strict, so the page's script never holds it and no other
// site's page can send it.
const cookieName = "zc_session"

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

// credential finds the request's token: the Authorization header, the
// dashboard's cookie, or a WebSocket subprotocol "bearer.<token>".
func credential(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(tok)
		}
		return ""
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return c.Value
	}
	for _, p := range wsProtocols(r) {
		if tok, ok := strings.CutPrefix(p, "bearer."); ok {
			return tok
		}
	}
	return ""
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

// statusWriter remembers the status for the audit log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
	w.ResponseWriter.WriteHeader(s)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
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

// public routes need no token: the health check, pairing itself, and the
// dashboard's static files (which hold no data: everything it shows it
// fetches with its cookie).
func public(path string) bool {
	return path == "/health" || path == "/pair" || path == "/" || path == "/favicon.ico" || strings.HasPrefix(path, "/assets/")
}

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
	if !public(r.URL.Path) {
		var ok bool
		if info, ok = g.o.Keeper.Check(credential(r)); !ok {
			writeError(sw, http.StatusUnauthorized, "unauthorized", "a valid token is required: pair with `zeroclaw gateway pair` and POST /pair")
			return
		}
		r = r.WithContext(contextWith(r.Context(), info))
	}
	g.route(sw, r, peer)
}

func quoteHost(s string) string {
	if len(s) > 100 {
		s = s[:100]
	}
	b, _ := json.Marshal(s)
	return string(b)
}
