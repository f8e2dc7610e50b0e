package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/mcpauth"
)

// mcpCmd logs in to remote MCP servers that want OAuth, and out.
func mcpCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "mcp", Short: "log in to (and out of) remote MCP servers that want an OAuth login", Args: noArgs}
	var noBrowser bool
	var timeout time.Duration
	var scopes []string
	server := func(env console.Env, name string) (config.Dirs, config.MCPServer, error) {
		dirs, err := resolve(env, g.configDir)
		if err != nil {
			return dirs, config.MCPServer{}, err
		}
		cfg, err := config.Load(dirs.ConfigFile(), env.Getenv)
		if err != nil {
			return dirs, config.MCPServer{}, err
		}
		s, ok := cfg.MCP.Servers[name]
		switch {
		case !ok:
			return dirs, s, fmt.Errorf("no MCP server %q in %s", name, dirs.ConfigFile())
		case s.URL == "":
			return dirs, s, fmt.Errorf("MCP server %s is a command, not a url: only a remote server takes a login", name)
		}
		return dirs, s, nil
	}
	login := &cobra.Command{Use: "login NAME", Short: "log in to a configured url server (OAuth: the browser, then the daemon uses the login)", Args: exactArgs(1, "the server's name in config.toml"),
		Long: `zeroclaw mcp login NAME runs OAuth's authorization-code flow with PKCE
against the authorization server the MCP server names: it registers
zeroclaw as a client (or uses oauth_client_id, or the client ID metadata
document of oauth_client_metadata_url where the authorization server
takes one), prints the address to log
in at and opens it in a browser (not with --no-browser), waits for the
browser to come back to a port on 127.0.0.1, checks the login by listing
the server's tools, and keeps the tokens in the data dir (mcp-logins/,
readable by you only). The daemon uses them at once (a server that was
waiting for a login starts again) and renews them as they expire.
When a server refuses a call for want of scopes, its error names them:
--scope asks for them too, with those the login had (a step-up).`,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, s, err := server(env, args[0])
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			store := mcpauth.In(dirs.DataDir)
			// A step-up keeps what the login before had.
			want := strings.Fields(strings.Join(scopes, " "))
			if old, err := store.Load(args[0]); err == nil && old != nil && old.URL == s.URL && len(want) > 0 {
				want = mcpauth.Union(old.Scopes, want)
			}
			res, err := mcpauth.Flow{Server: args[0], URL: s.URL, ClientID: s.OAuthClientID, ClientSecret: s.OAuthClientSecret,
				ClientMetadataURL: s.OAuthClientMetadataURL, Scopes: want,
				Client: &http.Client{Transport: withHeaders(s.URL, s.Headers)},
				Open: func(u string) error {
					fmt.Fprintf(env.Stdout, "Log in to %s at this address:\n%s\n", args[0], u)
					if !noBrowser {
						if err := openBrowser(u); err != nil {
							fmt.Fprintf(env.Stderr, "(no browser opened: %v; open the address yourself)\n", err)
						}
					}
					fmt.Fprintln(env.Stdout, "Waiting for the browser to come back...")
					return nil
				}}.Run(ctx)
			if err != nil {
				return err
			}
			if err := store.Save(res.Login); err != nil {
				return fmt.Errorf("keeping the login: %w", err)
			}
			tools := "tools"
			if res.Tools == 1 {
				tools = "tool"
			}
			fmt.Fprintf(env.Stdout, "Logged in to %s (%d %s); the daemon uses the login from now on.\n", args[0], res.Tools, tools)
			return nil
		})}
	login.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the address to log in at")
	login.Flags().StringArrayVar(&scopes, "scope", nil, "scopes to ask for besides those the server names (space-separated; with those of the login before)")
	login.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait for the login")
	logout := &cobra.Command{Use: "logout NAME", Short: "forget a server's login (its tokens in the data dir)", Args: exactArgs(1, "the server's name in config.toml"),
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			dirs, err := resolve(env, g.configDir)
			if err != nil {
				return err
			}
			gone, err := mcpauth.In(dirs.DataDir).Remove(args[0])
			if err != nil {
				return err
			}
			if !gone {
				return fmt.Errorf("no login kept for %s", args[0])
			}
			fmt.Fprintf(env.Stdout, "Logged out of %s.\n", args[0])
			return nil
		})}
	c.AddCommand(login, logout)
	return c
}

// withHeaders adds a server's configured headers to the login's requests
// to the server's host (never to another: they may hold secrets).
func withHeaders(server string, h map[string]string) http.RoundTripper {
	su, err := url.Parse(server)
	if len(h) == 0 || err != nil {
		return http.DefaultTransport
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Scheme != su.Scheme || r.URL.Host != su.Host {
			return http.DefaultTransport.RoundTrip(r)
		}
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return http.DefaultTransport.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// openBrowser opens u in the user's browser.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
