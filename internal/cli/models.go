package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// modelsCmd lists the models the agent's provider offers, asked through
// the daemon (which holds the keys).
func modelsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "models", Short: "list the models the agent's provider offers", Args: noArgs}
	fs := c.Flags()
	agentAlias := fs.String("agent", "default", "agent alias from the config")
	format := fs.String("output-format", "text", "text or json")
	noStart := fs.Bool("no-start", false, "do not start a daemon when none is running")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		configDir := g.configDir
		if err := outputFormat(*format); err != nil {
			return err
		}
		if len(args) > 0 {
			return console.Exitf(2, "unexpected argument %q", args[0])
		}
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		c, err := connect(ctx, env, configDir, *noStart, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-models", Version: Version}})
		if err != nil {
			return err
		}
		defer c.Close()
		r, err := c.Models(ctx, *agentAlias)
		if err != nil {
			return err
		}
		if *format == "json" {
			b, _ := json.MarshalIndent(r, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return nil
		}
		fmt.Fprintf(env.Stderr, "provider %s (%s, %s); * = the agent's model\n", r.Provider, r.Kind, r.URL)
		for _, m := range r.Models {
			mark := " "
			if m == r.Current {
				mark = "*"
			}
			fmt.Fprintf(env.Stdout, "%s %s\n", mark, m)
		}
		return nil
	})
	return c
}
