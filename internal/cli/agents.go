package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
)

// agentRow is one agent as zeroclaw agents list shows it.
type agentRow struct {
	Name        string   `json:"name"`
	Where       string   `json:"where"`
	Description string   `json:"description,omitempty"`
	Tools       []string `json:"tools"`
}

func agentsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "agents", Short: "the agents a session or a sub-agent can run", Args: noArgs}
	list := &cobra.Command{Use: "list", Short: "list every agent with where it is defined, its description and its tools", Args: noArgs,
		Long: `zeroclaw agents list shows the agents of config.toml ([agents.NAME]) and those
a project defines in files (.zeroclaw/agents/*.md, .claude/agents/*.md) for
the directory given by --cwd (default: this one), each with where it is
defined, its description (what the task tool tells the model) and its
tools. What an agent file gets wrong is a warning; a file agent whose name
the config has is left out.`}
	cwd := list.Flags().String("cwd", "", "the project whose agent files are read (default: the current directory)")
	format := list.Flags().String("output-format", "text", "text or json")
	list.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		if err := outputFormat(*format); err != nil {
			return err
		}
		dirs, err := resolve(env, g.configDir)
		if err != nil {
			return err
		}
		cfg, err := config.Load(dirs.ConfigFile(), env.Getenv)
		if err != nil {
			return err
		}
		dir := *cwd
		if dir == "" {
			if dir, err = os.Getwd(); err != nil {
				return err
			}
		}
		var rows []agentRow
		for _, alias := range cfg.AgentAliases() {
			a := cfg.Agents[alias]
			rows = append(rows, agentRow{Name: alias, Where: cfg.Origin("agents." + alias), Description: a.Description, Tools: a.Tools})
		}
		pas, problems := config.ProjectAgents(dir)
		for _, pa := range pas {
			if _, dup := cfg.Agents[pa.Name]; dup {
				problems = append(problems, fmt.Sprintf("%s: the config has an agent %q: this file is left out", pa.Path, pa.Name))
				continue
			}
			tools := pa.Agent.Tools
			if tools == nil {
				tools = cfg.Agents["default"].Tools
			}
			rows = append(rows, agentRow{Name: pa.Name, Where: pa.Path, Description: pa.Agent.Description, Tools: tools})
		}
		for _, p := range problems {
			fmt.Fprintf(env.Stderr, "warning: %s\n", p)
		}
		if *format == "json" {
			b, _ := json.MarshalIndent(rows, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return nil
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tWHERE\tDESCRIPTION\tTOOLS")
		for _, r := range rows {
			desc := r.Description
			if desc == "" {
				desc = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Where, desc, strings.Join(r.Tools, ","))
		}
		return tw.Flush()
	})
	c.AddCommand(list)
	return c
}
