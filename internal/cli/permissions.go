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

// permissionsCmd lists the permission rules in force and revokes stored
// "always" answers.
func permissionsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "permissions", Short: "list the permission rules (the config's, answers for a project, answers for a live session), revoke an answer", Args: noArgs}
	var format, cwd string
	var noStart bool
	pf := c.PersistentFlags()
	pf.StringVar(&format, "output-format", "text", "text or json")
	pf.BoolVar(&noStart, "no-start", false, "do not start a daemon when none is running")
	call := func(ctx context.Context, env console.Env, method string, params, result any) error {
		return callDaemon(ctx, env, g, format, noStart, "zeroclaw-permissions", nil, method, params, result)
	}
	list := &cobra.Command{Use: "list", Short: "list the rules in force and each one's scope (for --cwd: the config's, and the answers for its project and its live sessions; else all)", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dir, err := absDir(cwd)
			if err != nil {
				return err
			}
			var res protocol.PermissionsListResult
			if err := call(ctx, env, protocol.MethodPermissionsList, protocol.PermissionsListParams{Cwd: dir}, &res); err != nil {
				return err
			}
			if format == "json" {
				b, _ := json.MarshalIndent(res.Rules, "", "  ")
				fmt.Fprintln(env.Stdout, string(b))
				return nil
			}
			if len(res.Rules) == 0 {
				fmt.Fprintln(env.Stdout, "no permission rules")
			}
			for _, r := range res.Rules {
				fmt.Fprintf(env.Stdout, "%-14s %-7s %-5s %-12s %q  (%s)\n", r.ID, r.Scope, r.Decision, r.Tool, r.Pattern, holds(r))
			}
			return nil
		})}
	list.Flags().StringVar(&cwd, "cwd", "", "the directory whose rules to list")
	revoke := &cobra.Command{Use: "revoke ID", Short: "remove an answer, for a project or a live session (zeroclaw permissions list shows the ids)", Args: exactArgs(1, "one rule id"),
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			var res protocol.PermissionsRevokeResult
			if err := call(ctx, env, protocol.MethodPermissionsRevoke, protocol.PermissionsRevokeParams{ID: args[0]}, &res); err != nil {
				return err
			}
			if !res.Revoked {
				return fmt.Errorf("no answer %s (zeroclaw permissions list shows them)", args[0])
			}
			if format == "json" {
				b, _ := json.MarshalIndent(res, "", "  ")
				fmt.Fprintln(env.Stdout, string(b))
			} else {
				fmt.Fprintf(env.Stdout, "revoked %s\n", args[0])
			}
			return nil
		})}
	c.AddCommand(list, revoke)
	c.RunE = list.RunE
	return c
}

// holds says where and how long a rule holds, by its scope (an older
// daemon says none: its answers are all the project's).
func holds(r protocol.PermissionRule) string {
	switch {
	case r.Scope == protocol.ScopeSession:
		return "for the session " + r.SessionID + " in " + r.Dir + " only, until it ends; not stored"
	case r.Scope == protocol.ScopeProject || r.Dir != "":
		return "for the project " + r.Dir + ", stored until revoked"
	}
	return "config.toml, everywhere"
}

// callDaemon makes one call of a command that asks the daemon once (its
// output format checked first): connected as client name within 20 s,
// after before (when not nil: attach what the call needs).
func callDaemon(ctx context.Context, env console.Env, g *globals, format string, noStart bool, name string,
	before func(context.Context, *client.Client) error, method string, params, result any) error {
	if err := outputFormat(format); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := connect(ctx, env, g.configDir, noStart, client.Options{ClientInfo: protocol.ClientInfo{Name: name, Version: Version}})
	if err != nil {
		return err
	}
	defer c.Close()
	if before != nil {
		if err := before(ctx, c); err != nil {
			return err
		}
	}
	return c.Call(ctx, method, params, result)
}
