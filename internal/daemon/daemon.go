// Package daemon runs the zeroclaw daemon: it owns the listener, the
// accept loop, every connection's goroutine, ephemeral mode and graceful
// stop. The methods themselves live in package rpc.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/permission"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/attach"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/continuation"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/gateway"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/hooks"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/mcpauth"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
	"github.com/zeroclaw/zeroclaw/internal/plan"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/review"
	"github.com/zeroclaw/zeroclaw/internal/rewind"
	"github.com/zeroclaw/zeroclaw/internal/rpc"
	"github.com/zeroclaw/zeroclaw/internal/scheduler"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/subagents"
	"github.com/zeroclaw/zeroclaw/internal/tool"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// Options configure a daemon run.
type Options struct {
	Version   string
	Dirs      config.Dirs
	Config    *config.Config
	Ephemeral bool
	// Grace is how long an ephemeral daemon waits after its last client
	// leaves and its last work ends (a turn, a background process, a
	// goal, a sub-agent); 0 means one second.
	Grace  time.Duration
	Logger *slog.Logger
	// Ready, if set, is called once the socket accepts connections.
	Ready func(endpoint string)
	// Getenv reads provider API keys; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment commands start from, less provider keys;
	// nil means os.Environ().
	Environ []string
	// InitTimeout and StallTimeout: see rpc.Options (0: the defaults).
	InitTimeout, StallTimeout time.Duration
	// LoadConfig reads the config again for a reload (daemon/reload, or a
	// value on Reload); nil reads Dirs.ConfigFile(). The command line
	// passes one that applies its own flags (--gateway) again.
	LoadConfig func() (*config.Config, error)
	// Reload, when set, asks for a reload at each value (the command line
	// sends one on SIGHUP).
	Reload <-chan struct{}
	// Now is the clock the day's spend is kept by (nil: time.Now).
	Now func() time.Time
	// Gate decides what every actor may do (nil: gate.Decide); a test
	// counts what reaches it.
	Gate gate.Func
}

// userUmask sets the daemon's umask to 077 once, and returns the one it
// replaced (-1 where there is no umask).
var userUmask = sync.OnceValue(privateUmask)

// DBFile is the database's name inside the data directory.
const DBFile = "zeroclaw.db"

// StopTimeout bounds a graceful stop: connections still open after it are
// abandoned and Run returns.
const StopTimeout = 5 * time.Second

// Run listens on the endpoint and serves until ctx is cancelled, a client
// asks for shutdown, or (ephemeral) the last client and the last work
// have been gone for the grace period. It returns nil after a graceful stop.
func Run(ctx context.Context, o Options) error {
	// A socket in a shared directory (ZEROCLAW_SOCKET=/tmp/...) has its
	// lock in the data directory, where no other user can make it first.
	ln, err := transport.Listen(o.Dirs.Endpoint, o.Dirs.DataDir)
	if err != nil {
		return err
	}
	defer ln.Close()
	return Serve(ctx, ln, o)
}

// Serve is Run on a listener the caller made; it closes ln when it returns.
func Serve(ctx context.Context, ln net.Listener, o Options) error {
	log, grace := o.logger(), o.gracePeriod()
	// Every file from here on is private: the database and its journal,
	// uploads, the records of running commands.
	umask := replacedUmask()
	// One daemon per data directory, whatever socket it listens on: two
	// would both fire the schedules and resume the turns.
	unlock, err := lockDataDir(o.Dirs.DataDir)
	if err != nil {
		ln.Close()
		return err
	}
	defer unlock()
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	stopGateway := func() {}
	db, err := store.Open(filepath.Join(o.Dirs.DataDir, DBFile))
	if err != nil {
		ln.Close()
		return err
	}
	defer db.Close()
	// The metrics count only where something serves them: the gateway's
	// /metrics, or metrics_listen.
	if o.Config.Gateway.Enabled || o.Config.Gateway.MetricsListen != "" {
		metrics.Enable()
		db.OnCommit = metrics.StoreCommit
	}
	reaper := &tool.Reaper{Dir: filepath.Join(o.Dirs.DataDir, "procs"), Log: log}
	if n := reaper.Reap(); n > 0 {
		log.Warn("killed commands a daemon that died had left running", "groups", n)
	}
	var gwURL gatewayURL
	perms, err := permission.OpenStore(filepath.Join(o.Dirs.DataDir, "permissions.json"))
	if err != nil {
		ln.Close()
		return err
	}
	sessions, err := session.NewManager(session.Options{Permissions: perms, Config: o.Config, Store: db, Getenv: o.Getenv, Logger: log,
		Environ: o.Environ, Umask: umask, Reaper: reaper, Gateway: gwURL.get, Now: o.Now,
		CheckpointDir: filepath.Join(o.Dirs.DataDir, "checkpoints"), ProcessDir: filepath.Join(o.Dirs.DataDir, "processes"), MCPLogins: mcpauth.In(o.Dirs.DataDir),
		Uploads: &attach.Store{Dir: filepath.Join(o.Dirs.DataDir, "uploads")}, Gate: o.Gate,
		Private: []string{o.Dirs.ConfigDir, o.Dirs.DataDir, o.Dirs.Endpoint}, Reviewer: review.Reviewer{}})
	if err != nil {
		ln.Close()
		return err
	}
	// The goals take part in every session's turns, from the first
	// resumed one on.
	goalsRun := goals.New(sessions, db, log)
	subagents.New(sessions, db, log)
	// Each turn's checkpoint, and the command hooks at a turn's moments.
	checkpoints := rewind.New(sessions, db, log)
	hooks.New(sessions, log)
	// The plan mode's end joins last: exit_plan follows the others' tools.
	plan.New(sessions)
	// A rewind the last run left half done is finished before any client
	// can see its session.
	checkpoints.Recover(ctx)
	// Turns a dead daemon cut go on (or end interrupted), and the
	// prompts queued behind them run, before any client attaches.
	continuation.Run(ctx, sessions, db, log)
	// Then the active goals go on (a cut goal turn went on above).
	goalsRun.Continue(ctx)
	// An ended input's clientMessageId is kept store.InputKeep (24 h):
	// older ones are forgotten at the start and every hour, until the
	// daemon stops (before the store closes).
	pruned := make(chan struct{})
	go func() { defer close(pruned); pruneInputs(stopCtx, db, log) }()
	defer func() { stop(); <-pruned }()
	// Schedules fire from here on, their runs a dead daemon left sent
	// again (after the turns above went on: a run taken before is
	// followed, not run twice).
	sched := scheduler.New(scheduler.Options{Store: db, Sessions: sessions, Log: log, Now: o.Now,
		Enabled: o.Config.Schedules.Enabled, Max: o.Config.Schedules.Max})
	if err := sched.Start(stopCtx); err != nil {
		log.Error("the schedules could not be read", "err", err)
	}
	defer func() { stop(); sched.Wait() }()
	metrics.CountSessions(sessionCounts(sessions, db))
	tokenTTL, sessionTTL := o.Config.Gateway.Lifetimes()
	keeper, err := pairing.New(ctx, db, pairing.Options{TokenTTL: tokenTTL, SessionTTL: sessionTTL})
	if err != nil {
		ln.Close()
		return err
	}
	var srv *rpc.Server
	reload := reloader(o, log, func(cfg *config.Config) {
		sessions.Reload(cfg)
		srv.SetConfig(cfg)
	})
	srv = rpc.NewServer(rpc.Options{
		Version: o.Version, Dirs: o.Dirs, Config: o.Config, Ephemeral: o.Ephemeral,
		Logger: log, Shutdown: stop, Sessions: sessions, Goals: goalsRun, Checkpoints: checkpoints, Schedules: sched, Reload: reload,
		InitTimeout: o.InitTimeout, StallTimeout: o.StallTimeout,
		Keeper: keeper, GatewayURL: gwURL.get,
	})
	life := newLifetime(grace)
	// An ephemeral daemon stays while its sessions work: a turn, a dev
	// server, a goal, a sub-agent a CLI command started runs to its end.
	life.work, life.log = sessions.Work, log
	if addr := o.Config.Gateway.MetricsListen; addr != "" {
		// /metrics on loopback without a credential, for a local
		// Prometheus (the gateway's own /metrics takes a token).
		mln, err := net.Listen("tcp", addr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("gateway.metrics_listen = %q: %w", addr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		ms := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go ms.Serve(mln)
		defer ms.Close()
		log.Info("metrics served", "url", "http://"+mln.Addr().String()+"/metrics")
	}
	if o.Config.Gateway.Enabled {
		gw, err := gateway.Start(gateway.Options{Config: o.Config.Gateway, Version: o.Version, Serve: srv.ServeConn,
			Keeper: keeper, Logger: log, MaxFrame: o.Config.Daemon.MaxFrameBytes,
			Connect: life.connect, Disconnect: life.disconnect})
		if err != nil {
			ln.Close()
			return err
		}
		gwURL.set(gw.URL())
		// The gateway stops before the connections: its WebSockets get a
		// close frame after the prompts' answers went out.
		defer gw.Close(context.Background())
		stopGateway = func() {
			sctx, cancel := context.WithTimeout(context.Background(), StopTimeout/2)
			defer cancel()
			gw.Close(sctx)
		}
	}
	released := make(chan struct{})
	go func() { defer close(released); releaseMemory(stopCtx) }()
	defer func() { stop(); <-released }()
	connCtx, cancelConns := context.WithCancel(context.Background())
	defer cancelConns()
	acc := &acceptor{ln: ln, srv: srv, life: life, log: log, ctx: connCtx}

	acceptErr := make(chan error, 1) // the accept loop's end, and why
	// Said before the first connection is taken (the socket listens
	// already): the log reads in the order things happened.
	for _, w := range o.Config.Warnings {
		log.Warn("config: " + w)
	}
	log.Info("daemon ready", "endpoint", o.Dirs.Endpoint, "pid", os.Getpid(), "ephemeral", o.Ephemeral,
		"config", configSource(o.Config))
	go acc.run(stopCtx, acceptErr)
	if o.Ready != nil {
		o.Ready(o.Dirs.Endpoint)
	}

	if o.Reload != nil {
		go reloadOn(stopCtx, o.Reload, reload)
	}
	var expired <-chan struct{}
	if o.Ephemeral {
		expired = life.expired
	}
	runErr := awaitStop(stopCtx, expired, acceptErr, log, grace)
	// Graceful stop: no new connections, end the open ones, wait (bounded).
	// The accept loop is gone before we wait, so no connection is added to
	// the group after the wait starts.
	ln.Close()
	for range acceptErr {
	}
	// Running turns end as cancelled and answer their prompts while the
	// connections are still open; then the store is flushed.
	turnsCtx, turnsDone := context.WithTimeout(context.Background(), StopTimeout/2)
	sessions.Shutdown(turnsCtx)
	srv.WaitPrompts(turnsCtx)
	turnsDone()
	stopGateway()
	cancelConns()
	acc.wait(StopTimeout)
	if runErr != nil && errors.Is(runErr, net.ErrClosed) {
		runErr = nil
	}
	return runErr
}

// logger is o.Logger, or one that discards (nil).
func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// gracePeriod is o.Grace, or one second (0).
func (o Options) gracePeriod() time.Duration {
	if o.Grace <= 0 {
		return time.Second
	}
	return o.Grace
}

// replacedUmask makes every file the daemon writes from here on private,
// and returns the umask it replaced, in octal, for the commands it
// starts ("" where there is no umask).
func replacedUmask() string {
	if prev := userUmask(); prev >= 0 {
		return fmt.Sprintf("%04o", prev)
	}
	return ""
}

// lockDataDir takes the data directory's lock; another daemon that holds
// it is named, with what to do about it.
func lockDataDir(dir string) (unlock func(), err error) {
	unlock, err = transport.LockDir(dir)
	if err != nil {
		var le *transport.LockedError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%s uses the data directory %s; stop it first (zeroclaw daemon stop), or give this one another ZEROCLAW_DATA_DIR", le.Who(), le.Path)
		}
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	return unlock, nil
}

// sessionCounts counts the sessions for the metrics: live (in memory),
// running a turn, and stored.
func sessionCounts(sessions *session.Manager, db *store.Store) func() (live, running, stored int) {
	return func() (live, running, stored int) {
		for _, s := range sessions.Summaries() {
			live++
			if s.State == store.StateRunning {
				running++
			}
		}
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		stored, _ = db.CountSessions(cctx)
		return live, running, stored
	}
}

// reloadOn reloads at each value of asks, until ctx ends.
func reloadOn(ctx context.Context, asks <-chan struct{}, reload func() (*protocol.ReloadResult, error)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-asks:
			reload() // logged either way
		}
	}
}

// gatewayURL is the gateway's URL once it listens ("" before, and
// without a gateway); the sessions and the server read it from any
// goroutine.
type gatewayURL struct{ p atomic.Pointer[string] }

func (g *gatewayURL) set(u string) { g.p.Store(&u) }

func (g *gatewayURL) get() string {
	if u := g.p.Load(); u != nil {
		return *u
	}
	return ""
}

// awaitStop waits for what stops the daemon: ctx's end or a client's
// shutdown (stopCtx), the last client gone for the grace period
// (expired, nil unless ephemeral), or the accept loop's end, whose error
// it returns.
func awaitStop(stopCtx context.Context, expired <-chan struct{}, acceptErr <-chan error, log *slog.Logger, grace time.Duration) error {
	select {
	case <-stopCtx.Done():
		log.Info("daemon stopping")
	case <-expired:
		log.Info("ephemeral daemon: last client gone, stopping", "grace", grace)
	case err := <-acceptErr:
		return fmt.Errorf("accept: %w", err)
	}
	return nil
}

// acceptor takes the socket's connections and serves each on a
// goroutine of its own, until the listener closes.
type acceptor struct {
	ln   net.Listener
	srv  *rpc.Server
	life *lifetime
	log  *slog.Logger
	// ctx is the connections': cancelled at the stop, once the running
	// turns answered their prompts.
	ctx   context.Context
	conns sync.WaitGroup
}

// run accepts connections until the listener closes, then sends why on
// done and closes it.
func (a *acceptor) run(stopCtx context.Context, done chan<- error) {
	backoff := time.Duration(0)
	for {
		nc, err := a.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				done <- err
				close(done)
				return
			}
			// Out of descriptors (EMFILE), a connection aborted before
			// it was taken, ...: no client can stop the daemon. Wait a
			// little, longer each time, and go on.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			a.log.Warn("accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-time.After(backoff):
			case <-stopCtx.Done():
			}
			continue
		}
		backoff = 0
		a.serve(nc)
	}
}

// serve serves a connection the socket lets in (another is refused) on a
// goroutine of its own, counted by the daemon's lifetime and the
// metrics while it is open.
func (a *acceptor) serve(nc net.Conn) {
	peer, err := transport.Authorize(nc)
	if err != nil {
		a.log.Warn("connection refused", "peer", peer.Label, "err", err)
		nc.Close()
		return
	}
	nc = metrics.Counted("socket", nc)
	a.life.connect()
	a.conns.Add(1)
	go func() {
		defer a.conns.Done()
		defer a.life.disconnect()
		defer metrics.Connected("socket")()
		a.log.Info("client connected", "peer", peer.Label)
		err := a.srv.ServeConn(a.ctx, nc, rpc.Peer{Label: peer.Label, UID: peer.UID, PID: peer.PID})
		a.log.Info("client disconnected", "peer", peer.Label, "err", err)
	}()
}

// wait waits for the connections to end, at most d (one still open then
// is abandoned, and said).
func (a *acceptor) wait(d time.Duration) {
	waited := make(chan struct{})
	go func() { a.conns.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(d):
		a.log.Warn("connections still open after the stop timeout; exiting anyway")
	}
}

// reloader returns the reload: read the config, refuse a bad one (the
// old one stays), else put it in force with apply. Reloads run one at a
// time.
func reloader(o Options, log *slog.Logger, apply func(*config.Config)) func() (*protocol.ReloadResult, error) {
	var mu sync.Mutex
	current := o.Config
	load := o.LoadConfig
	if load == nil {
		load = func() (*config.Config, error) { return config.Load(o.Dirs.ConfigFile(), o.Getenv) }
	}
	return func() (*protocol.ReloadResult, error) {
		mu.Lock()
		defer mu.Unlock()
		cfg, err := load()
		if err != nil {
			log.Error("config reload refused; the old config stays", "err", err)
			return nil, jsonrpc.NewError(protocol.CodeConfigInvalid, map[string]string{"kind": "config_invalid"},
				"%v (the old config stays in force)", err)
		}
		restart := config.RestartNeeded(current, cfg)
		apply(cfg)
		current = cfg
		for _, w := range cfg.Warnings {
			log.Warn("config: " + w)
		}
		if len(restart) > 0 {
			log.Warn("config reloaded; these settings take effect at the next start", "settings", restart)
		}
		return &protocol.ReloadResult{Reloaded: true, Config: cfg.Source, Warnings: cfg.Warnings, RestartNeeded: restart}, nil
	}
}

func configSource(c *config.Config) string {
	if c.Source == "" {
		return "built-in defaults"
	}
	return c.Source
}

// pruneInputs forgets the ended inputs past store.InputKeep, now and
// every hour until ctx ends.
func pruneInputs(ctx context.Context, db *store.Store, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if err := db.PruneInputs(); err != nil && ctx.Err() == nil {
			log.Warn("old inputs could not be forgotten", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
