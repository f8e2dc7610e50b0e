package cli

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

func runDaemon(ctx context.Context, env Env, args []string) error {
	var configDir string
	fs := newFlags(env, "daemon", &configDir)
	ephemeral := fs.Bool("ephemeral", false, "exit 1s after the last client disconnects")
	if err := parse(fs, args); err != nil {
		return err
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
	log := newLogger(env.Stderr, env.Getenv)
	return daemon.Run(ctx, daemon.Options{
		Version: Version, Dirs: dirs, Config: cfg, Ephemeral: *ephemeral, Logger: log,
	})
}
