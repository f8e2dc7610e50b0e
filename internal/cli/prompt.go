package cli

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/talk"
)

func promptCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "prompt [flags] [text...]", Short: "run one agent turn and stream the reply", Args: cobra.ArbitraryArgs, Long: `Run one agent turn and stream the reply to stdout (notes go to stderr).
The words are the prompt; with none (or -), and stdin not a terminal, stdin
is. Put -- before a prompt that starts with a dash.

Exit codes: 0 done, 1 the turn failed, 2 usage, 3 the turn used all its
model calls, 4 the model refused, 5 a spending limit ([budget]) is
reached, 6 the reply was cut at the output limit (max_tokens; the notice
names the limit, the key that raises it, and the tool whose call it cut
off), 130 cancelled.`,
		Example: `  zeroclaw prompt explain this repository
  git diff | zeroclaw prompt --output-format json
  zeroclaw prompt --approve all --session my-task "run the tests"`}
	fs := c.Flags()
	agentAlias := fs.String("agent", "default", "agent alias from the config")
	sessionID := fs.String("session", "", "session id to resume or create")
	cwd := fs.String("cwd", "", "working directory of a new session (default: the current one)")
	approve := fs.String("approve", "ask", "approvals: ask (read y/a/p/n from stdin: a always for this session, p always in this project), all, none")
	format := fs.String("output-format", "text", "text, json or ndjson")
	noStart := fs.Bool("no-start", false, "do not start a daemon when none is running")
	model := fs.String("model", "", "the model for this session (kept with it; see zeroclaw models)")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		configDir := g.configDir
		switch *format {
		case "text", "json", "ndjson":
		default:
			return console.Exitf(2, "--output-format %q: must be text, json or ndjson", *format)
		}
		if err := approveMode(*approve); err != nil {
			return err
		}
		// The words are the prompt; none, with stdin not a terminal, reads it.
		text := strings.Join(args, " ")
		if len(args) == 0 {
			if console.IsTerminal(env.Stdin) {
				return console.Exitf(2, "no prompt: give it as words, with - to read stdin, or pipe it in")
			}
			text = "-"
		}
		if *cwd == "" {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			*cwd = wd
		}
		var err error
		if *cwd, err = absDir(*cwd); err != nil {
			return err
		}
		return talk.Prompt(ctx, env, talk.PromptOptions{ConfigDir: configDir, Agent: *agentAlias, SessionID: *sessionID,
			Cwd: *cwd, Approve: *approve, Format: *format, NoStart: *noStart, Model: *model, Text: text})
	})
	return c
}

func approveMode(s string) error {
	switch s {
	case "ask", "all", "none":
		return nil
	}
	return console.Exitf(2, "--approve %q: must be ask, all or none", s)
}
