package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// runGateway manages the gateway's credentials through the running
// daemon: pair (a one-time code), tokens (list), revoke ID.
func runGateway(ctx context.Context, env Env, args []string) error {
	if len(args) == 0 || (args[0] != "pair" && args[0] != "tokens" && args[0] != "revoke") {
		fmt.Fprintln(env.Stderr, "usage: zeroclaw gateway pair | tokens | revoke TOKEN_ID  [--output-format json] [--config-dir DIR]")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return nil
		}
		return exitf(2, "")
	}
	sub := args[0]
	var configDir string
	fs := newFlags(env, "gateway "+sub, &configDir)
	format := fs.String("output-format", "text", "text or json")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if err := outputFormat(*format); err != nil {
		return err
	}
	var id string
	switch {
	case sub == "revoke" && fs.NArg() == 1:
		id = fs.Arg(0)
	case sub == "revoke":
		return exitf(2, "revoke takes one token id (see zeroclaw gateway tokens)")
	case fs.NArg() > 0:
		return exitf(2, "unexpected argument %q", fs.Arg(0))
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
		var r protocol.GatewayPairResult
		if err := c.Call(ctx, protocol.MethodGatewayPair, struct{}{}, &r); err != nil {
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
		var r protocol.GatewayTokensResult
		if err := c.Call(ctx, protocol.MethodGatewayTokens, struct{}{}, &r); err != nil {
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
		fmt.Fprintf(w, "%-18s %-24s %-20s %s\n", "ID", "NAME", "CREATED", "LAST USED")
		for _, t := range r.Tokens {
			used := "never"
			if t.LastUsedAt != nil {
				used = *t.LastUsedAt
			}
			fmt.Fprintf(w, "%-18s %-24s %-20s %s\n", t.TokenID, t.Name, t.CreatedAt, used)
		}
	case "revoke":
		var r protocol.GatewayRevokeResult
		if err := c.Call(ctx, protocol.MethodGatewayRevoke, protocol.GatewayRevokeParams{TokenID: id}, &r); err != nil {
			return err
		}
		if *format == "json" {
			out(r)
			return nil
		}
		if !r.Revoked {
			return exitf(1, "no token %s (see zeroclaw gateway tokens)", id)
		}
		fmt.Fprintf(w, "revoked %s; its open connections were closed\n", id)
	}
	return nil
}
