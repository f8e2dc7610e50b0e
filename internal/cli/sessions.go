package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/talk"
)

func mustQuote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// sessionsCmd lists, shows and deletes sessions.
func sessionsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "sessions", Short: "list, show or delete sessions", Args: noArgs}
	var o sessionsOptions
	pf := c.PersistentFlags()
	pf.StringVar(&o.format, "output-format", "text", "text or json")
	pf.BoolVar(&o.noStart, "no-start", false, "do not start a daemon when none is running")
	sub := func(use, short string, args cobra.PositionalArgs) *cobra.Command {
		verb, _, _ := strings.Cut(use, " ")
		return &cobra.Command{Use: use, Short: short, Args: args,
			RunE: run(g, func(ctx context.Context, env Env, args []string) error {
				return runSessions(ctx, env, g.configDir, o, verb, args)
			})}
	}
	c.AddCommand(
		sub("list", "list every session, most recent first", noArgs),
		sub("show ID", "print a session's history", exactArgs(1, "one session id")),
		sub("delete ID", "delete a session and its history", exactArgs(1, "one session id")),
	)
	// sessions alone lists.
	c.RunE = run(g, func(ctx context.Context, env Env, args []string) error {
		return runSessions(ctx, env, g.configDir, o, "list", args)
	})
	return c
}

type sessionsOptions struct {
	format  string
	noStart bool
}

func runSessions(ctx context.Context, env Env, configDir string, o sessionsOptions, verb string, args []string) error {
	format, noStart := &o.format, &o.noStart
	if err := outputFormat(*format); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := connect(ctx, env, configDir, *noStart, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-sessions", Version: Version}})
	if err != nil {
		return err
	}
	defer c.Close()
	printJSON := func(v any) {
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	}
	switch verb {
	case "list":
		var all []protocol.SessionInfo
		if err := c.EachSession(ctx, func(s protocol.SessionInfo) bool { all = append(all, s); return true }); err != nil {
			return err
		}
		if *format == "json" {
			if all == nil {
				all = []protocol.SessionInfo{}
			}
			printJSON(all)
			return nil
		}
		if len(all) == 0 {
			fmt.Fprintln(env.Stdout, "no sessions")
		}
		for _, s := range all {
			live := ""
			if s.Live {
				live = " live"
			}
			fmt.Fprintf(env.Stdout, "%s  %s  %-11s %s%s  %d events  %s%s\n", s.SessionID,
				time.UnixMilli(s.UpdatedMs).Format("2006-01-02 15:04"), s.State, s.Mode, live, s.LastSeq, costOf(s.Usage), s.Title)
		}
	case "show":
		id := args[0]
		// Streamed as replayed: a session of a million events or of
		// multi-MiB tool outputs shows in bounded memory.
		if *format != "json" {
			return talk.Show(ctx, c, id, env.Stdout)
		}
		n := 0
		_, err := c.Replay(ctx, id, 0, 0, func(e json.RawMessage, u *protocol.Update) error {
			sep := ",\n    "
			if n == 0 {
				sep = "{\n  \"sessionId\": " + string(mustQuote(id)) + ",\n  \"events\": [\n    "
			}
			fmt.Fprintf(env.Stdout, "%s%s", sep, protocol.CompactJSON(e))
			n++
			return nil
		})
		if err != nil {
			return err
		}
		if n == 0 {
			fmt.Fprintf(env.Stdout, "{\n  \"sessionId\": %s,\n  \"events\": [", mustQuote(id))
		}
		fmt.Fprintln(env.Stdout, "\n  ]\n}")
		return nil
	case "delete":
		if err := c.DeleteSession(ctx, args[0]); err != nil {
			return err
		}
		d := protocol.SessionDeleteResult{SessionID: args[0], Deleted: true}
		if *format == "json" {
			printJSON(d)
		} else {
			fmt.Fprintf(env.Stdout, "deleted %s\n", d.SessionID)
		}
	}
	return nil
}

// costOf is a session's cost for the list ("$0.1234  "), "" when no
// price is known.
func costOf(u *protocol.Usage) string {
	if u == nil || u.CostUSD == nil {
		return ""
	}
	return fmt.Sprintf("$%.4f  ", *u.CostUSD)
}
