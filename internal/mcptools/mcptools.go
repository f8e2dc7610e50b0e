// Package mcptools gives agents the tools of MCP servers (the official Go
// SDK): a stdio server is a subprocess, a streamable HTTP one a URL.
// Servers start in the background (Start, or on first use) and are
// shared by every session of the set; one that fails to start or crashes
// is started again after a backoff. A turn never waits on a server beyond
// a bounded wait for one still in its first start (TurnWait): the tools
// of a server that is not ready are still offered, and a call to one
// answers what is happening; a slow or broken server gives the model a
// tool error, never a stuck turn (start and call timeouts; a cancelled
// turn cancels its call on the server). A stdio server's stderr is kept
// (its last 8 KiB) and, with its exit status, says why it failed.
package mcptools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/form"
	"github.com/zeroclaw/zeroclaw/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/mcpauth"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Defaults of a server's timeouts.
const (
	StartTimeout = 30 * time.Second
	CallTimeout  = 300 * time.Second
	maxBackoff   = time.Minute
	// outputMax bounds what a call gives the model.
	outputMax = 256 << 10
	// TurnWait is how long a turn waits, in all, for servers still in
	// their first start (mcp.turn_wait_ms).
	TurnWait = time.Second
	// stderrKeep is how much of a server's stderr is kept.
	stderrKeep = 8 << 10
	// exitWait is how long a failure waits for the process's exit status.
	exitWait = time.Second
)

// States of a server.
const (
	StateStopped  = "stopped"  // not started yet
	StateStarting = "starting" // connecting
	StateReady    = "ready"
	StateFailed   = "failed" // did not start, or crashed; retried after a backoff
)

// Status describes a server (status's mcpServers[]).
type Status = protocol.MCPServerStatus

// AuthLoginRequired is Status.Auth of a server that needs a login.
const AuthLoginRequired = "login_required"

// Set is a group of servers (the daemon's, or one session's).
type Set struct {
	servers []*Server
	environ []string
	log     *slog.Logger
	wait    atomic.Int64 // a turn's wait, in ns (TurnWait unless set)
	// roots are the directories the servers are told (roots/list): a
	// session's set has its directory; the shared set none, and does not
	// declare roots.
	roots []string
	// wrap, when set, makes a stdio server's command line: the sandbox
	// around it (a session's own servers).
	wrap func(argv []string) ([]string, error)
	// logins keeps the HTTP servers' OAuth logins (nil: none are used).
	logins *mcpauth.Store
	// onChange, when set, is told (in a goroutine of its own) when what
	// a server offers may have changed: it became ready, or said its
	// tools, prompts or resources changed.
	onChange atomic.Pointer[func()]
}

// OnChange sets what is told when what the set's servers offer may have
// changed (a server became ready, or its lists changed); it returns s.
func (s *Set) OnChange(f func()) *Set {
	s.onChange.Store(&f)
	return s
}

// changed tells onChange, if set.
func (s *Set) changed() {
	if f := s.onChange.Load(); f != nil {
		go (*f)()
	}
}

// WithLogins gives the set's HTTP servers the OAuth logins kept in
// logins (zeroclaw mcp login); it returns s.
func (s *Set) WithLogins(logins *mcpauth.Store) *Set {
	s.logins = logins
	return s
}

// WithTurnWait sets how long a turn waits, in all, for servers still in
// their first start (0: TurnWait); it returns s.
func (s *Set) WithTurnWait(d time.Duration) *Set {
	if d <= 0 {
		d = TurnWait
	}
	s.wait.Store(int64(d))
	return s
}

// WithRoot gives the set's servers dir as their root (roots/list), before
// they start; it returns s.
func (s *Set) WithRoot(dir string) *Set {
	if dir != "" {
		s.roots = append(s.roots, dir)
	}
	return s
}

// Start starts every server in the background: a turn finds them ready,
// or goes on without them.
func (s *Set) Start() {
	if s.Empty() {
		return
	}
	for _, srv := range s.servers {
		srv.kick()
	}
}

// Sandboxed makes the set's stdio servers run through wrap (the
// session's sandbox, or the shim's supervision alone); it returns s.
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
	s.wait.Store(int64(TurnWait))
	names := make([]string, 0, len(cfgs))
	for n := range cfgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s.servers = append(s.servers, &Server{name: n, cfg: cfgs[n], set: s, state: StateStopped, first: make(chan struct{})})
	}
	return s
}

// Empty reports whether the set has no server.
func (s *Set) Empty() bool { return s == nil || len(s.servers) == 0 }

// Tools returns the tools of every server: a ready one's, and those a
// server had when it was last ready (a call to one of those answers what
// is happening). It starts the servers not started and restarts, in the
// background, a failed one whose backoff has passed. It waits only for
// servers still in their first start, and only until the set's turn wait
// has passed since that start began: a server that hangs at start costs
// the turns of its first second, not every turn; one restarting costs
// none.
func (s *Set) Tools(ctx context.Context) []tool.Tool {
	if s.Empty() || !s.settle(ctx) {
		return nil
	}
	var out []tool.Tool
	for _, srv := range s.servers {
		out = append(out, srv.tools()...)
	}
	return out
}

// settle starts the servers not started (and restarts failed ones past
// their backoff) in the background, and waits for those still in their
// first start until the turn wait has passed since it began; false when
// ctx ended first.
func (s *Set) settle(ctx context.Context) bool {
	for _, srv := range s.servers {
		srv.kick()
	}
	wait := time.Duration(s.wait.Load())
	for _, srv := range s.servers {
		first, since := srv.firstStart()
		if first == nil {
			continue // the usual case, every turn: nothing to wait for
		}
		left := wait - time.Since(since)
		if left <= 0 {
			continue
		}
		t := time.NewTimer(left)
		select {
		case <-first:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
	return true
}

// Unavailable says which servers are not ready now and why, for the
// model ("" when all are).
func (s *Set) Unavailable() string {
	if s.Empty() {
		return ""
	}
	var notes []string
	for _, srv := range s.servers {
		if n := srv.unavailable(); n != "" {
			notes = append(notes, n)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "MCP servers not available now (their tools, where listed, answer with an error until they are back): " + strings.Join(notes, "; ") + "."
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

// Close stops every server, all at once (each may take its grace to
// exit), and returns when they are gone.
func (s *Set) Close() {
	if s.Empty() {
		return
	}
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(srv.stop)
	}
	wg.Wait()
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
	// known are the tools it had when last ready: offered while it is
	// not, so a restart does not make them vanish from the model.
	known     []tool.Tool
	everReady bool
	// first is closed when its first start has ended, ready or not;
	// firstAt is when that start began.
	first     chan struct{}
	firstDone bool
	firstAt   time.Time
	stderr    *tail // a stdio server's last 8 KiB of stderr
	// watch knows which tools of the live connection need tasks;
	// hidden are those tools, not offered to the model.
	watch  *wireWatch
	hidden []string
	// needsLogin: the server refused us for want of an OAuth login;
	// loginStamp is the login file's stamp then, so a new login (and
	// only that) starts it again.
	version    string // the MCP revision agreed on, once ready
	needsLogin bool
	loginStamp string
	awaiting   bool // a watcher looks for the new login
	// login gives the live connection its token (an HTTP server's, with
	// logins kept); it says when the server wants a new login.
	login *mcpauth.Handler

	// callers are the calls in flight, latest last: a server's question
	// (elicitation/create) goes to the session of the latest one.
	callers []*tool.Env
	// progress maps a call's progress token to where its progress goes.
	progress map[string]func(progress, total float64, message string)
	tokens   uint64

	failures    int
	retryAt     time.Time
	starting    chan struct{}      // closed when a start ends
	cancelStart context.CancelFunc // cancels the start in progress
}

// kick starts the server in the background when it is stopped, or failed
// and past its backoff.
func (srv *Server) kick() {
	srv.mu.Lock()
	due := srv.dueLocked()
	if due && srv.firstAt.IsZero() {
		srv.firstAt = time.Now()
	}
	srv.mu.Unlock()
	if due {
		go srv.ensure(context.Background())
	}
}

// dueLocked says whether the server may start now: stopped, or failed and
// past its backoff; one that needs a login, once the user logged in (its
// start is then waited for as a first start is). srv.mu is held.
func (srv *Server) dueLocked() bool {
	switch {
	case srv.state == StateStopped:
		return true
	case srv.state != StateFailed:
		return false
	case srv.needsLogin:
		if srv.set.logins.Stamp(srv.name) == srv.loginStamp {
			return false // no new login: asking again would be refused again
		}
		srv.needsLogin, srv.retryAt = false, time.Time{}
		srv.first, srv.firstDone, srv.firstAt = make(chan struct{}), false, time.Now()
		return true
	}
	return !time.Now().Before(srv.retryAt)
}

// loginPoll is how often a server that waits for a login looks for one.
const loginPoll = 200 * time.Millisecond

// awaitLoginLocked watches, while the server waits for a login, for the
// user's new one (zeroclaw mcp login writes the login file, from another
// process): the server starts again as soon as it is there, not at the
// next turn, so status says ready within a moment of the login. One
// watcher a server; it ends with the wait (a start, a stop). srv.mu is
// held.
func (srv *Server) awaitLoginLocked() {
	if srv.awaiting {
		return
	}
	srv.awaiting = true
	go func() {
		t := time.NewTicker(loginPoll)
		defer t.Stop()
		for range t.C {
			srv.mu.Lock()
			if !srv.needsLogin || srv.state != StateFailed {
				srv.awaiting = false
				srv.mu.Unlock()
				return
			}
			fresh := srv.set.logins.Stamp(srv.name) != srv.loginStamp
			if fresh {
				srv.awaiting = false
			}
			srv.mu.Unlock()
			if fresh {
				srv.kick()
				return
			}
		}
	}()
}

// firstStart is what closes when the server's first start ends, and when
// that start began; nil when it has ended.
func (srv *Server) firstStart() (<-chan struct{}, time.Time) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.firstDone || srv.firstAt.IsZero() {
		return nil, time.Time{}
	}
	return srv.first, srv.firstAt
}

// unavailable says why the server is not ready ("" when it is).
func (srv *Server) unavailable() string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	switch {
	case srv.state == StateReady:
		return ""
	case srv.needsLogin:
		return fmt.Sprintf("%s needs a login (the user must run 'zeroclaw mcp login %s')", srv.name, srv.name)
	case srv.everReady && srv.state == StateFailed:
		return fmt.Sprintf("%s is restarting after a crash (%v)", srv.name, srv.err)
	case srv.everReady:
		return srv.name + " is restarting"
	case srv.state == StateFailed:
		return fmt.Sprintf("%s failed to start (%v)", srv.name, srv.err)
	}
	return srv.name + " is still starting"
}

// notReady is what a call to a server that is not ready answers.
func (srv *Server) notReady() string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	switch {
	case srv.needsLogin:
		return srv.err.Error()
	case srv.state == StateFailed && srv.everReady:
		return fmt.Sprintf("MCP server %s is restarting after a crash (%v); try again shortly", srv.name, srv.err)
	case srv.state == StateFailed:
		return fmt.Sprintf("MCP server %s failed to start: %v", srv.name, srv.err)
	case srv.everReady:
		return fmt.Sprintf("MCP server %s is restarting; try again shortly", srv.name)
	}
	return fmt.Sprintf("MCP server %s is still starting; try again shortly", srv.name)
}

func (srv *Server) status() Status {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	st := Status{Name: srv.name, State: srv.state, Tools: len(srv.list), ProtocolVersion: srv.version}
	if srv.err != nil {
		st.Error = srv.err.Error()
	}
	if srv.needsLogin {
		st.Auth = AuthLoginRequired
	}
	for _, name := range srv.hidden {
		st.Hidden = append(st.Hidden, protocol.MCPHiddenTool{Name: name, Why: needsTasksWhy})
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
	// The start is the server's, not the turn's that happened to need
	// it (other sessions share the server): only a stop cancels it.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv.state, srv.starting, srv.cancelStart = StateStarting, make(chan struct{}), cancel
	done := srv.starting
	srv.mu.Unlock()
	cs, list, watch, login, proc, err := srv.connect(sctx)
	srv.mu.Lock()
	stopped := srv.state != StateStarting
	srv.mu.Unlock()
	why := ""
	switch {
	case err != nil && stopped:
		proc.kill()
	case err != nil:
		why = proc.why() // how it exited, if it did, and its stderr
		proc.kill()      // it never served: no grace
	case stopped:
		cs.Close() // stopped while it started: what started goes too
	}
	srv.mu.Lock()
	defer close(done)
	defer srv.mu.Unlock()
	if !srv.firstDone {
		defer func() { srv.firstDone = true; close(srv.first) }()
	}
	if stopped {
		return
	}
	if err != nil && login != nil && login.NeedsLogin() != nil {
		// Refused for want of a login: no backoff, no retry, until the
		// user logs in.
		srv.failLocked(login.NeedsLogin())
		srv.needsLogin, srv.loginStamp = true, srv.set.logins.Stamp(srv.name)
		srv.awaitLoginLocked()
		return
	}
	if err != nil {
		srv.failLocked(fmt.Errorf("start: %w%s", err, why))
		return
	}
	srv.watch, srv.login = watch, login
	if ir := cs.InitializeResult(); ir != nil {
		srv.version = ir.ProtocolVersion
	}
	srv.state, srv.err, srv.cs, srv.list, srv.failures = StateReady, nil, cs, srv.wrap(list), 0
	srv.known, srv.everReady = srv.list, true
	srv.set.log.Info("mcp server ready", "server", srv.name, "tools", len(list))
	srv.set.changed()
	go func() {
		err := cs.Wait()
		// Ended (a crash, a lost connection): what the session still
		// holds goes too (the SDK's subscriptions/listen waiter would
		// wait for ever: found by goleak).
		cs.Close()
		srv.mu.Lock()
		current := srv.cs == cs // not a stop or a later session
		srv.mu.Unlock()
		if !current {
			return
		}
		why := proc.why() // after the exit, when it exited
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.cs == cs {
			if err == nil {
				err = errors.New("the connection ended")
			}
			srv.failLocked(fmt.Errorf("stopped: %w%s", err, why))
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

// elicit serves the server's elicitation/create: the question goes to
// the user of the session whose call is in flight (the latest, when
// several are), as the daemon's own questions do; with none, or a
// client that cannot answer, it is declined at once. A form goes out
// with its schema as the server wrote it (fields in its order, from the
// watcher), and an accepted answer is checked against it and completed
// (values typed as the schema says, defaults filled) before it is sent.
func (srv *Server) elicit(ctx context.Context, req *mcp.ElicitRequest, watch *wireWatch) (*mcp.ElicitResult, error) {
	env := srv.caller(func(e *tool.Env) bool { return e.Elicit != nil })
	if env == nil {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	p := req.Params
	e := tool.Elicitation{Message: fmt.Sprintf("%s (MCP server %s)", p.Message, srv.name)}
	var f *form.Form
	if p.Mode == "url" || (p.Mode == "" && p.URL != "") {
		// Only a web page: a javascript: or file: URL is not something
		// to send a person to.
		if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		e.URL, e.ID = p.URL, p.ElicitationID
	} else {
		schema := watch.schema(p.Message)
		if schema == nil {
			var err error
			if schema, err = json.Marshal(p.RequestedSchema); err != nil || string(schema) == "null" {
				schema = []byte(`{"type":"object","properties":{}}`)
			}
		}
		var err error
		if f, err = form.Parse(schema); err != nil {
			srv.set.log.Warn("mcp server asked with a form zeroclaw cannot read", "server", srv.name, "err", err)
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		e.Schema = schema
	}
	ans, err := env.Elicit(ctx, e)
	if err != nil {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	res := &mcp.ElicitResult{Action: ans.Action}
	if ans.Action == "accept" && f != nil {
		var content map[string]any
		if len(ans.Content) > 0 {
			if err := json.Unmarshal(ans.Content, &content); err != nil {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
		}
		if res.Content, err = f.Complete(content); err != nil {
			srv.set.log.Warn("an answer to an mcp server's form did not fit it", "server", srv.name, "err", err)
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
	}
	return res, nil
}

// sample serves the server's sampling/createMessage: the session whose
// call is in flight asks its own model (after the user approves, unless
// the server is trusted), within the request's maxTokens; with no call
// in flight it is refused.
func (srv *Server) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	env := srv.caller(func(e *tool.Env) bool { return e.Sample != nil })
	if env == nil {
		return nil, errors.New("no session is calling this server: a model call needs one to approve and pay for it")
	}
	p := req.Params
	sr := tool.SampleRequest{From: "MCP server " + srv.name, System: p.SystemPrompt, MaxTokens: int(p.MaxTokens), Trusted: srv.cfg.Trust}
	for _, m := range p.Messages {
		text := ""
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			text = c.Text
		case nil:
		default:
			return nil, fmt.Errorf("sampling: only text messages are supported, not %T", c)
		}
		sr.Messages = append(sr.Messages, tool.SampleMessage{Role: string(m.Role), Text: text})
	}
	res, err := env.Sample(ctx, sr)
	if err != nil {
		return nil, err
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: res.StopReason}, nil
}

// Prompt expands a server's prompt, used as a slash command:
// "/mcp__SERVER__PROMPT args" (the name as ToolName makes it). args are
// name=value words, or values in the order the prompt declares its
// arguments. ok is false when no ready server has such a prompt; the
// text is the prompt's messages.
func (s *Set) Prompt(ctx context.Context, command, args string) (text string, ok bool, err error) {
	if s.Empty() {
		return "", false, nil
	}
	s.settle(ctx) // servers still in their first start: waited for as a turn does
	for _, srv := range s.servers {
		cs := srv.session()
		if cs == nil || !strings.HasPrefix(command, ToolName(srv.name, "")) {
			continue
		}
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				break // a server without prompts
			}
			if ToolName(srv.name, p.Name) != command {
				continue
			}
			values, err := promptArgs(p, args)
			if err != nil {
				return "", true, err
			}
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: values})
			if err != nil {
				return "", true, fmt.Errorf("MCP server %s: prompt %s: %w", srv.name, p.Name, err)
			}
			var parts []string
			for _, m := range res.Messages {
				t := ""
				switch c := m.Content.(type) {
				case *mcp.TextContent:
					t = c.Text
				case *mcp.EmbeddedResource:
					if c.Resource != nil {
						t = fmt.Sprintf("[Resource: %s]\n%s", c.Resource.URI, c.Resource.Text)
					}
				default:
					continue
				}
				if m.Role == "assistant" {
					t = "(assistant) " + t
				}
				parts = append(parts, t)
			}
			return strings.Join(parts, "\n\n"), true, nil
		}
	}
	return "", false, nil
}

// Offers lists the prompts and resources of the set's ready servers (at
// most 200 of each per server).
func (s *Set) Offers(ctx context.Context) (prompts []protocol.MCPPrompt, resources []protocol.MCPResource) {
	if s.Empty() {
		return nil, nil
	}
	s.settle(ctx) // servers still in their first start: waited for as a turn does
	for _, srv := range s.servers {
		cs := srv.session()
		if cs == nil {
			continue
		}
		n := 0
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil || n == 200 {
				break
			}
			n++
			mp := protocol.MCPPrompt{Command: "/" + ToolName(srv.name, p.Name), Server: srv.name, Name: p.Name, Description: p.Description}
			for _, a := range p.Arguments {
				mp.Arguments = append(mp.Arguments, protocol.MCPPromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
			}
			prompts = append(prompts, mp)
		}
		n = 0
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil || n == 200 {
				break
			}
			n++
			resources = append(resources, protocol.MCPResource{Server: srv.name, URI: r.URI, Name: r.Name, MimeType: r.MIMEType})
		}
	}
	return prompts, resources
}

// ReadResource reads a resource of the server named server (ok false: the
// set has no such server): its text, or its bytes and type.
func (s *Set) ReadResource(ctx context.Context, server, uri string) (text string, blob []byte, mime string, ok bool, err error) {
	if s.Empty() {
		return "", nil, "", false, nil
	}
	for _, srv := range s.servers {
		if srv.name != server {
			continue
		}
		s.settle(ctx) // a server still in its first start: waited for as a turn does
		cs := srv.session()
		if cs == nil {
			return "", nil, "", true, errors.New(srv.notReady())
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", nil, "", true, fmt.Errorf("MCP server %s: reading %s: %w", server, uri, err)
		}
		if len(res.Contents) == 0 {
			return "", nil, "", true, fmt.Errorf("MCP server %s: %s is empty", server, uri)
		}
		c := res.Contents[0]
		if c.Blob != nil {
			return "", c.Blob, c.MIMEType, true, nil
		}
		return c.Text, nil, c.MIMEType, true, nil
	}
	return "", nil, "", false, nil
}

// promptArgs reads a prompt's arguments from words: name=value for a
// declared name, else the next declared argument in order.
func promptArgs(p *mcp.Prompt, args string) (map[string]string, error) {
	values := map[string]string{}
	declared := map[string]bool{}
	for _, a := range p.Arguments {
		declared[a.Name] = true
	}
	next := 0
	for _, w := range strings.Fields(args) {
		if k, v, ok := strings.Cut(w, "="); ok && declared[k] {
			values[k] = v
			continue
		}
		for next < len(p.Arguments) && values[p.Arguments[next].Name] != "" {
			next++
		}
		if next >= len(p.Arguments) {
			return nil, fmt.Errorf("prompt %s takes %d argument(s); %q is one too many", p.Name, len(p.Arguments), w)
		}
		values[p.Arguments[next].Name] = w
		next++
	}
	for _, a := range p.Arguments {
		if a.Required && values[a.Name] == "" {
			return nil, fmt.Errorf("prompt %s needs %s (name=value, or in order: %s)", p.Name, a.Name, argNames(p))
		}
	}
	return values, nil
}

func argNames(p *mcp.Prompt) string {
	var n []string
	for _, a := range p.Arguments {
		n = append(n, a.Name)
	}
	return strings.Join(n, " ")
}

// onProgress passes a server's notifications/progress to the call whose
// token it names.
func (srv *Server) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	srv.mu.Lock()
	f := srv.progress[fmt.Sprint(p.ProgressToken)]
	srv.mu.Unlock()
	if f != nil {
		f(p.Progress, p.Total, p.Message)
	}
}

// loginLost is, when the server refused cs's calls for want of a login
// (its token revoked, its renewal refused), why: the server is then
// failed, wanting a login, as a start refused so is; nil otherwise.
func (srv *Server) loginLost(cs *mcp.ClientSession) error {
	srv.mu.Lock()
	if srv.cs != cs || srv.login == nil || srv.login.NeedsLogin() == nil {
		srv.mu.Unlock()
		return nil
	}
	why := srv.login.NeedsLogin()
	srv.failLocked(why)
	srv.needsLogin, srv.loginStamp = true, srv.set.logins.Stamp(srv.name)
	srv.awaitLoginLocked()
	srv.mu.Unlock()
	cs.Close()
	return why
}

// progressSink passes a call's progress on until the call ends.
type progressSink struct {
	mu   sync.Mutex
	f    func(progress, total float64, message string)
	done bool
}

func (p *progressSink) say(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.f(progress, total, message)
	}
}

// close ends it, once any progress being said has been.
func (p *progressSink) close() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// relist reads the server's tools again (tools/list_changed): the next
// turn offers the new list.
func (srv *Server) relist(ctx context.Context) {
	cs := srv.session()
	if cs == nil {
		return
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StartTimeout)
	defer cancel()
	var list []*mcp.Tool
	for tl, err := range cs.Tools(lctx, nil) {
		if err != nil {
			srv.set.log.Warn("mcp server: listing its tools again", "server", srv.name, "err", err)
			return
		}
		list = append(list, tl)
	}
	srv.mu.Lock()
	if srv.cs == cs {
		srv.list = srv.wrap(list)
		srv.known = srv.list
		srv.set.log.Info("mcp server's tools changed", "server", srv.name, "tools", len(list))
	}
	srv.mu.Unlock()
	srv.set.changed()
	if relisted != nil {
		relisted(srv.name)
	}
}

// relisted, when set (tests), is told each time a server's tools were
// listed again.
var relisted func(server string)

// caller is the latest call in flight whose env can, nil when none.
func (srv *Server) caller(can func(*tool.Env) bool) *tool.Env {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for i := len(srv.callers) - 1; i >= 0; i-- {
		if can(srv.callers[i]) {
			return srv.callers[i]
		}
	}
	return nil
}

// calling registers a call in flight (for the server's questions); the
// func it returns unregisters it.
func (srv *Server) calling(env *tool.Env) func() {
	srv.mu.Lock()
	srv.callers = append(srv.callers, env)
	srv.mu.Unlock()
	return func() {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if i := slices.Index(srv.callers, env); i >= 0 {
			srv.callers = slices.Delete(srv.callers, i, i+1)
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.b), "\uFFFD"))
}

// process is a stdio server's subprocess: its pipes made here (so its
// exit is waited for at once, and its status kept, without cutting
// what it wrote before), closed the MCP way (stdin first, then SIGTERM,
// then SIGKILL).
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tail
	// skipped is what it printed on stdout that was not JSON-RPC
	// (jsonOnly), for the error of a start that failed.
	skipped *jsonOnly
	exited  chan struct{}
	err     error // its Wait's, once exited is closed
	once    sync.Once
	endTree func() // ends what the server left (Windows: its Job Object)
}

func startProcess(cmd *exec.Cmd, stderr *tail) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	inR.Close()
	outW.Close()
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: stderr, exited: make(chan struct{}), endTree: joinJob(cmd)}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close ends the process: stdin closed, then SIGTERM after 2 s, then
// SIGKILL.
func (p *process) Close() error {
	p.end(nil, syscall.SIGTERM, os.Kill)
	return nil
}

// kill ends a process that never served: SIGTERM at once, SIGKILL after
// 2 s.
func (p *process) kill() { p.end(syscall.SIGTERM, os.Kill) }

// end closes stdin and sends each signal in turn (nil: none), waiting up
// to 2 s after each for the exit; once only.
func (p *process) end(sigs ...os.Signal) {
	if p == nil {
		return
	}
	p.once.Do(func() {
		p.stdin.Close()
		defer p.stdout.Close()
		defer p.endTree()
		for _, sig := range sigs {
			if sig != nil {
				signalGroup(p.cmd.Process, sig)
			}
			select {
			case <-p.exited:
				return
			case <-time.After(2 * time.Second):
			}
		}
	})
}

// why says how the process ended and what it said on stderr last, for an
// error (it waits a moment for the exit; "" for an HTTP server).
func (p *process) why() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	select {
	case <-p.exited:
		var ee *exec.ExitError
		switch {
		case errors.As(p.err, &ee) && ee.Exited():
			fmt.Fprintf(&b, "; it exited with status %d", ee.ExitCode())
		case errors.As(p.err, &ee):
			fmt.Fprintf(&b, "; it was ended by %s", ee.ProcessState)
		case p.err == nil:
			b.WriteString("; it exited with status 0")
		}
	case <-time.After(exitWait):
	}
	if s := p.stderr.String(); s != "" {
		fmt.Fprintf(&b, "; its stderr ends: %s", s)
	}
	if s := p.skipped.first(); s != "" {
		fmt.Fprintf(&b, "; it printed on stdout what is not JSON-RPC: %q", s)
	}
	return b.String()
}

func (srv *Server) connect(ctx context.Context) (*mcp.ClientSession, []*mcp.Tool, *wireWatch, *mcpauth.Handler, *process, error) {
	timeout := StartTimeout
	if srv.cfg.StartTimeoutSecs > 0 {
		timeout = time.Duration(srv.cfg.StartTimeoutSecs) * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var t mcp.Transport
	var proc *process
	watch := &wireWatch{}
	var login *mcpauth.Handler
	if srv.cfg.URL != "" {
		st := &mcp.StreamableClientTransport{Endpoint: srv.cfg.URL, MaxRetries: 2,
			HTTPClient: &http.Client{Transport: headers{srv.cfg.Headers, watchBodies{watch, http.DefaultTransport}}}}
		if srv.set.logins != nil {
			login = srv.set.logins.Handler(srv.name, srv.cfg.URL)
			st.OAuthHandler = login
		}
		t = st
	} else {
		argv := append([]string{srv.cfg.Command}, srv.cfg.Args...)
		if srv.set.wrap != nil {
			var err error
			if argv, err = srv.set.wrap(argv); err != nil {
				return nil, nil, nil, nil, nil, err
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
		srv.mu.Lock()
		srv.stderr = &tail{max: stderrKeep}
		cmd.Stderr = srv.stderr
		srv.mu.Unlock()
		var err error
		if proc, err = startProcess(cmd, srv.stderr); err != nil {
			return nil, nil, nil, nil, nil, err
		}
		name, log := srv.name, srv.set.log
		stdout := newJSONOnly(proc.stdout, func(line string) {
			log.Warn("mcp server printed a line that is not JSON-RPC on stdout; skipped", "server", name, "line", line)
		})
		proc.skipped = stdout
		t = &mcp.IOTransport{Reader: watch.reader(stdout), Writer: proc}
	}
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
		Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
	if len(srv.set.roots) > 0 {
		caps.RootsV2 = &mcp.RootCapabilities{} // declared only when there are roots to say
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "zeroclaw", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return srv.elicit(ctx, req, watch)
		},
		CreateMessageHandler:        srv.sample,
		ProgressNotificationHandler: srv.onProgress,
		ToolListChangedHandler:      func(ctx context.Context, _ *mcp.ToolListChangedRequest) { srv.relist(ctx) },
		PromptListChangedHandler:    func(context.Context, *mcp.PromptListChangedRequest) { srv.set.changed() },
		ResourceListChangedHandler:  func(context.Context, *mcp.ResourceListChangedRequest) { srv.set.changed() },
		Capabilities:                caps,
	})
	for _, dir := range srv.set.roots {
		c.AddRoots(&mcp.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String(), Name: filepath.Base(dir)})
	}
	cs, err := c.Connect(sctx, t, nil)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			err = errors.New("stopped while it started")
		case sctx.Err() != nil:
			err = fmt.Errorf("no answer within %s", timeout)
		}
		return nil, nil, nil, login, proc, err
	}
	var list []*mcp.Tool
	for tl, err := range cs.Tools(sctx, nil) {
		if err != nil {
			cs.Close()
			return nil, nil, nil, login, proc, fmt.Errorf("listing its tools: %w", err)
		}
		list = append(list, tl)
	}
	return cs, list, watch, login, proc, nil
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

// stop stops the server, and a start in progress: it returns once its
// process is gone.
func (srv *Server) stop() {
	srv.mu.Lock()
	cs := srv.cs
	var started chan struct{}
	if srv.state == StateStarting {
		started = srv.starting
		srv.cancelStart()
	}
	srv.cs, srv.list, srv.known, srv.state = nil, nil, nil, StateStopped
	srv.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	if started != nil {
		<-started
	}
}

// session is the live connection, nil when the server is not ready.
func (srv *Server) session() *mcp.ClientSession {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.cs
}

func (srv *Server) tools() []tool.Tool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.state == StateReady {
		return srv.list
	}
	return srv.known
}

// wrap makes the server's tools what the agent calls, less those that
// need tasks (hidden); srv.mu is held.
func (srv *Server) wrap(list []*mcp.Tool) []tool.Tool {
	out := make([]tool.Tool, 0, len(list))
	srv.hidden = nil
	for _, t := range list {
		if srv.watch.needsTasks(t.Name) {
			srv.hidden = append(srv.hidden, t.Name)
			continue
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || len(schema) == 0 || string(schema) == "null" {
			schema = []byte(`{"type":"object"}`)
		}
		asks := !srv.cfg.Trust && !slices.Contains(srv.cfg.AutoApprove, t.Name)
		out = append(out, &mcpTool{srv: srv, name: ToolName(srv.name, t.Name), remote: t.Name,
			description: t.Description, schema: schema, asks: asks, readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
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
	readOnly                  bool // the server annotates it readOnlyHint
}

// ReadOnly says the server annotates the tool readOnlyHint (plan mode
// lets such a tool run; a hint, so it still asks as any server's tool).
func (t *mcpTool) ReadOnly() bool { return t.readOnly }

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
		// Not ready: say what is happening now, never wait for it.
		t.srv.kick()
		metrics.MCPCall(t.srv.name, "not_ready")
		return tool.Result{Output: t.srv.notReady(), IsError: true}
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
	params := &mcp.CallToolParams{Name: t.remote, Arguments: input}
	if env != nil {
		defer t.srv.calling(env)()
		if env.Progress != nil {
			defer t.srv.progressOf(params, env.Progress)()
		}
	}
	res, err := cs.CallTool(cctx, params)
	if err != nil {
		return t.unanswered(ctx, cctx, cs, err, timeout)
	}
	if res.IsError {
		metrics.MCPCall(t.srv.name, "error")
	} else {
		metrics.MCPCall(t.srv.name, "ok")
	}
	return callResult(res)
}

// progressOf gives the call a progress token of its own, so that the
// server's progress for it reaches f; the function returned ends that,
// once the call has.
func (srv *Server) progressOf(params *mcp.CallToolParams, f func(progress, total float64, message string)) (end func()) {
	srv.mu.Lock()
	srv.tokens++
	tok := fmt.Sprintf("zc-%d", srv.tokens)
	if srv.progress == nil {
		srv.progress = map[string]func(float64, float64, string){}
	}
	// The SDK hands notifications over in goroutines of their own: one
	// may come after the call's answer, and is dropped then, never said
	// after the call's end.
	sink := &progressSink{f: f}
	srv.progress[tok] = sink.say
	srv.mu.Unlock()
	params.SetProgressToken(tok)
	return func() {
		srv.mu.Lock()
		delete(srv.progress, tok)
		srv.mu.Unlock()
		sink.close()
	}
}

// unanswered is the result of a call that failed (err) before the
// server answered it: cancelled by the turn, past its timeout, the
// server's login lost, or the error itself.
func (t *mcpTool) unanswered(ctx, cctx context.Context, cs *mcp.ClientSession, err error, timeout time.Duration) tool.Result {
	switch {
	case ctx.Err() != nil:
		metrics.MCPCall(t.srv.name, "cancelled")
		return tool.Result{Output: fmt.Sprintf("%s: cancelled", t.name), IsError: true}
	case cctx.Err() != nil:
		metrics.MCPCall(t.srv.name, "timeout")
		return tool.Result{Output: fmt.Sprintf("MCP server %s: %s gave no answer within %s (the call was cancelled)", t.srv.name, t.remote, timeout), IsError: true}
	}
	metrics.MCPCall(t.srv.name, "error")
	if why := t.srv.loginLost(cs); why != nil {
		return tool.Result{Output: why.Error(), IsError: true}
	}
	return tool.Result{Output: fmt.Sprintf("MCP server %s: %s: %v", t.srv.name, t.remote, err), IsError: true}
}

// callResult is the server's answer as the model reads it: its content
// blocks as text, apart and cut at outputMax, the images it may see, or
// the structured content when there is no other.
func callResult(res *mcp.CallToolResult) tool.Result {
	var out callOutput
	for i, c := range res.Content {
		if i > 0 {
			out.b.WriteString("\n\n") // several blocks: kept apart
		}
		out.block(c)
		if out.b.Len() > outputMax {
			break
		}
	}
	text := out.b.String()
	if len(text) > outputMax {
		text = text[:outputMax] + "\n[... cut]"
	}
	if text == "" && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		text = string(raw)
	}
	return tool.Result{Output: text, IsError: res.IsError, Images: out.images}
}

// callOutput is a call's answer being written out: its text, and the
// images that go to the model with it.
type callOutput struct {
	b          strings.Builder
	images     []tool.Image
	imageBytes int
}

// block writes one content block: text as it is, anything else as a line
// that says what it is.
func (o *callOutput) block(c mcp.Content) {
	switch c := c.(type) {
	case *mcp.TextContent:
		o.b.WriteString(c.Text)
	case *mcp.ImageContent:
		o.image(c)
	case *mcp.AudioContent:
		fmt.Fprintf(&o.b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.EmbeddedResource:
		switch r := c.Resource; {
		case r == nil:
		case r.Blob != nil:
			fmt.Fprintf(&o.b, "[resource %s: %s, %d bytes]", r.URI, cmp.Or(r.MIMEType, "application/octet-stream"), len(r.Blob))
		default:
			fmt.Fprintf(&o.b, "[resource %s]\n%s", r.URI, r.Text)
		}
	case *mcp.ResourceLink:
		fmt.Fprintf(&o.b, "[resource link %s] %s", c.URI, c.Name)
	default:
		raw, _ := json.Marshal(c)
		o.b.Write(raw)
	}
}

// image says an image block; the image itself goes to the model too, in
// the formats models take, within a bound.
func (o *callOutput) image(c *mcp.ImageContent) {
	fmt.Fprintf(&o.b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
	switch {
	case seeable[c.MIMEType] && o.imageBytes+len(c.Data) <= imagesMax:
		o.images = append(o.images, tool.Image{MimeType: c.MIMEType, Data: c.Data})
		o.imageBytes += len(c.Data)
	case seeable[c.MIMEType]:
		o.b.WriteString(" (not shown to the model: past the 5 MiB of images a call may give it)")
	default:
		o.b.WriteString(" (not shown to the model: not a format models take)")
	}
}

// seeable are the image formats models take.
var seeable = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// imagesMax bounds the images of one call that reach the model.
const imagesMax = 5 << 20

// Sets are the MCP servers a session asks, in order: its own, then the
// shared ones (a nil Set has none).
type Sets []*Set

// Prompt is the first set's that has the prompt (see Set.Prompt).
func (ss Sets) Prompt(ctx context.Context, command, args string) (text string, ok bool, err error) {
	for _, s := range ss {
		if text, ok, err = s.Prompt(ctx, command, args); ok || err != nil {
			return text, ok, err
		}
	}
	return "", false, nil
}

// Offers are every set's prompts and resources, in order (empty lists,
// never nil).
func (ss Sets) Offers(ctx context.Context) (prompts []protocol.MCPPrompt, resources []protocol.MCPResource) {
	prompts, resources = []protocol.MCPPrompt{}, []protocol.MCPResource{}
	for _, s := range ss {
		p, r := s.Offers(ctx)
		prompts, resources = append(prompts, p...), append(resources, r...)
	}
	return prompts, resources
}

// ReadResource reads the resource of the first set that has server (ok
// false: none has).
func (ss Sets) ReadResource(ctx context.Context, server, uri string) (text string, blob []byte, mime string, ok bool, err error) {
	for _, s := range ss {
		if text, blob, mime, ok, err = s.ReadResource(ctx, server, uri); ok {
			return text, blob, mime, ok, err
		}
	}
	return "", nil, "", false, nil
}
