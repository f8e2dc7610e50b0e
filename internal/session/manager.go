// Package session keeps the daemon's sessions: creating and resuming them,
// their prompt queues and turns, their attached clients with bounded
// outgoing queues, approvals and questions, and their persistence. It
// knows nothing of JSON-RPC framing; a client connection is a Conn.
package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agentkit"
	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/eventlog"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/hook"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/permission"

	"github.com/zeroclaw/zeroclaw/internal/attach"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/mcpauth"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/sessionlist"
	"github.com/zeroclaw/zeroclaw/internal/spend"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
	"github.com/zeroclaw/zeroclaw/internal/turnslot"
)

// Errors the methods return; the wire layer maps them to codes.
var (
	ErrNotFound  = archive.ErrNotFound
	ErrLimit     = errors.New("session limit reached")
	ErrBusy      = turnslot.ErrBusy // one with the turn slot's (a full queue, a turn mismatch)
	ErrForbidden = errors.New("not attached to this session")
)

// Manager holds the live sessions.
type Manager struct {
	// cur is the configuration in force and the agents it makes,
	// swapped whole by Reload.
	cur   atomic.Pointer[agentkit.Kit]
	store *store.Store
	log   *slog.Logger
	ctx   context.Context // cancelled by Shutdown: every turn's parent
	stop  context.CancelFunc

	list *sessionlist.List // the clients following the list of sessions

	mu   sync.Mutex
	live map[string]*Session
	// closing holds the ids being closed, unloaded or deleted; their
	// channel closes when the old session can write nothing more. No id
	// is loaded again before then: one live session per id, always.
	closing map[string]chan struct{}
	arch    *archive.Archive // the stored sessions, read without a live one
	// opening holds the ids being loaded or created (outside mu); their
	// channel closes when the session is live (or failed to be).
	opening map[string]chan struct{}
	// kept are the background processes of closed sessions that run on
	// ([tools] keep_processes_on_close), until the session is open again.
	kept map[string]*background.Table

	spend   *spend.Ledger     // the day's spend, by the configured clock
	cpDir   string            // where each session's checkpoints live ("": nowhere, off)
	procDir string            // where background processes' output files go ("": none)
	perms   *permission.Store // answers for a project (nil: none stored, none offered)
	uploads *attach.Store     // where tools' images are kept
	gate    gate.Func         // decides what every actor may do
	parts   participants      // what takes part in every turn (Join)
	// reviewer is asked about each approval request before the user
	// (nil: nobody).
	reviewer Reviewer
}

// conf is the kit in force: the configuration, and the agents it makes.
func (m *Manager) conf() *agentkit.Kit { return m.cur.Load() }

// Decide asks the one gate whether r's actor may do r's action now (the
// method table's owner-only check asks it too).
func (m *Manager) Decide(r gate.Request) gate.Verdict { return m.gate(r) }

// refused is the gate's refusal as an error (nil when v allows).
func refused(v gate.Verdict) error {
	if v.Decision == gate.Deny {
		return &Refused{Why: v.Why}
	}
	return nil
}

// Refused is an action the gate refused.
type Refused struct{ Why string }

func (e *Refused) Error() string { return "refused: " + e.Why }

// Reload puts cfg in force: new sessions and the next turn of every live
// session use it (a running turn ends on the one it started with).
// Providers are made again; the shared MCP servers are replaced only when
// their settings changed (the old ones stop once running calls end).
func (m *Manager) Reload(cfg *config.Config) {
	old := m.conf()
	next := old.Reload(cfg)
	m.cur.Store(next)
	old.Retire(next)
	m.log.Info("config reloaded", "config", cfg.Source, "generation", next.Gen())
}

// Options configure a Manager.
type Options struct {
	Config *config.Config
	Store  *store.Store
	Getenv func(string) string
	Logger *slog.Logger
	// Environ is the daemon's environment (nil: os.Environ()); commands
	// the agent runs get it without the variables that hold provider keys.
	Environ []string
	// Umask is the umask commands run with ("" leaves the daemon's).
	Umask string
	// Reaper records commands' process groups (nil: not recorded).
	Reaper *tool.Reaper
	// Gateway is the daemon's gateway's URL ("" or nil: none), which
	// web_fetch refuses.
	Gateway func() string
	// Now is the clock the day's spend is kept by (nil: time.Now).
	Now func() time.Time
	// CheckpointDir holds each session's checkpoints ("": none kept).
	CheckpointDir string
	// ProcessDir holds the output files of each session's background
	// processes ("": their output is kept in memory only).
	ProcessDir string
	// Permissions keeps the "always" answers per project (nil: they hold
	// for their session only).
	Permissions *permission.Store
	// MCPLogins keeps the OAuth logins of HTTP MCP servers (nil: none
	// used).
	MCPLogins *mcpauth.Store
	// Uploads keeps the images tools give (as the attachments are kept;
	// nil: a tool's images are left out).
	Uploads *attach.Store
	// Gate decides what every actor may do (nil: gate.Decide; a test
	// counts what reaches it).
	Gate gate.Func
	// Reviewer is asked about each approval request before the user
	// (nil: the user is asked, as with no [approvals] reviewer).
	Reviewer Reviewer
	// Private are the daemon's own paths (config and data directories,
	// socket): no command, hook or MCP server reaches them.
	Private []string
}

// NewManager returns a Manager; sessions whose turn was running when the
// last daemon died are marked interrupted.
func NewManager(o Options) (*Manager, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ids, err := o.Store.MarkInterrupted()
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		log.Warn("sessions interrupted by the previous daemon's end", "sessions", ids)
	}
	ctx, stop := context.WithCancel(context.Background())
	m := &Manager{store: o.Store, log: log, ctx: ctx, stop: stop,
		spend: spend.New(o.Store, o.Now, log), cpDir: o.CheckpointDir, procDir: o.ProcessDir, perms: o.Permissions, uploads: o.Uploads, reviewer: o.Reviewer,
		live: map[string]*Session{}, closing: map[string]chan struct{}{}, opening: map[string]chan struct{}{}}
	if m.gate = o.Gate; m.gate == nil {
		m.gate = gate.Decide
	}
	m.arch = &archive.Archive{Store: o.Store, CheckpointDir: o.CheckpointDir, Live: m.liveState, Changed: func(id string) { m.list.Changed(id) }, Log: log,
		AgentRisk: func(alias string) string { return m.conf().Config().Agents[alias].Risk }}
	m.list = sessionlist.New(m.arch, log)
	// The configured MCP servers start now, in the background: the
	// first turns find them ready, or go on without them.
	m.cur.Store(agentkit.New(o.Config, agentkit.Options{Getenv: o.Getenv, Environ: o.Environ, Umask: o.Umask, Reaper: o.Reaper,
		Gateway: o.Gateway, Logins: o.MCPLogins, Log: log, MCPChanged: func() { m.mcpChanged("") }, Private: o.Private}))
	return m, nil
}

// mcpChanged tells the clients attached to session id (every live
// session when id is "": a shared server) that what its MCP servers offer
// may have changed.
func (m *Manager) mcpChanged(id string) {
	for _, s := range m.liveSessions() {
		if id != "" && s.id != id {
			continue
		}
		for _, c := range s.clients() {
			c.notify(protocol.MethodSessionMCPChanged, protocol.SessionRef{SessionID: s.id})
		}
	}
}

// liveSessions are the live sessions now, by id.
func (m *Manager) liveSessions() []*Session {
	m.mu.Lock()
	live := make([]*Session, 0, len(m.live))
	for _, s := range m.live {
		live = append(live, s)
	}
	m.mu.Unlock()
	slices.SortFunc(live, func(a, b *Session) int { return strings.Compare(a.id, b.id) })
	return live
}

// MCPStatus describes the configured MCP servers.
func (m *Manager) MCPStatus() []mcptools.Status {
	out := m.conf().MCP().Status()
	for _, s := range m.liveSessions() {
		s.mu.Lock()
		own := s.mcp
		s.mu.Unlock()
		for _, st := range own.Status() {
			st.PerSession, st.SessionID = true, s.id
			out = append(out, st)
		}
	}
	return out
}

// Shutdown cancels every running turn, waits for them to end (bounded by
// ctx) and flushes the store.
func (m *Manager) Shutdown(ctx context.Context) {
	live := m.liveSessions()
	// Queued prompts are answered before the turns are cancelled, so
	// none starts.
	for _, s := range live {
		s.drain()
	}
	m.stop()
	m.mu.Lock()
	var waits []chan struct{}
	for _, s := range m.live {
		if running, done := s.t.State(); running && done != nil {
			waits = append(waits, done)
		}
	}
	m.mu.Unlock()
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
		}
	}
	// Turns that did not stop in time write nothing more.
	m.mu.Lock()
	var own []*mcptools.Set
	var procs []*background.Table
	for _, s := range m.live {
		s.events.Fence()
		s.mu.Lock()
		if s.mcp != nil {
			own = append(own, s.mcp)
		}
		if s.procs != nil {
			procs = append(procs, s.procs)
		}
		s.mu.Unlock()
	}
	for id, t := range m.kept {
		procs = append(procs, t)
		delete(m.kept, id)
	}
	m.mu.Unlock()
	// Background processes end with the daemon.
	var pwg sync.WaitGroup
	for _, t := range procs {
		pwg.Go(func() { t.Close(syscall.SIGTERM, tool.KillGrace) })
	}
	pwg.Wait()
	m.store.Sync()
	m.list.Stop()
	// Every session's servers and the shared ones stop at once.
	var wg sync.WaitGroup
	for _, set := range append(own, m.conf().MCP()) {
		wg.Go(set.Close)
	}
	wg.Wait()
}

// Summaries lists the live sessions for status.
func (m *Manager) Summaries() []protocol.SessionSummary {
	out := []protocol.SessionSummary{}
	for _, s := range m.liveSessions() { // by id
		out = append(out, s.summary())
	}
	return out
}

// closeWaitMax bounds how long session/new waits for a closing session
// of the same id before answering busy.
var closeWaitMax = 15 * time.Second

// New creates, resumes or attaches to a session for c (session/new).
func (m *Manager) New(ctx context.Context, c *Client, p protocol.SessionNewParams) (*protocol.SessionNewResult, error) {
	if p.Mode == "" {
		p.Mode = "chat"
	}
	if p.Mode != "chat" && p.Mode != "code" {
		return nil, &protocol.ParamsError{Field: "mode", Reason: fmt.Sprintf("%q: must be chat or code", p.Mode)}
	}
	if p.SessionID != "" && !protocol.ValidID(p.SessionID) {
		return nil, &protocol.ParamsError{Field: "sessionId", Reason: "must be 1-128 characters of [A-Za-z0-9._-]"}
	}
	if p.Risk != "" && !slices.Contains(protocol.RiskIDs(), p.Risk) {
		return nil, &protocol.ParamsError{Field: "risk", Reason: fmt.Sprintf("%q: must be one of %s", p.Risk, strings.Join(protocol.RiskIDs(), ", "))}
	}
	if p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			return nil, &protocol.ParamsError{Field: "cwd", Reason: fmt.Sprintf("%q is not an absolute path", p.Cwd)}
		}
		fi, err := os.Stat(p.Cwd)
		if err != nil || !fi.IsDir() {
			return nil, &protocol.ParamsError{Field: "cwd", Reason: fmt.Sprintf("%q is not an existing directory", p.Cwd)}
		}
		p.Cwd = filepath.Clean(p.Cwd)
	}
	if p.AgentAlias == "" {
		p.AgentAlias = "default"
	}
	if err := m.conf().CheckAgent(p.AgentAlias); err != nil {
		return nil, err
	}
	if p.SessionID != "" {
		if err := m.awaitClosed(ctx, p.SessionID); err != nil {
			return nil, err
		}
	}
	servers := map[string]config.MCPServer{}
	for i, sp := range p.MCPServers {
		cfg := config.MCPServer{Command: sp.Command, Args: sp.Args, Env: sp.Env, URL: sp.URL, Headers: sp.Headers}
		if !protocol.ValidID(sp.Name) {
			return nil, &protocol.ParamsError{Field: fmt.Sprintf("mcpServers[%d].name", i), Reason: "must be 1-128 characters of [A-Za-z0-9._-]"}
		}
		if err := cfg.Check(sp.Name); err != nil {
			return nil, &protocol.ParamsError{Field: fmt.Sprintf("mcpServers[%d]", i), Reason: err.Error()}
		}
		servers[sp.Name] = cfg
	}
	var evicted []string
	if !p.KeepSiblings {
		evicted = m.evict(c, p.Mode, p.SessionID)
	}
	for {
		o, victim, err := m.open(ctx, c, p)
		if victim == nil {
			if err != nil {
				return nil, err
			}
			// The session's own servers: the editor's, and the
			// configured ones that run per session.
			for n, sc := range m.conf().Config().MCP.PerSessionServers() {
				if _, ok := servers[n]; !ok {
					servers[n] = sc
				}
			}
			if len(servers) > 0 {
				o.s.addMCP(servers)
			}
			m.describe(o)
			o.res.Evicted = protocol.List(evicted)
			return o.res, nil
		}
		// At the limit: unload the least recently used idle session
		// nobody is attached to (its history stays) and try again.
		m.log.Info("session unloaded to make room", "sessionId", victim.id)
		m.shut(victim.id, victim, false)
	}
}

// awaitClosed waits until id is not being closed (bounded).
func (m *Manager) awaitClosed(ctx context.Context, id string) error {
	for {
		m.mu.Lock()
		ch := m.closing[id]
		m.mu.Unlock()
		if ch == nil {
			return nil
		}
		t := time.NewTimer(closeWaitMax)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			return fmt.Errorf("%w: session %s is still closing; try again", ErrBusy, id)
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// open attaches c to the live session p names, or loads or creates it.
// At the limit it returns a session to unload first (and no result).
// What is slow (the store's record, the instructions read from the
// directory, a new session's row) is done outside m.mu, with the id
// reserved meanwhile (opening): the session is only inserted under it.
func (m *Manager) open(ctx context.Context, c *Client, p protocol.SessionNewParams) (*opened, *Session, error) {
	fresh := p.SessionID == "" // a new id: nothing stored has it
	if fresh {
		p.SessionID = protocol.NewID("ses_", 8)
	}
	m.mu.Lock()
	for {
		if m.closing[p.SessionID] != nil {
			m.mu.Unlock()
			return nil, nil, fmt.Errorf("%w: session %s is closing; try again", ErrBusy, p.SessionID)
		}
		if s, live := m.live[p.SessionID]; live {
			defer m.mu.Unlock()
			return m.attachLocked(c, s, true, false, "")
		}
		ch := m.opening[p.SessionID]
		if ch == nil {
			break
		}
		m.mu.Unlock() // another call opens it: attach to what it opens
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		m.mu.Lock()
	}
	if len(m.live)+len(m.opening) >= m.conf().Config().Daemon.MaxSessions {
		defer m.mu.Unlock()
		if v := m.victimLocked(); v != nil {
			m.startClosingLocked(v)
			return nil, v, nil
		}
		return nil, nil, fmt.Errorf("%w: %d live sessions (daemon.max_sessions), each running or attached; close one first", ErrLimit, len(m.live))
	}
	opened := make(chan struct{})
	m.opening[p.SessionID] = opened
	m.mu.Unlock()

	s, rec, err := m.build(ctx, c, p, fresh)

	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.opening, p.SessionID)
	close(opened)
	if err != nil {
		return nil, nil, err
	}
	m.live[s.id] = s
	kept := m.kept[s.id]
	if kept != nil {
		delete(m.kept, s.id)
		s.mu.Lock()
		s.procs = kept
		s.mu.Unlock()
	}
	source := "startup"
	if rec != nil {
		source = "resume"
	}
	o, v, err := m.attachLocked(c, s, rec != nil, rec != nil && rec.State == store.StateInterrupted, source)
	if kept != nil {
		// What they did while it was closed is told now (to the client
		// that opened it too).
		go kept.Reattach(s.processChanged)
	}
	return o, v, err
}

// build loads the stored session p names, or creates it: outside m.mu,
// its id reserved.
func (m *Manager) build(ctx context.Context, c *Client, p protocol.SessionNewParams, fresh bool) (*Session, *store.Session, error) {
	if fresh {
		s, err := m.create(c, p)
		return s, nil, err
	}
	rec, err := m.store.GetSession(ctx, p.SessionID)
	switch {
	case err == nil:
		s, err := m.resume(ctx, rec)
		return s, rec, err
	case !errors.Is(err, store.ErrNotFound):
		return nil, nil, err
	}
	s, err := m.create(c, p)
	return s, nil, err
}

// attachLocked attaches c to s (source: why a session just loaded
// starts, for its SessionStart hooks; "" for one live already); what it
// answers is described outside m.mu (describe).
func (m *Manager) attachLocked(c *Client, s *Session, resumed, interrupted bool, source string) (*opened, *Session, error) {
	if source != "" {
		go s.hook(m.ctx, HookMoment{Event: hook.SessionStart, Source: source})
	}
	last, ok := s.attach(c)
	if !ok {
		return nil, nil, errors.New("client closed")
	}
	return &opened{s: s, res: &protocol.SessionNewResult{SessionID: s.id, LastSeq: last, Resumed: resumed, Interrupted: interrupted}}, nil, nil
}

// opened is a session c was attached to, and what session/new says of it.
type opened struct {
	s   *Session
	res *protocol.SessionNewResult
}

// describe fills in what session/new answers about the session res
// names (its agent may be built again after a reload: not under m.mu).
func (m *Manager) describe(o *opened) {
	s, res := o.s, o.res
	cr := s.settings()
	var queue []protocol.QueueItem
	if s.t.Queued() {
		queue = s.t.Items()
	}
	res.AgentAlias, res.Mode, res.Cwd, res.Instructions = s.alias, s.mode, s.cwd, protocol.List(s.instructions)
	res.Provider, res.Model, res.ProviderURL, res.Risk, res.ContextWindow, res.Reasoning = cr.Provider, cr.Model, cr.URL, cr.Risk, cr.ContextWindow, cr.Reasoning
	res.MessageCount, res.Queue = s.messageCount(), queue
	s.mu.Lock()
	res.Lineage = s.lineage
	s.mu.Unlock()
}

// victimLocked picks the least recently used unloadable session.
func (m *Manager) victimLocked() *Session {
	var v *Session
	var at time.Time
	for _, s := range m.live {
		if !s.unloadable() {
			continue
		}
		t := s.t.Used()
		if v == nil || t.Before(at) {
			v, at = s, t
		}
	}
	return v
}

// startClosingLocked moves s from the live sessions to the closing ones.
func (m *Manager) startClosingLocked(s *Session) {
	delete(m.live, s.id)
	if m.closing[s.id] == nil {
		m.closing[s.id] = make(chan struct{})
	}
	s.t.Close()
}

// shut finishes closing id (already among the closing ones): s, if live,
// is closed and fenced off; with del its stored history is deleted. The
// id may be loaded again once it returns.
func (m *Manager) shut(id string, s *Session, del bool) (deleted bool, err error) {
	if s != nil {
		s.close(!del && m.conf().Config().Tools.KeepProcessesOnClose)
	}
	if del {
		// A closed session's processes that ran on end with it.
		m.mu.Lock()
		t := m.kept[id]
		delete(m.kept, id)
		m.mu.Unlock()
		if t != nil {
			t.Close(syscall.SIGTERM, tool.KillGrace)
			// Their ends, which no session will tell, are counted.
			t.Reattach(func(p *background.Process) { metrics.ProcessEnded(p.Info().State) })
		}
	}
	if del {
		deleted, err = m.store.DeleteSession(id)
		if deleted {
			m.list.Changed(id)
		}
	}
	m.mu.Lock()
	ch := m.closing[id]
	delete(m.closing, id)
	m.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	return deleted, err
}

// evict closes c's other idle live sessions of the same mode.
func (m *Manager) evict(c *Client, mode, keep string) []string {
	m.mu.Lock()
	var victims []*Session
	for id, s := range m.live {
		if id == keep || s.owner != c.ID() || s.mode != mode || !s.idle() {
			continue
		}
		m.startClosingLocked(s)
		victims = append(victims, s)
	}
	m.mu.Unlock()
	var out []string
	for _, s := range victims {
		m.shut(s.id, s, false)
		out = append(out, s.id)
	}
	sort.Strings(out)
	if len(out) > 0 {
		m.log.Info("sessions evicted", "clientId", c.ID(), "sessions", out)
	}
	return out
}

func (m *Manager) newSession(id, alias, mode, cwd, owner string) (*Session, error) {
	k := m.conf()
	a, files, err := k.Build(alias, mode, cwd)
	if err != nil {
		return nil, err
	}
	s := &Session{m: m, id: id, alias: alias, mode: mode, cwd: cwd, project: permission.ProjectDir(cwd), owner: owner, agent: a, agentGen: k.Gen(), instructions: files}
	s.events = eventlog.New(m.store, id, s.broken)
	s.t.Touch()
	return s, nil
}

func (m *Manager) create(c *Client, p protocol.SessionNewParams) (*Session, error) {
	id := p.SessionID
	cwd := p.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	s, err := m.newSession(id, p.AgentAlias, p.Mode, cwd, c.ID())
	if err != nil {
		return nil, err
	}
	s.risk = p.Risk // "" is the agent's
	if err := m.store.CreateSession(&store.Session{ID: id, AgentAlias: p.AgentAlias, Mode: p.Mode, Cwd: cwd, Owner: c.ID(), Risk: p.Risk}); err != nil {
		return nil, err
	}
	m.list.Changed(id)
	m.log.Info("session created", "sessionId", id, "agent", p.AgentAlias, "mode", p.Mode, "cwd", cwd)
	return s, nil
}

// Archive reads the stored sessions (list, get, history, events,
// export, fork): no live session is needed for it.
func (m *Manager) Archive() *archive.Archive { return m.arch }

// liveState is what a loaded session adds to its stored row (the
// archive's Live).
func (m *Manager) liveState(id string) (archive.Live, bool) {
	m.mu.Lock()
	s, live := m.live[id]
	m.mu.Unlock()
	if !live {
		return archive.Live{}, false
	}
	s.mu.Lock()
	risk := cmp.Or(s.risk, s.agent.Risk)
	s.mu.Unlock()
	l := archive.Live{State: s.summary().State, RunningTurnID: s.runningTurn(), Risk: risk, ResumedAttempts: int(s.resumed.Load()),
		Attached: s.attached(), Processes: s.processInfos()}
	m.each(func(p Participant) { p.Describe(s, &l) })
	return l, true
}

// lookup returns a live session c is attached to.
func (m *Manager) lookup(c *Client, id string) (*Session, error) {
	m.mu.Lock()
	s, ok := m.live[id]
	m.mu.Unlock()
	if !ok {
		return nil, m.notLive(id)
	}
	if c != nil && !c.attached(s) {
		return nil, fmt.Errorf("%w %s: attach with session/new {\"sessionId\":%q} first", ErrForbidden, id, id)
	}
	return s, nil
}

func (m *Manager) notLive(id string) error {
	if _, err := m.store.GetSession(context.Background(), id); err == nil {
		return fmt.Errorf("%w: %s is not live; resume it with session/new {\"sessionId\":%q}", ErrNotFound, id, id)
	}
	return fmt.Errorf("%w: %s", ErrNotFound, id)
}

// Prompt queues a prompt (with the images the daemon stored for it) and
// returns a channel that yields its result.
func (m *Manager) Prompt(c *Client, id, prompt string, images ...Image) (<-chan protocol.SessionPromptResult, error) {
	p, err := m.Submit(c, id, Input{Text: prompt, Images: images})
	if err != nil {
		return nil, err
	}
	return p.Done, nil
}

// Input is a prompt as a client sent it: its text, the images attached
// (files the daemon stored), and MCP resources to read into it.
type Input struct {
	Text      string
	Images    []Image
	Resources []protocol.ResourceRef
	// ClientMessageID names it (see protocol.CheckClientMessageID): a prompt
	// sent again under it runs nothing.
	ClientMessageID string
	// NoAsk: its turn asks no approval; what would ask is refused (only
	// what permission rules allow runs).
	NoAsk bool
}

// Pending is a prompt the session took: Done answers when its turn ends.
type Pending struct {
	Done <-chan protocol.SessionPromptResult
	s    *Session
	j    *job
}

// Submit queues a prompt. It only checks and queues: what the prompt
// names (an MCP server's prompt, its resources) is read when its turn
// starts, so no client waits on a server to have its prompt taken.
func (m *Manager) Submit(c *Client, id string, in Input) (*Pending, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	if err := protocol.CheckClientMessageID(in.ClientMessageID); err != nil {
		return nil, err
	}
	inp, dup, err := s.take(context.Background(), kindPrompt, in.ClientMessageID)
	if err != nil {
		return nil, err
	}
	if dup != nil {
		// Seen before: nothing runs; the first one's outcome.
		done := make(chan protocol.SessionPromptResult, 1)
		done <- dup.promptAnswer(id, s)
		return &Pending{Done: done, s: s}, nil
	}
	j := &job{prompt: in.Text, images: providerImages(in.Images), resources: in.Resources, client: c, done: make(chan protocol.SessionPromptResult, 1), in: inp, noAsk: in.NoAsk}
	if err := s.enqueue(j); err != nil {
		s.refused(inp, err)
		return nil, err
	}
	return &Pending{Done: j.done, s: s, j: j}, nil
}

// Withdraw gives the prompt up: removed from the queue while it waits
// (answered cancelled), its turn cancelled while (or as soon as) it
// runs, as session/cancel would.
func (p *Pending) Withdraw() {
	if p.j != nil && p.s.t.Withdraw(p.j) {
		p.s.neverRan(p.j, protocol.InputCancelled, "")
		p.s.queueChanged()
	}
}

// Image is an image attached to a prompt: a file the daemon stored.
type Image struct{ MimeType, Path string }

func providerImages(images []Image) []provider.Image {
	var pi []provider.Image
	for _, im := range images {
		pi = append(pi, provider.Image{MimeType: im.MimeType, Path: im.Path})
	}
	return pi
}

// Cancel cancels a session's running turn.
func (m *Manager) Cancel(c *Client, id string) (bool, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return false, err
	}
	return s.cancelTurn(), nil
}

// Approve answers an approval request.
func (m *Manager) Approve(c *Client, p protocol.SessionApproveParams) (bool, error) {
	if !slices.Contains(protocol.Decisions, p.Decision) && !slices.Contains(protocol.PlanDecisions, p.Decision) {
		return false, &protocol.ParamsError{Field: "decision", Reason: fmt.Sprintf("%q: must be one of %s (a plan's: %s)", p.Decision, strings.Join(protocol.Decisions, ", "), strings.Join(protocol.PlanDecisions, ", "))}
	}
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return false, err
	}
	if err := refused(m.Decide(gate.Request{Actor: c.Actor(), Action: gate.Action{Kind: gate.Answer, Name: protocol.MethodSessionApprove}})); err != nil {
		return false, err
	}
	return s.approve(p.RequestID, p.Decision, p.Reason, p.Feedback, c)
}

// Close closes a live session (its history stays). It returns once the
// session can write nothing more.
func (m *Manager) Close(c *Client, id string) error {
	s, err := m.lookup(c, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	if m.live[id] != s {
		m.mu.Unlock()
		return m.notLive(id)
	}
	m.startClosingLocked(s)
	m.mu.Unlock()
	m.shut(id, s, false)
	m.log.Info("session closed", "sessionId", id)
	return nil
}

// Delete removes a session and its history; no session/new can load it
// meanwhile.
func (m *Manager) Delete(ctx context.Context, id string) error {
	if err := m.awaitClosed(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closing[id] != nil {
		m.mu.Unlock()
		return fmt.Errorf("%w: session %s is closing; try again", ErrBusy, id)
	}
	s, live := m.live[id]
	if live {
		m.startClosingLocked(s)
	} else {
		m.closing[id] = make(chan struct{})
	}
	m.mu.Unlock()
	ok, err := m.shut(id, s, true)
	if err != nil {
		return err
	}
	if !ok && !live {
		return fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if m.cpDir != "" && protocol.ValidID(id) {
		if err := os.RemoveAll(filepath.Join(m.cpDir, id)); err != nil {
			m.log.Warn("a deleted session's checkpoints could not be removed", "sessionId", id, "err", err)
		}
	}
	if m.procDir != "" && protocol.ValidID(id) {
		// Its processes' output files and records (they have ended).
		if err := os.RemoveAll(filepath.Join(m.procDir, id)); err != nil {
			m.log.Warn("a deleted session's process output could not be removed", "sessionId", id, "err", err)
		}
	}
	m.log.Info("session deleted", "sessionId", id)
	return nil
}

// Configure changes a session's model and risk level (session/configure;
// "" goes back to the agent's), and stores them: the model from the next
// turn on, the risk level (the mode) from the next tool call, also in a
// running turn.
func (m *Manager) Configure(ctx context.Context, c *Client, p protocol.SessionConfigureParams) (*protocol.SessionConfigureResult, error) {
	s, err := m.lookup(c, p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.Risk != nil && *p.Risk != "" && !slices.Contains(protocol.RiskIDs(), *p.Risk) {
		return nil, &protocol.ParamsError{Field: "risk", Reason: fmt.Sprintf("%q: must be one of %s", *p.Risk, strings.Join(protocol.RiskIDs(), ", "))}
	}
	if p.Reasoning != nil && *p.Reasoning != "" && !slices.Contains(config.Reasoning, *p.Reasoning) {
		return nil, &protocol.ParamsError{Field: "reasoning", Reason: fmt.Sprintf("%q: must be one of %s", *p.Reasoning, strings.Join(config.Reasoning, ", "))}
	}
	if p.Model != nil && len(*p.Model) > 256 {
		return nil, &protocol.ParamsError{Field: "model", Reason: "longer than 256 bytes"}
	}
	// One change at a time, each told in its order (settings.go).
	s.setMu.Lock()
	defer s.setMu.Unlock()
	before := s.settings()
	if p.Risk != nil {
		if err := refused(m.Decide(gate.Request{Actor: c.Actor(), Mode: s.Mode(), Action: gate.Action{Kind: gate.ModeChange, Name: protocol.MethodSessionConfigure, To: *p.Risk}})); err != nil {
			return nil, err
		}
	}
	if err := s.tighten(p.Sandbox, p.Network); err != nil {
		return nil, err
	}
	s.mu.Lock()
	model, risk, reasoning := s.model, s.risk, s.reasoning
	if p.Reasoning != nil {
		reasoning = *p.Reasoning
	}
	if p.Model != nil {
		model = strings.TrimSpace(*p.Model)
	}
	if p.Risk != nil {
		risk = *p.Risk
	}
	s.mu.Unlock()
	if err := m.store.SetConfig(s.id, model, risk, reasoning); err != nil {
		s.tellConfig(before, protocol.ConfigByClient, c) // the sandbox may have changed
		return nil, err
	}
	s.mu.Lock()
	s.model, s.risk, s.reasoning = model, risk, reasoning
	s.mu.Unlock()
	m.log.Info("session configured", "sessionId", s.id, "model", model, "risk", risk, "reasoning", reasoning)
	return s.tellConfig(before, protocol.ConfigByClient, c), nil
}

// Compact leaves all but the last turn of a session out of the model's
// view (session/compact).
func (m *Manager) Compact(ctx context.Context, c *Client, id string) (*protocol.SessionCompactResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	n, err := s.Compact(ctx)
	if err != nil {
		return nil, err
	}
	return &protocol.SessionCompactResult{SessionID: id, DroppedMessages: n}, nil
}
