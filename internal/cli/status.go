package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func statusCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "status", Short: "print the running daemon's status", Args: noArgs}
	fs := c.Flags()
	format := fs.String("output-format", "text", "text or json")
	start := fs.Bool("start", false, "start an ephemeral daemon when none is running")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		configDir := g.configDir
		if err := outputFormat(*format); err != nil {
			return err
		}
		dirs, err := resolve(env, configDir)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		opts := client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-status", Version: Version}}
		var c *client.Client
		if *start {
			c, err = client.DialOrStart(ctx, dirs.Endpoint, opts, client.StartOptions{
				ConfigDir: dirs.ConfigDir, DataDir: dirs.DataDir, Env: env.Environ})
		} else {
			c, err = client.Dial(ctx, dirs.Endpoint, opts)
		}
		if errors.Is(err, client.ErrNoDaemon) {
			return fmt.Errorf("%w (service: %s); start one with 'zeroclaw daemon' (or pass --start)", err, serviceLine(env, dirs))
		}
		if err != nil {
			return err
		}
		defer c.Close()
		st, err := c.Status(ctx)
		if err != nil {
			return err
		}
		if *format == "json" {
			b, _ := json.MarshalIndent(st, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return nil
		}
		w := env.Stdout
		fmt.Fprintf(w, "zeroclaw daemon %s (protocol %d), pid %d, up %s\n", st.ServerVersion, st.ProtocolVersion, st.PID,
			(time.Duration(st.UptimeMs) * time.Millisecond).String())
		fmt.Fprintf(w, "endpoint:   %s\n", st.Endpoint)
		fmt.Fprintf(w, "config dir: %s\n", st.ConfigDir)
		fmt.Fprintf(w, "data dir:   %s\n", st.DataDir)
		mode := "persistent"
		if st.Ephemeral {
			mode = "ephemeral (exits 1s after the last client leaves and its work ends)"
			if st.StayingFor != nil && !st.StayingFor.Empty() {
				mode += "; staying for " + st.StayingFor.String()
			}
		}
		fmt.Fprintf(w, "mode:       %s\n", mode)
		fmt.Fprintf(w, "service:    %s\n", serviceLine(env, dirs))
		provider := st.Provider
		if provider == "echo" {
			provider += " (offline; no model configured)"
		}
		fmt.Fprintf(w, "provider:   %s\n", provider)
		if st.Model != "" || st.ProviderURL != "" {
			fmt.Fprintf(w, "model:      %s (%s)\n", st.Model, st.ProviderURL)
		}
		if st.Gateway != "" {
			fmt.Fprintf(w, "gateway:    %s\n", st.Gateway)
		}
		for _, cw := range st.ConfigWarnings {
			fmt.Fprintf(w, "warning:    %s\n", cw)
		}
		fmt.Fprintf(w, "today:      %s\n", spentToday(st.Today))
		fmt.Fprintf(w, "sandbox:    %s\n", sandboxLine(st.Sandbox))
		for _, m := range st.MCPServers {
			fmt.Fprintf(w, "mcp:        %s\n", mcpLine(m))
		}
		fmt.Fprintf(w, "clients:    %d\n", st.Clients)
		fmt.Fprintf(w, "sessions:   %d active\n", st.ActiveSessions)
		for _, s := range st.Sessions {
			fmt.Fprintf(w, "  %s  %s  %s  %s  %d client(s)\n", s.SessionID, s.AgentAlias, s.Mode, s.State, s.Clients)
		}
		return nil
	})
	return c
}

// spentToday is status's line on the day's model calls and the budget.
func spentToday(t protocol.SpendToday) string {
	u := t.Usage
	line := fmt.Sprintf("%d input tokens (%d from the cache), %d output", u.InputTokens, u.CacheReadTokens, u.OutputTokens)
	if u.CostUSD != nil {
		line += fmt.Sprintf(", $%.4f", *u.CostUSD)
	}
	if t.MaxCostUSDPerDay > 0 {
		line += fmt.Sprintf(" of the day's budget $%g", t.MaxCostUSDPerDay)
	}
	if t.MaxCostUSDPerSession > 0 {
		line += fmt.Sprintf("; $%g a session", t.MaxCostUSDPerSession)
	}
	return line
}

// mcpLine is status's line on an MCP server.
func mcpLine(m protocol.MCPServerStatus) string {
	line := fmt.Sprintf("%s %s, %d tools", m.Name, m.State, m.Tools)
	if m.ProtocolVersion != "" {
		line += ", MCP " + m.ProtocolVersion
	}
	if m.PerSession {
		line += ", session " + m.SessionID
	}
	for _, h := range m.Hidden {
		line += fmt.Sprintf("; %s hidden: %s", h.Name, h.Why)
	}
	if m.Error != "" {
		line += ": " + m.Error
	}
	return line
}

// sandboxLine is status's line on how commands are confined.
func sandboxLine(s protocol.SandboxStatus) string {
	if s.EnforcedBy == "none" {
		line := "none: commands run with all your rights"
		if s.Mode != "off" {
			line = "unavailable: commands are refused"
		}
		if s.Reason != "" {
			line += " (" + s.Reason + ")"
		}
		return line
	}
	net := "network allowed"
	if !s.Network {
		net = "no network"
	}
	line := fmt.Sprintf("%s, %s, enforced by %s", s.Mode, net, s.EnforcedBy)
	if s.Reason != "" {
		line += " (" + s.Reason + ")"
	}
	return line
}
