package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func configCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "check the config file and show the config in force, or where it lives", Args: noArgs}
	check := &cobra.Command{Use: "check", Short: "validate config.toml and print the effective config with where each value came from", Args: noArgs,
		Long: `zeroclaw config check reads config.toml as the daemon would: a mistake is an
error naming the file, line and key (exit 1); mistakes the config runs with
are warnings. It then prints the effective config, each value followed by
where it came from (the permission rules and hooks, in order, each with
the line it starts on), and the sandbox this machine can enforce. API
keys are named by their variable, never shown.`,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, err := resolve(env, g.configDir)
			if err != nil {
				return err
			}
			cfg, err := config.Load(dirs.ConfigFile(), env.Getenv)
			if err != nil {
				return err
			}
			for _, w := range cfg.Warnings {
				fmt.Fprintf(env.Stderr, "warning: %s\n", w)
			}
			// The project's agent files (this directory's): what they get
			// wrong is a warning.
			if wd, err := os.Getwd(); err == nil {
				_, problems := config.ProjectAgents(wd)
				for _, p := range problems {
					fmt.Fprintf(env.Stderr, "warning: %s\n", p)
				}
			}
			cfg.WriteEffective(env.Stdout, env.Getenv)
			sup := sandbox.Available()
			fmt.Fprintf(env.Stdout, "\n# the sandbox here: enforced by %s (%s)\n", sup.EnforcedBy, sup.Reason)
			return nil
		})}
	path := &cobra.Command{Use: "path", Short: "print the path of config.toml (whether or not it exists)", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, err := resolve(env, g.configDir)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, dirs.ConfigFile())
			if _, err := os.Stat(dirs.ConfigFile()); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintln(env.Stderr, "(it does not exist: the built-in defaults are in force; zeroclaw setup writes one)")
			}
			return nil
		})}
	c.AddCommand(check, path)
	return c
}

func daemonReloadCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "reload", Short: "make the running daemon read config.toml again (as SIGHUP does)", Args: noArgs,
		Long: `zeroclaw daemon reload asks the running daemon to read its config again.
Sessions stay; new sessions and the next turn of every session use the new
config. A bad file is refused with its error and the old config stays.
The gateway and daemon.max_frame_bytes change only at the next start.`}
	format := c.Flags().String("output-format", "text", "text or json")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		if err := outputFormat(*format); err != nil {
			return err
		}
		dirs, err := resolve(env, g.configDir)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cl, err := client.Dial(ctx, dirs.Endpoint, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-daemon-reload", Version: Version}})
		if errors.Is(err, client.ErrNoDaemon) {
			return console.Exitf(1, "no daemon is running at %s (the next one reads the config when it starts)", dirs.Endpoint)
		}
		if err != nil {
			return err
		}
		defer cl.Close()
		r, err := cl.Reload(ctx)
		if err != nil {
			return err
		}
		if *format == "json" {
			b, _ := json.MarshalIndent(r, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return nil
		}
		src := r.Config
		if src == "" {
			src = "the built-in defaults (no config file)"
		}
		fmt.Fprintf(env.Stdout, "reloaded: %s is in force for new turns\n", src)
		for _, w := range r.Warnings {
			fmt.Fprintf(env.Stderr, "warning: %s\n", w)
		}
		for _, k := range r.RestartNeeded {
			fmt.Fprintf(env.Stderr, "note: %s changed; it takes effect at the next start (zeroclaw daemon restart)\n", k)
		}
		return nil
	})
	return c
}
