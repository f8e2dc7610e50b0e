// Package agentkit is the agents a configuration makes: providers made
// once per name, each agent's model, system prompt, tools, MCP servers
// and sandbox, and what they run on.
//
// A Kit is one configuration in force and what is derived from it (the
// commands' environment without the provider keys, the permission
// rules, the sandbox and what status says of it, the MCP servers every
// session shares). It never changes: a reload makes the next Kit
// (Reload), which shares the MCP servers when their settings did not
// change, and the old one is retired once the next is in force. The
// sessions know nothing of how an agent is made; they ask the Kit in
// force for one (Build) and build it again when its generation (Gen)
// is not the one theirs was made from.
package agentkit

import (
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/mcpauth"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/permission"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Options are what every Kit of a daemon is made with, whatever its
// configuration.
type Options struct {
	// Getenv reads the providers' keys (nil: os.Getenv).
	Getenv func(string) string
	// Environ is the daemon's environment (nil: os.Environ()); commands,
	// hooks and MCP servers get it without the variables that hold
	// provider keys.
	Environ []string
	// Umask is the umask commands run with ("" leaves the daemon's).
	Umask string
	// Reaper records commands' process groups (nil: not recorded).
	Reaper *tool.Reaper
	// Gateway is the daemon's gateway's URL ("" or nil: none), which
	// web_fetch refuses.
	Gateway func() string
	// Logins keeps the OAuth logins of HTTP MCP servers (nil: none used).
	Logins *mcpauth.Store
	// Log is where the MCP servers and the sandbox are told of (nil:
	// nowhere).
	Log *slog.Logger
	// MCPChanged is told (in a goroutine of its own) when what the
	// shared MCP servers offer may have changed (nil: no one).
	MCPChanged func()
	// Private are the daemon's own paths (its config and data
	// directories, its socket): no command, hook or MCP server the
	// shim starts can reach them (sandbox.Policy.Hide).
	Private []string
}

// Kit is one configuration in force and the agents it makes.
type Kit struct {
	o       Options
	cfg     *config.Config
	environ []string      // commands' environment, provider keys removed
	mcp     *mcptools.Set // the configured MCP servers, shared by every session
	gen     uint64        // counts reloads
	rules   []permission.Rule
	// sandbox is how commands run under it, sup what this system can
	// enforce; sandboxStatus says so.
	sup           sandbox.Support
	sandbox       *tool.Sandbox
	sandboxStatus protocol.SandboxStatus

	// mu guards providers: each made once, on first use, from this
	// configuration. It is the last lock in session's order: nothing is
	// taken while it is held.
	mu        sync.Mutex
	providers map[string]provider.Provider
}

// New is the Kit of the daemon's first configuration: its shared MCP
// servers start now, in the background (the first turns find them
// ready, or go on without them), and the log says how commands are
// confined.
func New(cfg *config.Config, o Options) *Kit {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	k := derive(cfg, o, 0, sandbox.Available())
	k.mcp = k.sharedMCP()
	if st := k.sandboxStatus; st.EnforcedBy == "none" {
		o.Log.Warn("commands are not sandboxed", "mode", st.Mode, "reason", st.Reason)
	} else {
		o.Log.Info("commands are sandboxed", "mode", st.Mode, "network", st.Network, "enforcedBy", st.EnforcedBy, "detail", st.Reason)
	}
	return k
}

// Reload is the Kit of cfg, the next generation after k: its providers
// are made again; it shares k's MCP servers unless their settings (or
// the environment they get) changed, when new ones start. Put it in
// force, then Retire k.
func (k *Kit) Reload(cfg *config.Config) *Kit {
	next := derive(cfg, k.o, k.gen+1, sandbox.Available())
	next.mcp = k.mcp
	if !reflect.DeepEqual(k.cfg.MCP.Servers, cfg.MCP.Servers) || !slices.Equal(k.environ, next.environ) {
		next.mcp = next.sharedMCP()
	}
	next.mcp.WithTurnWait(time.Duration(cfg.MCP.TurnWaitMs) * time.Millisecond)
	return next
}

// Retire lets k go once next is in force: its MCP servers, when next
// does not share them, stop in the background once their running calls
// end.
func (k *Kit) Retire(next *Kit) {
	if next.mcp != k.mcp {
		go k.mcp.Close()
	}
}

// derive is the Kit of cfg at generation gen on a system that can
// enforce sup, less its MCP servers.
func derive(cfg *config.Config, o Options, gen uint64, sup sandbox.Support) *Kit {
	k := &Kit{o: o, cfg: cfg, environ: scrub(o.Environ, cfg.ShellEnvDropped()), gen: gen, rules: rulesOf(cfg),
		sup: sup, providers: map[string]provider.Provider{}}
	k.sandbox, k.sandboxStatus = sandboxFor(sup, cfg.Sandbox, shimExe(), o.Private)
	return k
}

// sharedMCP starts the configured MCP servers every session shares.
func (k *Kit) sharedMCP() *mcptools.Set {
	set := mcptools.NewSet(k.cfg.MCP.SharedServers(), k.environ, k.o.Log).Sandboxed(k.superviseMCP).
		WithTurnWait(time.Duration(k.cfg.MCP.TurnWaitMs) * time.Millisecond).WithLogins(k.o.Logins)
	if f := k.o.MCPChanged; f != nil {
		set.OnChange(f)
	}
	set.Start()
	return set
}

// Config is the configuration in force.
func (k *Kit) Config() *config.Config { return k.cfg }

// Gen counts the reloads before this Kit: an agent built by a Kit of
// another generation is built again.
func (k *Kit) Gen() uint64 { return k.gen }

// Environ is the daemon's environment without the provider keys: what
// commands and hooks run with.
func (k *Kit) Environ() []string { return k.environ }

// Rules are the config's permission rules, in order.
func (k *Kit) Rules() []permission.Rule { return k.rules }

// MCP is the configured MCP servers every session shares.
func (k *Kit) MCP() *mcptools.Set { return k.mcp }

// SessionMCP starts a session's own MCP servers (an editor's, and the
// configured ones that run per session), told of as session id's: their
// root is the session's directory cwd (roots/list); with sb (the
// session's sandbox) they run confined as its commands do, writing cwd,
// else unconfined under the shim's supervision; changed is told (in a
// goroutine of its own) when what they offer may have changed.
func (k *Kit) SessionMCP(id, cwd string, servers map[string]config.MCPServer, sb *tool.Sandbox, changed func()) *mcptools.Set {
	set := mcptools.NewSet(servers, k.environ, k.o.Log.With("sessionId", id)).WithRoot(cwd).WithLogins(k.o.Logins).
		OnChange(changed)
	if sb != nil {
		set.Sandboxed(func(argv []string) ([]string, error) { return sb.Wrap(cwd, argv) })
	} else {
		set.Sandboxed(k.superviseMCP)
	}
	set.WithTurnWait(time.Duration(k.cfg.MCP.TurnWaitMs) * time.Millisecond).Start()
	return set
}

// scrub returns environ without the named variables.
func scrub(environ, drop []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			out = append(out, kv)
		}
	}
	return out
}

// rulesOf is the config's permission rules, in order.
func rulesOf(cfg *config.Config) []permission.Rule {
	var out []permission.Rule
	for i, p := range cfg.Permissions {
		out = append(out, permission.Rule{ID: fmt.Sprintf("config#%d", i+1), Tool: p.Tool, Pattern: p.Pattern, Decision: p.Decision, Origin: "config"})
	}
	return out
}
