package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

func daemonCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "daemon [--ephemeral] [--gateway[=ADDR]]", Short: "run the daemon in the foreground; stop, restart, reload it, or read its log",
		Long: `zeroclaw daemon runs the daemon in the foreground, logging to stderr.
Clients start one in the background when none answers (logging to
<data dir>/daemon.log); the subcommands manage whichever is running.`}
	fs := c.Flags()
	ephemeral := fs.Bool("ephemeral", false, "exit 1s after the last client disconnects and the last work ends")
	var gw gatewayFlag
	fs.Var(&gw, "gateway", "also serve the HTTP/WebSocket gateway, on ADDR if given (default [gateway] listen, 127.0.0.1:42617)")
	fs.Lookup("gateway").NoOptDefVal = "true"
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		return runDaemon(ctx, env, g.configDir, *ephemeral, gw, args)
	})
	c.AddCommand(daemonStopCmd(g, "stop"), daemonStopCmd(g, "restart"), daemonReloadCmd(g), daemonLogsCmd(g), daemonInstallCmd(g), daemonUninstallCmd(g))
	return c
}

func runDaemon(ctx context.Context, env console.Env, configDir string, ephemeral bool, gw gatewayFlag, args []string) error {
	// --gateway ADDR (a space, not =): the address is left as the one
	// positional argument.
	if len(args) > 0 {
		if !gw.set || gw.addr != "" || len(args) > 1 {
			return console.Exitf(2, "unexpected argument %q", args[0])
		}
		gw.addr = args[0]
	}
	// Signals first, before any slow start-up, so a SIGTERM during start-up
	// is a graceful stop too.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dirs, err := resolve(env, configDir)
	if err != nil {
		return err
	}
	// The flags apply again to every reload.
	load := func() (*config.Config, error) {
		cfg, err := config.Load(dirs.ConfigFile(), env.Getenv)
		if err != nil {
			return nil, err
		}
		if gw.set {
			cfg.Gateway.Enabled = true
			if gw.addr != "" {
				cfg.Gateway.Listen = gw.addr
			}
			if err := cfg.Gateway.Check(); err != nil {
				return nil, err
			}
		}
		return cfg, nil
	}
	cfg, err := load()
	if err != nil {
		return err
	}
	// SIGHUP reloads the config.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reload := make(chan struct{})
	go func() {
		for {
			select {
			case <-hup:
				select {
				case reload <- struct{}{}:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	log := newLogger(env.Stderr, env.Getenv)
	return daemon.Run(ctx, daemon.Options{
		Version: Version, Dirs: dirs, Config: cfg, Ephemeral: ephemeral, Logger: log,
		LoadConfig: load, Reload: reload,
	})
}

// gatewayFlag is --gateway with an optional address.
type gatewayFlag struct {
	set  bool
	addr string
}

func (g *gatewayFlag) String() string { return g.addr }
func (g *gatewayFlag) Type() string   { return "ADDR" }
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
