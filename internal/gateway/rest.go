package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func contextWith(ctx context.Context, info pairing.Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// Route is one REST route: its method and path pattern (http.ServeMux's
// syntax), public when it needs no credential, and what it serves.
type Route struct {
	Method, Path string
	Public       bool
	serve        func(g *Gateway, w http.ResponseWriter, r *http.Request)
}

// Routes is the gateway's table of routes (the dashboard's static files
// aside); openapi.json describes exactly these (a test checks).
var Routes = []Route{
	{Method: http.MethodGet, Path: "/health", Public: true, serve: (*Gateway).health},
	{Method: http.MethodPost, Path: "/pair", Public: true, serve: (*Gateway).pair},
	{Method: http.MethodPost, Path: "/logout", serve: (*Gateway).logout},
	{Method: http.MethodGet, Path: "/ws", serve: func(g *Gateway, w http.ResponseWriter, r *http.Request) { g.serveWS(w, r, peerOf(r), false) }},
	{Method: http.MethodGet, Path: "/acp", serve: func(g *Gateway, w http.ResponseWriter, r *http.Request) { g.serveWS(w, r, peerOf(r), true) }},
	{Method: http.MethodPost, Path: "/webhook", serve: (*Gateway).webhook},
	{Method: http.MethodGet, Path: "/api/openapi.json", serve: (*Gateway).openAPI},
	{Method: http.MethodGet, Path: "/api/status", serve: (*Gateway).status},
	{Method: http.MethodGet, Path: "/api/sessions", serve: (*Gateway).sessions},
	{Method: http.MethodGet, Path: "/api/sessions/{id}", serve: (*Gateway).session},
	{Method: http.MethodDelete, Path: "/api/sessions/{id}", serve: (*Gateway).deleteSession},
	{Method: http.MethodGet, Path: "/api/sessions/{id}/history", serve: (*Gateway).history},
	{Method: http.MethodPost, Path: "/api/sessions/{id}/prompt", serve: func(g *Gateway, w http.ResponseWriter, r *http.Request) {
		g.prompt(w, r, peerOf(r), r.PathValue("id"))
	}},
	{Method: http.MethodPost, Path: "/api/sessions/{id}/cancel", serve: (*Gateway).cancelTurn},
	{Method: http.MethodGet, Path: "/api/sessions/{id}/export", serve: (*Gateway).export},
	{Method: http.MethodGet, Path: "/metrics", serve: func(g *Gateway, w http.ResponseWriter, r *http.Request) { metrics.Handler().ServeHTTP(w, r) }},
}

// mux routes the table: each path also answers other methods with a
// 405 that names the allowed ones, and unknown /api/ paths with a 404,
// both as the gateway's JSON errors.
func (g *Gateway) mux() *http.ServeMux {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	for _, rt := range Routes {
		mux.HandleFunc(rt.Method+" "+rt.Path, func(w http.ResponseWriter, r *http.Request) { rt.serve(g, w, r) })
		allowed[rt.Path] = append(allowed[rt.Path], rt.Method)
	}
	for path, ms := range allowed {
		if slices.Contains(ms, http.MethodGet) {
			ms = append(ms, http.MethodHead)
		}
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { method(w, r, ms...) })
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such route: "+r.URL.Path+" (see /api/openapi.json)")
	})
	mux.HandleFunc("/", g.dashboard)
	return mux
}

// public says whether the route r takes needs no credential: the public
// routes of the table, and the dashboard's static files (which hold no
// data: everything it shows it fetches with its credential).
func (g *Gateway) public(r *http.Request) bool {
	_, pattern := g.routes.Handler(r)
	if _, path, ok := strings.Cut(pattern, " "); ok {
		for _, rt := range Routes {
			if rt.Path == path {
				return rt.Public
			}
		}
	}
	switch pattern {
	case "/health", "/pair": // their 405s
		return true
	case "/": // the dashboard's files; every other path has a pattern of its own
		return true
	}
	return false
}

func peerOf(r *http.Request) string { return "ws:" + r.RemoteAddr }

func (g *Gateway) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "serverVersion": g.o.Version})
}

func (g *Gateway) logout(w http.ResponseWriter, r *http.Request) {
	// A browser's session ends here, in the daemon too (a copy of the
	// cookie and key is worth nothing after it).
	if info := token(r); info.Kind == pairing.KindBrowser {
		if _, err := g.o.Keeper.Revoke(info.ID); err != nil {
			writeError(w, http.StatusInternalServerError, "internal", err.Error())
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	writeJSON(w, http.StatusOK, map[string]bool{"loggedOut": true})
}

func (g *Gateway) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}

func method(w http.ResponseWriter, r *http.Request, ms ...string) bool {
	for _, m := range ms {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(ms, ", "))
	writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not served here (allowed: "+strings.Join(ms, ", ")+")")
	return false
}

// clientIP is the address failed pairings are counted against.
func clientIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// innermost is the writer under w's wrappers (Unwrap).
func innermost(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// decodeBody reads a JSON body of at most max bytes into v.
//
// The limit is told to net/http's own writer (under the wrappers): then
// the server, not reading the rest of a body too large, half-closes the
// connection after the 413 and waits a moment before closing it, so the
// client reads the 413 rather than a reset.
func decodeBody(w http.ResponseWriter, r *http.Request, max int, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(innermost(w), r.Body, int64(max)))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", max))
		} else {
			writeError(w, http.StatusBadRequest, "bad_request", "reading the body: "+err.Error())
		}
		return false
	}
	if err := protocol.Decode(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return false
	}
	return true
}

func (g *Gateway) pair(w http.ResponseWriter, r *http.Request) {
	var p protocol.PairRequest
	if !decodeBody(w, r, 4096, &p) {
		return
	}
	cred, info, err := g.o.Keeper.Pair(clientIP(r), p.Code, p.Name, p.Cookie)
	var limited *pairing.RateLimitedError
	switch {
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", strconv.Itoa(limited.Seconds()))
		writeError(w, http.StatusTooManyRequests, "rate_limited", err.Error())
		return
	case errors.Is(err, pairing.ErrBadCode):
		writeError(w, http.StatusUnauthorized, "bad_code", err.Error()+": get a new one with `zeroclaw gateway pair`")
		return
	case errors.Is(err, pairing.ErrCodeBurned):
		g.log.Warn("gateway pairing refused: the code was withdrawn after wrong codes were tried while it was valid", "peer", "ws:"+r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "code_burned", err.Error()+": get a fresh one with `zeroclaw gateway pair`")
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	g.log.Info("gateway paired", "peer", "ws:"+r.RemoteAddr, "tokenId", info.ID, "name", info.Name)
	res := protocol.PairResponse{TokenID: info.ID, ExpiresAt: rfc3339(info.ExpiresMs)}
	if p.Cookie {
		// The cookie lives as long as the session can (the daemon ends
		// it sooner when it goes unused); the key goes to the page.
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cred.Token, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			MaxAge: int(time.Until(time.UnixMilli(info.CreatedMs).Add(g.o.Keeper.Lifetimes().TokenTTL)).Seconds())})
		res.Key = cred.Key
	} else {
		res.Token = cred.Token
	}
	writeJSON(w, http.StatusOK, res)
}

// rpcError maps a daemon error to an HTTP answer.
func rpcError(w http.ResponseWriter, err error) {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		switch je.Code {
		case protocol.CodeSessionNotFound:
			writeError(w, http.StatusNotFound, "session_not_found", je.Message)
		case protocol.CodeSessionBusy, protocol.CodeSessionLimit:
			writeError(w, http.StatusConflict, "busy", je.Message)
		case protocol.CodeForbidden:
			writeError(w, http.StatusForbidden, "forbidden", je.Message)
		case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest:
			writeError(w, http.StatusBadRequest, "bad_request", je.Message)
		default:
			writeError(w, http.StatusInternalServerError, "internal", je.Message)
		}
		return
	}
	writeError(w, http.StatusBadGateway, "daemon", err.Error())
}

// call makes one JSON-RPC call on a fresh in-process connection.
func (g *Gateway) call(ctx context.Context, peer, m string, params, result any) error {
	c, err := g.open(ctx, peer, "zeroclaw-gateway", nil, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Call(ctx, m, params, result)
}

func (g *Gateway) status(w http.ResponseWriter, r *http.Request) {
	var st protocol.StatusResult
	if err := g.call(r.Context(), peerOf(r), protocol.MethodStatus, struct{}{}, &st); err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (g *Gateway) sessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := protocol.SessionListParams{Cursor: q.Get("cursor"), Query: q.Get("query")}
	for _, f := range []struct {
		name string
		v    *int
	}{{"limit", &p.Limit}, {"offset", &p.Offset}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				writeError(w, http.StatusBadRequest, "bad_request", f.name+": not a number")
				return
			}
			*f.v = n
		}
	}
	var res protocol.SessionListResult
	if err := g.call(r.Context(), peerOf(r), protocol.MethodSessionList, p, &res); err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// relay answers with method's result for {sessionId} of the path.
func (g *Gateway) relay(w http.ResponseWriter, r *http.Request, method string) {
	var res json.RawMessage
	if err := g.call(r.Context(), peerOf(r), method, protocol.SessionRef{SessionID: r.PathValue("id")}, &res); err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (g *Gateway) session(w http.ResponseWriter, r *http.Request) {
	g.relay(w, r, protocol.MethodSessionGet)
}
func (g *Gateway) deleteSession(w http.ResponseWriter, r *http.Request) {
	g.relay(w, r, protocol.MethodSessionDelete)
}
func (g *Gateway) cancelTurn(w http.ResponseWriter, r *http.Request) {
	g.relay(w, r, protocol.MethodSessionCancel)
}

// exportTypes are each export format's file extension and media type.
var exportTypes = map[string][2]string{"markdown": {"md", "text/markdown; charset=utf-8"}, "json": {"json", "application/json"}, "html": {"html", "text/html; charset=utf-8"}}

// export serves a session as a document, to download (never shown in
// the gateway's origin: a page there could read the dashboard's key);
// its policy lets nothing load or run even when opened.
func (g *Gateway) export(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "markdown"
	}
	id := r.PathValue("id")
	var res protocol.SessionExportResult
	if err := g.call(r.Context(), peerOf(r), protocol.MethodSessionExport, protocol.SessionExportParams{SessionID: id, Format: format}, &res); err != nil {
		rpcError(w, err)
		return
	}
	kind := exportTypes[res.Format]
	w.Header().Set("Content-Type", kind[1])
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	w.Header().Set("Content-Disposition", `attachment; filename="`+id+"."+kind[0]+`"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	io.WriteString(w, res.Content)
}

func (g *Gateway) history(w http.ResponseWriter, r *http.Request) {
	since := int64(0)
	if v := r.URL.Query().Get("sinceSeq"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", "sinceSeq: not a seq")
			return
		}
		since = n
	}
	var res json.RawMessage
	if err := g.call(r.Context(), peerOf(r), protocol.MethodSessionHistory, protocol.SessionHistoryParams{SessionID: r.PathValue("id"), SinceSeq: since}, &res); err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// sse writes Server-Sent Events, one at a time, flushed.
type sse struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	written int64 // the last seq written
	done    bool  // turn_complete written
	end     chan struct{}
	err     error
}

func (s *sse) event(name string, id int64, data []byte) error {
	if s.err != nil {
		return s.err
	}
	var b strings.Builder
	if id > 0 {
		fmt.Fprintf(&b, "id: %d\n", id)
	}
	fmt.Fprintf(&b, "event: %s\ndata: ", name)
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := io.WriteString(s.w, b.String()); err != nil {
		s.err = err
		return err
	}
	s.err = s.rc.Flush()
	return s.err
}

// update writes a session/update unless written already; it ends the
// stream's wait at turn_complete.
func (s *sse) update(raw json.RawMessage) {
	var u protocol.EventHeader // passed on as it came: its members need no decoding
	if json.Unmarshal(raw, &u) != nil || u.Seq <= s.written {
		return
	}
	if s.event(protocol.MethodSessionUpdate, u.Seq, raw) == nil {
		s.written = u.Seq
	}
	if u.Type == protocol.EventTurnComplete && !s.done {
		s.done = true
		close(s.end)
	}
}

// promptBody is the body of POST /api/sessions/{id}/prompt.
type promptBody struct {
	Prompt      *string               `json:"prompt"`
	Attachments []protocol.Attachment `json:"attachments,omitempty"`
	// Cwd and AgentAlias are used when the session does not exist yet.
	Cwd        string `json:"cwd,omitempty"`
	AgentAlias string `json:"agentAlias,omitempty"`
}

// prompt streams a turn as Server-Sent Events: every session/update
// (id: its seq), then event: result. With Last-Event-ID it sends no
// prompt: it replays what followed that seq and follows the running turn
// to its end, so a client that lost the stream resumes it.
func (g *Gateway) prompt(w http.ResponseWriter, r *http.Request, peer, id string) {
	resume := int64(-1)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", "Last-Event-ID: not a seq")
			return
		}
		resume = n
	}
	var body promptBody
	if resume < 0 {
		if !decodeBody(w, r, g.o.MaxFrame, &body) {
			return
		}
		if body.Prompt == nil {
			writeError(w, http.StatusBadRequest, "bad_request", "prompt: is required")
			return
		}
	}
	if !g.busy() {
		writeError(w, http.StatusServiceUnavailable, "stopping", "the daemon is stopping")
		return
	}
	defer g.idle()
	ctx := r.Context()
	s := &sse{w: w, rc: http.NewResponseController(w), end: make(chan struct{}), written: max(resume, 0)}
	// Live events wait in held until the replay has caught up.
	var held []json.RawMessage
	replaying := resume >= 0
	h := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method != protocol.MethodSessionUpdate {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, nil, "an SSE stream answers no requests")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if replaying {
			held = append(held, append(json.RawMessage(nil), req.Params...))
			return nil, nil
		}
		s.update(req.Params)
		return nil, nil
	})
	c, err := g.open(ctx, peer, "zeroclaw-gateway", h, nil)
	if err != nil {
		rpcError(w, err)
		return
	}
	defer c.Close()
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: id, Cwd: body.Cwd, AgentAlias: body.AgentAlias, KeepSiblings: true}); err != nil {
		rpcError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s.rc.Flush()
	if resume >= 0 {
		_, err := c.Replay(ctx, id, resume, 0, func(ev json.RawMessage, _ protocol.SessionUpdate) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.update(ev)
			return s.err
		})
		s.mu.Lock()
		replaying = false
		for _, ev := range held {
			s.update(ev)
		}
		held = nil
		finished := s.done
		s.mu.Unlock()
		if err != nil {
			s.event("error", 0, errorJSON(err))
			return
		}
		if !finished && !g.running(ctx, c, id) {
			// Nothing runs: the stream is over with what was stored.
			s.event("result", 0, []byte(`null`))
			return
		}
		select {
		case <-s.end:
		case <-ctx.Done():
			return
		}
		s.mu.Lock()
		s.event("result", 0, []byte(`{"sessionId":`+strconv.Quote(id)+`,"resumed":true}`))
		s.mu.Unlock()
		return
	}
	var res json.RawMessage
	err = c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: id, Prompt: body.Prompt, Attachments: body.Attachments}, &res)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.event("error", 0, errorJSON(err))
		return
	}
	s.event("result", 0, res)
}

// running reports whether session id has a turn running.
func (g *Gateway) running(ctx context.Context, c *client.Client, id string) bool {
	st, err := c.Status(ctx)
	if err != nil {
		return false
	}
	for _, s := range st.Sessions {
		if s.SessionID == id {
			return s.State == "running"
		}
	}
	return false
}

func rfc3339(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

func errorJSON(err error) []byte {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		b, _ := json.Marshal(map[string]any{"code": je.Code, "message": je.Message})
		return b
	}
	b, _ := json.Marshal(map[string]any{"message": err.Error()})
	return b
}

// webhookBody is the body of POST /webhook.
type webhookBody struct {
	Prompt     *string `json:"prompt"`
	SessionID  string  `json:"sessionId,omitempty"`
	AgentAlias string  `json:"agentAlias,omitempty"`
	Cwd        string  `json:"cwd,omitempty"`
}

// webhook starts a turn: 202 with the session id at once (the turn runs
// on, its client held until it ends), or with ?wait=true the result.
func (g *Gateway) webhook(w http.ResponseWriter, r *http.Request) {
	peer := peerOf(r)
	var body webhookBody
	if !decodeBody(w, r, g.o.MaxFrame, &body) {
		return
	}
	if body.Prompt == nil {
		writeError(w, http.StatusBadRequest, "bad_request", "prompt: is required")
		return
	}
	if !g.busy() {
		writeError(w, http.StatusServiceUnavailable, "stopping", "the daemon is stopping")
		return
	}
	wait := r.URL.Query().Get("wait") == "true"
	// The turn outlives the request unless the caller waits for it.
	ctx := g.ctx
	if wait {
		ctx = r.Context()
	}
	c, err := g.open(ctx, peer, "zeroclaw-gateway", nil, nil)
	if err != nil {
		g.idle()
		rpcError(w, err)
		return
	}
	nres, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: body.SessionID, AgentAlias: body.AgentAlias, Cwd: body.Cwd, KeepSiblings: true})
	if err != nil {
		c.Close()
		g.idle()
		rpcError(w, err)
		return
	}
	result := make(chan error, 1)
	var res json.RawMessage
	go func() {
		defer g.idle()
		defer c.Close()
		err := c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: nres.SessionID, Prompt: body.Prompt}, &res)
		if err != nil && !wait {
			g.log.Warn("webhook turn failed", "peer", peer, "sessionId", nres.SessionID, "err", err)
		}
		result <- err
	}()
	if !wait {
		writeJSON(w, http.StatusAccepted, map[string]string{"sessionId": nres.SessionID})
		return
	}
	if err := <-result; err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
