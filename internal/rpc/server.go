// Package rpc binds the daemon's methods to JSON-RPC connections: one
// binding per connection, the initialize gate, and the one table that turns
// errors into wire codes.
package rpc

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/attach"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/rewind"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/scheduler"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// Server holds what every connection's binding shares.
type Server struct {
	version   string
	dirs      config.Dirs
	cfg       *config.Config
	ephemeral bool
	started   time.Time
	log       *slog.Logger
	shutdown  func() // asks the daemon to stop; may be nil
	reload    func() (*protocol.ReloadResult, error)
	// live is the config in force for status (cfg, the start's, keeps
	// the frame limits, which need a restart).
	live      atomic.Pointer[config.Config]
	agents    atomic.Pointer[agentList] // status's agents, for the config they were made from
	sessions  *session.Manager
	schedules *scheduler.Scheduler
	goals     *goals.Goals
	rewind    *rewind.Checkpoints
	archive   *archive.Archive // the stored sessions (list, history, export, fork)
	uploads   *attach.Store

	initTimeout, stallTimeout time.Duration

	keeper     *pairing.Keeper
	gatewayURL func() string

	pid int // os.Getpid is a system call; status is a hot path

	clients atomic.Int64
	prompts atomic.Int64 // session/prompt answers not yet written
}

// Options configure a Server.
type Options struct {
	Version   string
	Dirs      config.Dirs
	Config    *config.Config
	Ephemeral bool
	Logger    *slog.Logger
	// Shutdown is called (once per request) when a client asks the daemon
	// to stop. It must not block.
	Shutdown func()
	// Reload reads the config again and puts it in force (daemon/reload,
	// the daemon's own user only); nil: not offered.
	Reload func() (*protocol.ReloadResult, error)
	// Sessions serves the session methods.
	Sessions *session.Manager
	// Schedules serves the schedule methods (nil: none are run here).
	Schedules *scheduler.Scheduler
	// Goals serves the session/goal methods.
	Goals *goals.Goals
	// Checkpoints serves session/checkpoints, session/diff and
	// session/rewind.
	Checkpoints *rewind.Checkpoints
	// InitTimeout is how long a connection may take to initialize before
	// it is closed; 0 means DefaultInitTimeout.
	InitTimeout time.Duration
	// StallTimeout is how long a write to a client may make no progress
	// before the client is disconnected; 0 means jsonrpc's default.
	StallTimeout time.Duration
	// Keeper holds the gateway's credentials (the gateway/* methods);
	// GatewayURL says where the gateway listens ("" when it does not).
	Keeper     *pairing.Keeper
	GatewayURL func() string
}

// NewServer returns a Server; the uptime clock starts now.
func NewServer(o Options) *Server {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.InitTimeout <= 0 {
		o.InitTimeout = DefaultInitTimeout
	}
	return &Server{version: o.Version, dirs: o.Dirs, cfg: o.Config, ephemeral: o.Ephemeral,
		initTimeout: o.InitTimeout, stallTimeout: o.StallTimeout, keeper: o.Keeper, gatewayURL: o.GatewayURL,
		started: time.Now(), pid: os.Getpid(), log: log, shutdown: o.Shutdown, reload: o.Reload, sessions: o.Sessions, goals: o.Goals, rewind: o.Checkpoints, schedules: o.Schedules, archive: o.Sessions.Archive(),
		uploads: &attach.Store{Dir: filepath.Join(o.Dirs.DataDir, "uploads")}}
}

// WaitPrompts waits (bounded by ctx) until every session/prompt whose
// turn has ended has had its answer written: a stopping daemon calls it
// after cancelling the turns, before closing the connections.
func (s *Server) WaitPrompts(ctx context.Context) {
	for s.prompts.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Clients returns the number of connected clients.
func (s *Server) Clients() int { return int(s.clients.Load()) }

// Peer identifies the far end of a connection.
type Peer struct {
	Label string
	UID   int // -1 when unknown
	PID   int // the peer process on a local socket (0: unknown)
	// Remote: a gateway client, which may be on another machine: it may
	// not name files on the daemon's machine (path attachments).
	Remote bool
}

// refusePaths refuses path attachments from a remote peer: a path names
// a file on the daemon's machine, which a remote client has no business
// reading through the agent.
func (b *binding) refusePaths(field string, as []protocol.Attachment) error {
	if !b.peer.Remote {
		return nil
	}
	for _, a := range as {
		if a.Path != "" {
			return &protocol.ParamsError{Field: field, Reason: "path attachments are refused over the gateway: send the file's data (dataB64) or upload it (file/upload)"}
		}
	}
	return nil
}

// ServeConn serves one connection until it ends or ctx is cancelled.
func (s *Server) ServeConn(ctx context.Context, rwc io.ReadWriteCloser, peer Peer) error {
	s.clients.Add(1)
	defer s.clients.Add(-1)
	b := &binding{srv: s, peer: peer, actor: actorOf(peer)}
	log := s.log.With("peer", peer.Label)
	b.conn = jsonrpc.NewConn(rwc, b, jsonrpc.Options{
		MaxFrame:     s.cfg.Daemon.MaxFrameBytes,
		Logger:       log,
		StallTimeout: s.stallTimeout,
	})
	b.conn.SetPeerMaxFrame(s.cfg.Daemon.MaxFrameBytes)
	b.client = session.NewClient(outConn{b.conn})
	b.client.SetActor(b.actor)
	b.client.SetIdentity("", "", false, s.cfg.Daemon.MaxFrameBytes)
	defer b.client.Close()
	defer func() {
		b.mu.Lock()
		for _, u := range b.uploads {
			u.Abort()
		}
		b.uploads = nil
		b.mu.Unlock()
	}()
	// A connection that never initializes holds a descriptor for nothing.
	initTimer := time.AfterFunc(s.initTimeout, func() {
		b.mu.Lock()
		ok := b.initialized
		b.mu.Unlock()
		if !ok {
			log.Warn("connection did not initialize in time; closing it", "timeout", s.initTimeout)
			b.conn.Close()
		}
	})
	defer initTimer.Stop()
	return b.conn.Run(ctx)
}

// DefaultInitTimeout is how long a connection may take to initialize
// before it is closed: one that never does holds a descriptor for nothing.
const DefaultInitTimeout = 10 * time.Second

// outConn adapts a jsonrpc.Conn to the sessions' view of a connection.
type outConn struct{ *jsonrpc.Conn }

func (c outConn) Push(src session.Source) error { return c.Conn.Push(src) }

// actorOf is who a connection's peer acts for, as the gate is told: a
// gateway client is a paired device; a process a sandbox shim runs (a
// command the agent started, a hook, an MCP server; see
// sandbox.Confines) is a command, with no authority; a local peer of
// the daemon's own user is the user; any other is a stranger.
func actorOf(p Peer) gate.Actor {
	switch {
	case p.Remote:
		return gate.Device
	case p.PID > 0 && sandbox.Confines(p.PID):
		return gate.Command
	case p.UID == os.Geteuid():
		return gate.User
	}
	return gate.Stranger
}

// binding is one connection's view of the daemon.
type binding struct {
	srv    *Server
	peer   Peer
	actor  gate.Actor // who the peer acts for (actorOf)
	conn   *jsonrpc.Conn
	client *session.Client

	mu          sync.Mutex
	initialized bool
	clientID    string
	caps        protocol.ClientCapabilities
	uploads     map[string]*attach.Upload // file/upload in progress

	lanes lanes // the calls about each session, in order
}

// minFrame is the smallest frame limit a client may announce: every
// answer and cut event fits in it.
const minFrame = 64 << 10

// events lists the session/update types the daemon emits.
var events = protocol.EventTypes

// Handle implements jsonrpc.Handler: the initialize gate, then the
// method's entry in the table.
func (b *binding) Handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	_, byName := methodTable()
	m, ok := byName[req.Method]
	if !ok {
		return nil, jsonrpc.ErrMethodNotFound
	}
	if req.Method != protocol.MethodInitialize {
		b.mu.Lock()
		ok := b.initialized
		b.mu.Unlock()
		if !ok {
			if req.IsNotification() {
				return nil, nil // silence, as for every notification that fails
			}
			return nil, errNotInitialized
		}
	}
	// The method table's face of the one gate: who may call what.
	if v := b.srv.sessions.Decide(gate.Request{Actor: b.actor, Action: gate.Action{Kind: gate.Method, Name: req.Method, OwnerOnly: m.ownerOnly}}); v.Decision == gate.Deny {
		return nil, errOwnerOnly(req.Method)
	}
	p, sid, err := m.decode(req.Params)
	if err != nil {
		return nil, wire(err)
	}
	return b.call(ctx, m, p, sid)
}

func (b *binding) initialize(_ context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	if p.ProtocolVersion != nil && *p.ProtocolVersion != protocol.Version {
		return nil, errVersion(*p.ProtocolVersion)
	}
	id := p.ClientID
	if id != "" && !protocol.ValidID(id) {
		return nil, &protocol.ParamsError{Field: "clientId", Reason: "must be 1-128 characters of [A-Za-z0-9._-]"}
	}
	b.mu.Lock()
	if id == "" {
		id = b.clientID // a repeated initialize without an id keeps the one we gave
	}
	if id == "" {
		id = protocol.NewID("cl_", 4)
	}
	b.initialized, b.clientID = true, id
	if p.ClientCapabilities != nil {
		b.caps = *p.ClientCapabilities
	} else {
		b.caps = protocol.ClientCapabilities{}
	}
	// Never send a frame over the client's limit, nor over ours.
	limit := b.srv.cfg.Daemon.MaxFrameBytes
	if n := b.caps.MaxFrameBytes; n > 0 {
		limit = min(limit, max(n, minFrame))
	}
	b.conn.SetPeerMaxFrame(limit)
	name := ""
	if p.ClientInfo != nil {
		name = clientName(p.ClientInfo.Name)
	}
	b.client.SetIdentity(id, name, b.caps.Elicitation != nil, limit)
	b.client.SetElicitURL(b.caps.Elicitation != nil && b.caps.Elicitation.URL != nil)
	if fs := b.caps.FS; fs != nil {
		b.client.SetFS(fs.ReadTextFile, fs.WriteTextFile, b.caps.Terminal)
	} else {
		b.client.SetFS(false, false, b.caps.Terminal)
	}
	b.mu.Unlock()
	b.srv.log.Info("client initialized", "peer", b.peer.Label, "clientId", id, "client", name)
	return &protocol.InitializeResult{
		ProtocolVersion: protocol.Version,
		ServerVersion:   b.srv.version,
		ServerPID:       b.srv.pid,
		ClientID:        id,
		MaxFrameBytes:   b.srv.cfg.Daemon.MaxFrameBytes,
		Capabilities:    protocol.Capabilities{Methods: Methods(), Events: events},
		RiskLevels:      protocol.RiskLevels,
	}, nil
}

func (b *binding) statusReq(context.Context, *noParams) (*protocol.StatusResult, error) {
	st := b.status()
	return &st, nil
}

func (b *binding) status() protocol.StatusResult {
	s := b.srv
	cfg := s.cfg
	if live := s.live.Load(); live != nil {
		cfg = live
	}
	agents := s.agentsOf(cfg)
	sessions := s.sessions.Summaries()
	servers := s.sessions.MCPStatus() // mcptools.Status is the wire's
	// An ephemeral daemon says what keeps it after its last client.
	var staying *protocol.StayingFor
	if s.ephemeral {
		if w := s.sessions.Work(); !w.Empty() {
			staying = &w
		}
	}
	return protocol.StatusResult{
		StayingFor:      staying,
		Agents:          agents.agents,
		MCPServers:      servers,
		ConfigWarnings:  cfg.Warnings,
		ServerVersion:   s.version,
		ProtocolVersion: protocol.Version,
		PID:             b.srv.pid,
		UptimeMs:        time.Since(s.started).Milliseconds(),
		Endpoint:        s.dirs.Endpoint,
		ConfigDir:       s.dirs.ConfigDir,
		DataDir:         s.dirs.DataDir,
		Ephemeral:       s.ephemeral,
		Clients:         s.Clients(),
		ActiveSessions:  len(sessions),
		Sessions:        sessions,
		Provider:        agents.provider,
		Model:           agents.model,
		ProviderURL:     agents.url,
		Gateway:         s.gatewayURLOrEmpty(),
		Today:           s.sessions.Today(),
		Sandbox:         s.sessions.SandboxStatus(),
	}
}

// agentList is what status says of the agents, made from one config:
// the list, and the default agent's provider kind, model and URL.
type agentList struct {
	cfg                  *config.Config
	agents               []protocol.AgentStatus
	provider, model, url string
}

// agentsOf describes cfg's agents; what they run on changes only with
// the config, so it is made once per config, not per status.
func (s *Server) agentsOf(cfg *config.Config) *agentList {
	if l := s.agents.Load(); l != nil && l.cfg == cfg {
		return l
	}
	l := &agentList{cfg: cfg, agents: []protocol.AgentStatus{}}
	for _, alias := range cfg.AgentAliases() {
		a := cfg.Agents[alias]
		as := protocol.AgentStatus{Alias: alias, Provider: a.Provider, ProviderKind: cfg.Providers[a.Provider].Kind, Risk: a.Risk}
		if ai, err := s.sessions.AgentInfo(alias); err == nil {
			as.Model = ai.Model
		}
		l.agents = append(l.agents, as)
	}
	if a, ok := cfg.Agents["default"]; ok {
		l.provider = cfg.Providers[a.Provider].Kind
	}
	info, _ := s.sessions.AgentInfo("default")
	l.model, l.url = info.Model, info.URL
	s.agents.Store(l)
	return l
}

func (s *Server) gatewayURLOrEmpty() string {
	if s.gatewayURL == nil {
		return ""
	}
	return s.gatewayURL()
}

// shutdownReq answers shutdown; the stop is asked once the answer is on
// the wire (the table's then), or it would close this connection before
// the client hears it.
func (b *binding) shutdownReq(context.Context, *noParams) (*protocol.ShutdownResult, error) {
	b.srv.log.Info("shutdown requested", "peer", b.peer.Label)
	return &protocol.ShutdownResult{ShuttingDown: true}, nil
}

func (b *binding) reloadReq(context.Context, *noParams) (*protocol.ReloadResult, error) {
	if b.srv.reload == nil {
		return nil, jsonrpc.ErrMethodNotFound
	}
	b.srv.log.Info("config reload requested", "peer", b.peer.Label)
	return b.srv.reload()
}

// SetConfig makes cfg the one status reports (after a reload).
func (s *Server) SetConfig(cfg *config.Config) { s.live.Store(cfg) }

// clientName is a client's name as others see it (in its prompts and
// the queue): one line of at most 64 characters.
func clientName(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64])
	}
	return s
}
