package cli

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

func runDaemon(ctx context.Context, env Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "stop", "restart":
			return runDaemonStop(ctx, env, args[0], args[1:])
		case "logs":
			return runDaemonLogs(ctx, env, args[1:])
		}
	}
	var configDir string
	fs := newFlags(env, "daemon", &configDir)
	ephemeral := fs.Bool("ephemeral", false, "exit 1s after the last client disconnects")
	var gw gatewayFlag
	fs.Var(&gw, "gateway", "also serve the HTTP/WebSocket gateway, on ADDR if given (--gateway or --gateway=ADDR; default [gateway] listen, 127.0.0.1:42617)")
	if err := parse(fs, args); err != nil {
		return err
	}
	// --gateway ADDR (a space, not =): the address is left as the one
	// positional argument.
	if rest := fs.Args(); len(rest) > 0 {
		if !gw.set || gw.addr != "" || len(rest) > 1 {
			return exitf(2, "unexpected argument %q", rest[0])
		}
		gw.addr = rest[0]
	}
	// Signals first, before any slow start-up, so a SIGTERM during start-up
	// is a graceful stop too.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dirs, err := resolve(env, configDir)
	if err != nil {
		return err
	}
	cfg, err := config.Load(dirs.ConfigFile(), env.Getenv)
	if err != nil {
		return err
	}
	if gw.set {
		cfg.Gateway.Enabled = true
		if gw.addr != "" {
			cfg.Gateway.Listen = gw.addr
		}
		if err := cfg.Gateway.Check(); err != nil {
			return err
		}
	}
	log := newLogger(env.Stderr, env.Getenv)
	return daemon.Run(ctx, daemon.Options{
		Version: Version, Dirs: dirs, Config: cfg, Ephemeral: *ephemeral, Logger: log,
	})
}

// gatewayFlag is --gateway with an optional address.
type gatewayFlag struct {
	set  bool
	addr string
}

func (g *gatewayFlag) String() string   { return g.addr }
func (g *gatewayFlag) IsBoolFlag() bool { return true }
func (g *gatewayFlag) Set(v string) error {
	g.set = true
	switch v {
	case "true":
	case "false":
		g.set = false
	default:
		g.addr = v
	}
	return nil
}
