// Package cli implements the zeroclaw command line: one file per
// subcommand, each testable in-process through Env.
package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// Version is the zeroclaw version; release builds set it with -ldflags.
var Version = "0.1.0-dev"

// Env is what a command may touch: its streams and environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Environ is the environment handed to processes the command starts.
	Environ []string
}

// OSEnv returns the process's real streams and environment.
func OSEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ()}
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

type command struct {
	name, summary string
	run           func(ctx context.Context, env Env, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"chat", "talk with an agent interactively", runChat},
		{"prompt", "run one agent turn and stream the reply", runPrompt},
		{"sessions", "list, show or delete sessions", runSessions},
		{"models", "list the models the agent's provider offers", runModels},
		{"acp", "serve the Agent Client Protocol on stdio (for editors such as Zed)", runACP},
		{"daemon", "run the daemon in the foreground", runDaemon},
		{"status", "print the running daemon's status", runStatus},
		{"gateway", "pair a browser or script with the gateway; list or revoke tokens", runGateway},
		{"rpc", "send NDJSON from stdin to the daemon and print every frame it sends", runRPC},
		{"version", "print the version", runVersion},
	}
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-V") {
		args = []string{"version"}
	}
	// help CMD is CMD --help.
	if len(args) > 1 && args[0] == "help" {
		args = append(args[1:2:2], "--help")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(ctx, env, args[1:])
			if err == nil {
				return 0
			}
			if err == flag.ErrHelp {
				return 0
			}
			code := 1
			if e, ok := err.(*exitError); ok {
				code = e.code
			}
			if msg := err.Error(); msg != "" {
				fmt.Fprintf(env.Stderr, "zeroclaw %s: %s\n", c.name, msg)
			}
			return code
		}
	}
	fmt.Fprintf(env.Stderr, "zeroclaw: unknown command %q\n\n", args[0])
	usage(env.Stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: zeroclaw <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'zeroclaw <command> -h' for a command's flags.")
}

// newFlags returns a FlagSet that reports to env.Stderr and knows the
// shared --config-dir flag.
func newFlags(env Env, name string, configDir *string) *flag.FlagSet {
	fs := flag.NewFlagSet("zeroclaw "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.StringVar(configDir, "config-dir", "", "config directory (default $ZEROCLAW_CONFIG_DIR or ~/.zeroclaw)")
	return fs
}

// parse parses flags, turning usage errors into exit code 2.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return exitf(2, "")
	}
	return nil
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
	return exitf(2, "--output-format %q: must be text or json", s)
}

func newLogger(w io.Writer, getenv func(string) string) *slog.Logger {
	level := slog.LevelInfo
	if strings.EqualFold(getenv("ZEROCLAW_LOG"), "debug") {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

func resolve(env Env, configDir string) (config.Dirs, error) {
	return config.ResolveDirs(configDir, env.Getenv)
}

func runVersion(ctx context.Context, env Env, args []string) error {
	fmt.Fprintf(env.Stdout, "zeroclaw %s\n", Version)
	return nil
}
