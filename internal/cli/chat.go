package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/talk"
)

func chatCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "chat", Short: "talk with an agent interactively", Args: noArgs,
		Long: `zeroclaw chat talks with an agent. On a terminal it streams the reply as
Markdown, reads what you type while the agent works (Esc cancels the
turn, and Ctrl-C once no line is typed: it clears a typed line first;
prompts typed meanwhile queue; Ctrl-S steers the running turn),
shows other clients' turns on the session as they stream, and asks for
approvals with the command or diff shown. With stdin not a terminal it reads one prompt (or
/command) per line. Type /help inside for the commands and keys.`}
	fs := c.Flags()
	agentAlias := fs.String("agent", "default", "agent alias from the config")
	sessionID := fs.String("session", "", "session id to resume or create")
	cont := fs.BoolP("continue", "c", false, "resume the most recent session of this directory")
	cwd := fs.String("cwd", "", "working directory of new sessions (default: the current one)")
	approve := fs.String("approve", "ask", "approvals: ask, all, none")
	noStart := fs.Bool("no-start", false, "do not start a daemon when none is running")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		if err := approveMode(*approve); err != nil {
			return err
		}
		if *cont && *sessionID != "" {
			return console.Exitf(2, "--continue and --session exclude each other")
		}
		dir, err := absDir(*cwd)
		if err != nil {
			return err
		}
		if dir == "" {
			if dir, err = os.Getwd(); err != nil {
				return err
			}
		}
		return talk.Chat(ctx, env, talk.ChatOptions{ConfigDir: g.configDir, Agent: *agentAlias, SessionID: *sessionID,
			Continue: *cont, Cwd: dir, Approve: *approve, NoStart: *noStart})
	})
	return c
}
