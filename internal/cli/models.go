package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// runModels lists the models the agent's provider offers, asked through
// the daemon (which holds the keys).
func runModels(ctx context.Context, env Env, args []string) error {
	var configDir string
	fs := newFlags(env, "models", &configDir)
	agentAlias := fs.String("agent", "default", "agent alias from the config")
	format := fs.String("output-format", "text", "text or json")
	noStart := fs.Bool("no-start", false, "do not start a daemon when none is running")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := outputFormat(*format); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exitf(2, "unexpected argument %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	c, err := connect(ctx, env, configDir, *noStart, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-models", Version: Version}})
	if err != nil {
		return err
	}
	defer c.Close()
	var r protocol.ModelsResult
	if err := c.Call(ctx, protocol.MethodModels, protocol.ModelsParams{AgentAlias: *agentAlias}, &r); err != nil {
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
}
