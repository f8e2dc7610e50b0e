// Package cli implements the zeroclaw command line: one file per
// subcommand, each testable in-process through Env.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/rpc"
	"github.com/zeroclaw/zeroclaw/internal/talk"
)

// Version is the zeroclaw version; release builds set it with -ldflags.
var Version = "0.1.0-dev"

// The conversation tells the daemon the same version (set once, before
// any command runs: -ldflags has set Version by then).
func init() { talk.Version = Version }

// globals are the flags every command takes, and the command's Env.
type globals struct {
	env       console.Env
	configDir string
	// ran is set once a command's own code starts: an error before it is
	// a usage error (exit 2), after it the command's.
	ran bool
}

// newRoot builds the command tree. Commands are built per Main call, so
// tests run them in-process without shared flag state.
func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "zeroclaw",
		Short: "a local AI-agent daemon and its clients",
		Long: `zeroclaw runs agent sessions in a local daemon (started on demand) and talks
to it from the terminal, editors (ACP), browsers (the gateway) and scripts.`,
		Version:           Version,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetVersionTemplate("zeroclaw {{.Version}}\n")
	root.Flags().BoolP("version", "V", false, "print the version")
	root.PersistentFlags().StringVar(&g.configDir, "config-dir", "", "config directory (default $ZEROCLAW_CONFIG_DIR or ~/.zeroclaw)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(c, "%s", err.Error()) })
	root.AddGroup(&cobra.Group{ID: "agent", Title: "Talking to an agent:"}, &cobra.Group{ID: "admin", Title: "Running and configuring:"})
	for _, c := range []*cobra.Command{chatCmd(g), promptCmd(g), sessionsCmd(g), modelsCmd(g), acpCmd(g)} {
		c.GroupID = "agent"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{daemonCmd(g), statusCmd(g), configCmd(g), agentsCmd(g), permissionsCmd(g), scheduleCmd(g), goalCmd(g), mcpCmd(g), setupCmd(g), gatewayCmd(g), rpcCmd(g), schemaCmd(g), versionCmd(g)} {
		c.GroupID = "admin"
		root.AddCommand(c)
	}
	root.SetHelpCommandGroupID("admin")
	root.SetCompletionCommandGroupID("admin")
	// Every command's own code starts by marking g.ran (see run).
	return root
}

// run adapts a command body to cobra: it marks the start of the
// command's own code (errors before are usage errors).
func run(g *globals, f func(ctx context.Context, env console.Env, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		g.ran = true
		return f(c.Context(), g.env, args)
	}
}

// usageError is a mistake in the command line: exit 2, with a hint.
type usageError struct {
	cmd *cobra.Command
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usageErr(c *cobra.Command, format string, args ...any) error {
	return &usageError{cmd: c, msg: fmt.Sprintf(format, args...)}
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, env console.Env) int {
	if len(args) > 0 && args[0] == sandbox.ShimArg {
		sandbox.Main(append([]string{"zeroclaw"}, args...)) // the sandbox's shim: never returns
	}
	g := &globals{env: env}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	c, err := root.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	name := "zeroclaw"
	if c != nil {
		name = c.CommandPath()
	}
	var ue *usageError
	var ee *console.ExitError
	switch {
	case errors.As(err, &ue):
		if ue.cmd != nil {
			name = ue.cmd.CommandPath()
		}
		if ue.msg != "" {
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, ue.msg)
		}
		fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", name)
		return 2
	case !g.ran:
		// cobra's own: an unknown command, flag or argument count.
		fmt.Fprintf(env.Stderr, "%s: %s\n", name, err)
		fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", name)
		return 2
	case errors.As(err, &ee):
		if ee.Msg != "" {
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, ee.Msg)
			if ee.Code == 2 {
				fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", name)
			}
		}
		return ee.Code
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", name, console.HumanError(err))
	return 1
}

// connect dials the daemon, starting one unless noStart.
func connect(ctx context.Context, env console.Env, configDir string, noStart bool, o client.Options) (*client.Client, error) {
	return talk.Connect(ctx, env, configDir, noStart, o)
}

// noArgs refuses positional arguments with a usage error.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr(c, "unexpected argument %q", args[0])
	}
	return nil
}

// exactArgs wants n positional arguments, named what in the message.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr(c, "want %s", what)
		}
		return nil
	}
}

// rangeArgs wants from min to max positional arguments.
func rangeArgs(min, max int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usageErr(c, "want %s", what)
		}
		return nil
	}
}

// absDir makes a --cwd absolute against the current directory (the
// daemon has its own).
func absDir(dir string) (string, error) {
	if dir == "" || filepath.IsAbs(dir) {
		return dir, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--cwd %s: %w", dir, err)
	}
	return abs, nil
}

func outputFormat(s string) error {
	switch s {
	case "text", "json":
		return nil
	}
	return console.Exitf(2, "--output-format %q: must be text or json", s)
}

func newLogger(w io.Writer, getenv func(string) string) *slog.Logger {
	level := slog.LevelInfo
	if strings.EqualFold(getenv("ZEROCLAW_LOG"), "debug") {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func resolve(env console.Env, configDir string) (config.Dirs, error) {
	return config.ResolveDirs(configDir, env.Getenv)
}

func schemaCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "schema", Short: "print the protocol's JSON Schema (docs/protocol.schema.json), to generate clients from", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			b, err := rpc.Schema()
			if err != nil {
				return err
			}
			_, err = env.Stdout.Write(b)
			return err
		})}
}

func versionCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "version", Short: "print the version", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			fmt.Fprintf(env.Stdout, "zeroclaw %s\n", Version)
			return nil
		})}
}
