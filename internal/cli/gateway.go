package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// gatewayCmd manages the gateway's credentials through the running
// daemon: pair (a one-time code), tokens (list), revoke ID.
func gatewayCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "gateway", Short: "pair a browser or script with the gateway; list or revoke tokens", Args: noArgs}
	var format string
	c.PersistentFlags().StringVar(&format, "output-format", "text", "text or json")
	sub := func(use, short string, args cobra.PositionalArgs) *cobra.Command {
		verb, _, _ := strings.Cut(use, " ")
		return &cobra.Command{Use: use, Short: short, Args: args,
			RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
				id := ""
				if len(args) > 0 {
					id = args[0]
				}
				return runGateway(ctx, env, g.configDir, verb, id, format)
			})}
	}
	c.AddCommand(
		sub("pair", "print a one-time pairing code for a browser or script", noArgs),
		sub("tokens", "list the tokens paired so far", noArgs),
		sub("revoke TOKEN_ID", "revoke a token and close its connections", exactArgs(1, "one token id (see zeroclaw gateway tokens)")),
	)
	return c
}

func runGateway(ctx context.Context, env console.Env, configDir, sub, id, formatValue string) error {
	format := &formatValue
	if err := outputFormat(*format); err != nil {
		return err
	}
	dirs, err := resolve(env, configDir)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, dirs.Endpoint, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-gateway", Version: Version}})
	if errors.Is(err, client.ErrNoDaemon) {
		return fmt.Errorf("%w; start one with 'zeroclaw daemon --gateway'", err)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	out := func(v any) {
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	}
	w := env.Stdout
	switch sub {
	case "pair":
		r, err := c.GatewayPair(ctx)
		if err != nil {
			return err
		}
		if *format == "json" {
			out(r)
			return nil
		}
		exp, _ := time.Parse(time.RFC3339, r.ExpiresAt)
		fmt.Fprintf(w, "pairing code: %s\n", r.Code)
		fmt.Fprintf(w, "valid once, until %s (%s)\n", exp.Local().Format("15:04:05"), time.Until(exp).Round(time.Second))
		fmt.Fprintf(w, "open %s and enter it, or: curl -s %s/pair -d '{\"code\":\"%s\",\"name\":\"my script\"}'\n", r.URL, r.URL, r.Code)
	case "tokens":
		r, err := c.GatewayTokens(ctx)
		if err != nil {
			return err
		}
		if *format == "json" {
			out(r)
			return nil
		}
		if len(r.Tokens) == 0 {
			fmt.Fprintln(w, "no tokens (pair one with: zeroclaw gateway pair)")
			return nil
		}
		fmt.Fprintf(w, "%-18s %-8s %-24s %-20s %-20s %s\n", "ID", "KIND", "NAME", "CREATED", "LAST USED", "EXPIRES")
		for _, t := range r.Tokens {
			used := "never"
			if t.LastUsedAt != nil {
				used = *t.LastUsedAt
			}
			exp := t.ExpiresAt
			if t.Kind == "browser" {
				exp += " unless used"
			}
			fmt.Fprintf(w, "%-18s %-8s %-24s %-20s %-20s %s\n", t.TokenID, t.Kind, t.Name, t.CreatedAt, used, exp)
		}
	case "revoke":
		revoked, err := c.GatewayRevoke(ctx, id)
		if err != nil {
			return err
		}
		r := protocol.GatewayRevokeResult{Revoked: revoked}
		if *format == "json" {
			out(r)
			return nil
		}
		if !r.Revoked {
			return console.Exitf(1, "no token %s (see zeroclaw gateway tokens)", id)
		}
		fmt.Fprintf(w, "revoked %s; its open connections were closed\n", id)
	}
	return nil
}
