package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/acp"
	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// stdio is the editor's end: ACP in on stdin, out on stdout.
type stdio struct {
	io.Reader
	io.Writer
}

func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func acpCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "acp", Short: "serve the Agent Client Protocol on stdio (for editors such as Zed)",
		Long: `zeroclaw acp speaks the Agent Client Protocol on stdin/stdout: set it as
the agent command of your editor. It bridges to the daemon (starting one
when none answers); sessions outlive the editor.`}
	fs := c.Flags()
	agentAlias := fs.String("agent", "default", "agent alias from the config")
	noStart := fs.Bool("no-start", false, "do not start a daemon when none is running")
	// An unknown word: the error envelope of the seed under json.
	jsonOut := fs.String("output-format", "text", "text or json (of errors)")
	fs.MarkHidden("output-format")
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		if len(args) > 0 {
			msg := fmt.Sprintf("unknown acp subcommand %q (try: zeroclaw acp, zeroclaw acp status)", args[0])
			if *jsonOut == "json" {
				b, _ := json.Marshal(map[string]any{"type": "error", "kind": "unsupported_acp_invocation", "exit_code": 1, "message": msg})
				fmt.Fprintln(env.Stderr, string(b))
				return console.Exitf(1, "")
			}
			return console.Exitf(1, "%s", msg)
		}
		return runACP(ctx, env, g.configDir, *agentAlias, *noStart)
	})
	st := &cobra.Command{Use: "status", Short: "say whether and how ACP is served", Args: noArgs}
	format := st.Flags().String("output-format", "text", "text or json")
	st.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		return runACPStatus(env, g.configDir, *format)
	})
	c.AddCommand(st)
	return c
}

func runACP(ctx context.Context, env console.Env, configDir, agentAliasValue string, noStartValue bool) error {
	agentAlias, noStart := &agentAliasValue, &noStartValue
	log := newLogger(env.Stderr, env.Getenv)
	dial := func(ctx context.Context, h jsonrpc.Handler, caps *protocol.ClientCapabilities, editor string) (*client.Client, error) {
		dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		return connect(dctx, env, configDir, *noStart, client.Options{
			ClientInfo: protocol.ClientInfo{Name: acpClientName(editor), Version: Version}, Capabilities: caps, Handler: h})
	}
	// The editor ends the session by closing stdin: that is a clean exit,
	// whatever the read loop reports; anything else is logged.
	if err := acp.Serve(ctx, stdio{env.Stdin, env.Stdout}, acp.Options{Version: Version, AgentAlias: *agentAlias, Dial: dial, Logger: log}); err != nil && !errors.Is(err, io.EOF) {
		log.Debug("acp connection ended", "err", err)
	}
	return nil
}

func runACPStatus(env console.Env, configDir, formatValue string) error {
	format := &formatValue
	if err := outputFormat(*format); err != nil {
		return err
	}
	dirs, err := resolve(env, configDir)
	if err != nil {
		return err
	}
	if *format == "json" {
		b, _ := json.Marshal(map[string]any{
			"schema_version": "1.0", "kind": "acp", "status": "supported", "phase": "stdio_bridge",
			"supported": true, "exit_code": 0, "serve_alias_only": false,
			"protocol": map[string]any{"name": "ACP/Zed", "version": acp.ProtocolVersion, "json_rpc": true, "daemon": true,
				"endpoint": dirs.Endpoint, "serve_starts_daemon": true},
		})
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	fmt.Fprintf(env.Stdout, "ACP (Agent Client Protocol) v%d: supported\n", acp.ProtocolVersion)
	fmt.Fprintln(env.Stdout, "run `zeroclaw acp` as the agent command of your editor; it speaks ACP on stdio")
	fmt.Fprintf(env.Stdout, "and bridges to the daemon at %s (starting one when none answers).\n", dirs.Endpoint)
	return nil
}

// acpClientName is how the daemon names an editor's connection to other
// clients: the editor's own name, through ACP.
func acpClientName(editor string) string {
	if editor == "" {
		return "zeroclaw-acp"
	}
	return editor + " (acp)"
}
