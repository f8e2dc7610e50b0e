// Package mcptools gives agents the tools of MCP servers (the official Go
// SDK): a stdio server is a subprocess, a streamable HTTP one a URL.
// Servers start on first use and are shared by every session of the set;
// one that fails to start or crashes is started again on a later use,
// after a backoff; a slow or broken server gives the model a tool error,
// never a stuck turn (start and call timeouts; a cancelled turn cancels
// its call on the server).
package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Defaults of a server's timeouts.
const (
	StartTimeout = 30 * time.Second
	CallTimeout  = 300 * time.Second
	maxBackoff   = time.Minute
	// outputMax bounds what a call gives the model.
	outputMax = 256 << 10
)

// States of a server.
const (
	StateStopped  = "stopped"  // not started yet
	StateStarting = "starting" // connecting
	StateReady    = "ready"
	StateFailed   = "failed" // did not start, or crashed; retried after a backoff
)

// Status describes a server.
type Status struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Tools int    `json:"tools"`
	Error string `json:"error,omitempty"`
}

// Set is a group of servers (the daemon's, or one session's).
type Set struct {
	servers []*Server
	environ []string
	log     *slog.Logger
	// wrap, when set, makes a stdio server's command line: the sandbox
	// around it (a session's own servers).
	wrap func(argv []string) ([]string, error)
}

// Sandboxed makes the set's stdio servers run through wrap (the session's
// sandbox); it returns s.
func (s *Set) Sandboxed(wrap func(argv []string) ([]string, error)) *Set {
	s.wrap = wrap
	return s
}

// NewSet makes the servers of cfgs (started on first use). environ is
// what a stdio server's environment starts from.
func NewSet(cfgs map[string]config.MCPServer, environ []string, log *slog.Logger) *Set {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Set{environ: environ, log: log}
	names := make([]string, 0, len(cfgs))
	for n := range cfgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s.servers = append(s.servers, &Server{name: n, cfg: cfgs[n], set: s, state: StateStopped})
	}
	return s
}

// Empty reports whether the set has no server.
func (s *Set) Empty() bool { return s == nil || len(s.servers) == 0 }

// Tools returns the tools of every server that is (or now gets) ready,
// starting the ones not started, at once, each within its start timeout.
// A server that cannot start is left out (its status says why).
func (s *Set) Tools(ctx context.Context) []tool.Tool {
	if s.Empty() {
		return nil
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		if srv.ready() { // the usual case, every turn: nothing to start
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); srv.ensure(ctx) }()
	}
	wg.Wait()
	var out []tool.Tool
	for _, srv := range s.servers {
		out = append(out, srv.tools()...)
	}
	return out
}

// Status describes every server.
func (s *Set) Status() []Status {
	if s.Empty() {
		return nil
	}
	out := make([]Status, 0, len(s.servers))
	for _, srv := range s.servers {
		out = append(out, srv.status())
	}
	return out
}

// Close stops every server.
func (s *Set) Close() {
	if s.Empty() {
		return
	}
	for _, srv := range s.servers {
		srv.stop()
	}
}

// Server is one MCP server.
type Server struct {
	name string
	cfg  config.MCPServer
	set  *Set

	mu    sync.Mutex
	state string
	err   error
	cs    *mcp.ClientSession
	list  []tool.Tool // its tools, made once a start

	failures int
	retryAt  time.Time
	starting chan struct{} // closed when a start ends
}

func (srv *Server) status() Status {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	st := Status{Name: srv.name, State: srv.state, Tools: len(srv.list)}
	if srv.err != nil {
		st.Error = srv.err.Error()
	}
	return st
}

// ensure starts the server if it is not running and may be (re)started.
func (srv *Server) ensure(ctx context.Context) {
	srv.mu.Lock()
	switch {
	case srv.state == StateReady:
		srv.mu.Unlock()
		return
	case srv.state == StateStarting:
		ch := srv.starting
		srv.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return
	case srv.state == StateFailed && time.Now().Before(srv.retryAt):
		srv.mu.Unlock()
		return
	}
	srv.state, srv.starting = StateStarting, make(chan struct{})
	done := srv.starting
	srv.mu.Unlock()
	cs, list, err := srv.connect(ctx)
	srv.mu.Lock()
	defer close(done)
	defer srv.mu.Unlock()
	if err != nil {
		srv.failLocked(fmt.Errorf("start: %w", err))
		return
	}
	srv.state, srv.err, srv.cs, srv.list, srv.failures = StateReady, nil, cs, srv.wrap(list), 0
	srv.set.log.Info("mcp server ready", "server", srv.name, "tools", len(list))
	go func() {
		err := cs.Wait()
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.cs == cs { // not a stop or a later session
			if err == nil {
				err = errors.New("the connection ended")
			}
			srv.failLocked(fmt.Errorf("stopped: %w", err))
		}
	}()
}

// failLocked records a failure and when the server may start again.
func (srv *Server) failLocked(err error) {
	srv.state, srv.err, srv.cs, srv.list = StateFailed, err, nil, nil
	srv.failures++
	backoff := min(time.Second<<min(srv.failures-1, 10), maxBackoff)
	srv.retryAt = time.Now().Add(backoff)
	srv.set.log.Warn("mcp server failed", "server", srv.name, "err", err, "retry in", backoff)
}

func (srv *Server) connect(ctx context.Context) (*mcp.ClientSession, []*mcp.Tool, error) {
	timeout := StartTimeout
	if srv.cfg.StartTimeoutSecs > 0 {
		timeout = time.Duration(srv.cfg.StartTimeoutSecs) * time.Second
	}
	// The start is bounded by its own timeout, not by the turn that
	// happened to need it: other sessions share the server.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	var t mcp.Transport
	if srv.cfg.URL != "" {
		t = &mcp.StreamableClientTransport{Endpoint: srv.cfg.URL, MaxRetries: 2,
			HTTPClient: &http.Client{Transport: headers{srv.cfg.Headers, http.DefaultTransport}}}
	} else {
		argv := append([]string{srv.cfg.Command}, srv.cfg.Args...)
		if srv.set.wrap != nil {
			var err error
			if argv, err = srv.set.wrap(argv); err != nil {
				return nil, nil, err
			}
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = srv.cfg.Cwd
		env := srv.set.environ
		if env == nil {
			env = os.Environ()
		}
		cmd.Env = append([]string(nil), env...)
		for k, v := range srv.cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = nil // its log is its own
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "zeroclaw", Version: "1"}, nil)
	cs, err := c.Connect(sctx, t, nil)
	if err != nil {
		if sctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return nil, nil, err
	}
	var list []*mcp.Tool
	for tl, err := range cs.Tools(sctx, nil) {
		if err != nil {
			cs.Close()
			return nil, nil, fmt.Errorf("listing its tools: %w", err)
		}
		list = append(list, tl)
	}
	return cs, list, nil
}

// headers adds the configured headers to every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

func (srv *Server) stop() {
	srv.mu.Lock()
	cs := srv.cs
	srv.cs, srv.list, srv.state = nil, nil, StateStopped
	srv.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
}

// session is the live connection, nil when the server is not ready.
func (srv *Server) session() *mcp.ClientSession {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.cs
}

func (srv *Server) ready() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.state == StateReady
}

func (srv *Server) tools() []tool.Tool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.list
}

// wrap makes the server's tools what the agent calls.
func (srv *Server) wrap(list []*mcp.Tool) []tool.Tool {
	out := make([]tool.Tool, 0, len(list))
	for _, t := range list {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || len(schema) == 0 || string(schema) == "null" {
			schema = []byte(`{"type":"object"}`)
		}
		asks := !srv.cfg.Trust && !slices.Contains(srv.cfg.AutoApprove, t.Name)
		out = append(out, &mcpTool{srv: srv, name: ToolName(srv.name, t.Name), remote: t.Name,
			description: t.Description, schema: schema, asks: asks})
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// ToolName is the name the model knows a server's tool by:
// mcp__SERVER__TOOL, in the characters and length models accept.
func ToolName(server, name string) string {
	n := "mcp__" + unsafeName.ReplaceAllString(server, "_") + "__" + unsafeName.ReplaceAllString(name, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// mcpTool is one tool of a server.
type mcpTool struct {
	srv                       *Server
	name, remote, description string
	schema                    json.RawMessage
	asks                      bool
}

func (t *mcpTool) Spec() tool.Spec {
	d := t.description
	if d == "" {
		d = "tool " + t.remote + " of the MCP server " + t.srv.name
	}
	return tool.Spec{Name: t.name, Description: d, Schema: t.schema}
}

func (t *mcpTool) Asks() bool { return t.asks }

// Kind is other: what a server's tool does is the server's to say, and
// MCP's annotations are hints a server may get wrong.
func (t *mcpTool) Kind() string { return protocol.KindOther }

func (t *mcpTool) Summary(input json.RawMessage) string {
	s := fmt.Sprintf("%s (MCP server %s) %s", t.remote, t.srv.name, input)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func (t *mcpTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) tool.Result {
	cs := t.srv.session()
	if cs == nil {
		t.srv.ensure(ctx)
		if cs = t.srv.session(); cs == nil {
			st := t.srv.status()
			return tool.Result{Output: fmt.Sprintf("MCP server %s is not running (%s): %s", t.srv.name, st.State, st.Error), IsError: true}
		}
	}
	timeout := CallTimeout
	if t.srv.cfg.CallTimeoutSecs > 0 {
		timeout = time.Duration(t.srv.cfg.CallTimeoutSecs) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: t.remote, Arguments: input})
	switch {
	case err != nil && ctx.Err() != nil:
		return tool.Result{Output: fmt.Sprintf("%s: cancelled", t.name), IsError: true}
	case err != nil && cctx.Err() != nil:
		return tool.Result{Output: fmt.Sprintf("MCP server %s: %s gave no answer within %s (the call was cancelled)", t.srv.name, t.remote, timeout), IsError: true}
	case err != nil:
		return tool.Result{Output: fmt.Sprintf("MCP server %s: %s: %v", t.srv.name, t.remote, err), IsError: true}
	}
	var b strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]\n%s", c.Resource.URI, c.Resource.Text)
			}
		default:
			raw, _ := json.Marshal(c)
			b.Write(raw)
		}
		if b.Len() > outputMax {
			break
		}
	}
	out := b.String()
	if len(out) > outputMax {
		out = out[:outputMax] + "\n[... cut]"
	}
	if out == "" && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		out = string(raw)
	}
	return tool.Result{Output: out, IsError: res.IsError}
}
