package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/talk"
)

func mustQuote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// sessionsCmd lists, shows and deletes sessions.
func sessionsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "sessions", Short: "list, show, rewind, fork, export or delete sessions", Args: noArgs}
	var o sessionsOptions
	pf := c.PersistentFlags()
	pf.StringVar(&o.format, "output-format", "text", "text or json")
	pf.BoolVar(&o.noStart, "no-start", false, "do not start a daemon when none is running")
	sub := func(use, short string, args cobra.PositionalArgs) *cobra.Command {
		verb, _, _ := strings.Cut(use, " ")
		return &cobra.Command{Use: use, Short: short, Args: args,
			RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
				return runSessions(ctx, env, g.configDir, o, verb, args)
			})}
	}
	rewind := sub("rewind ID [TURN]", "put the files and the conversation back to before a turn (or, with --undo, undo the last rewind)", rangeArgs(1, 2, "a session id and a turn"))
	rewind.Flags().BoolVar(&o.undo, "undo", false, "undo the last rewind")
	rewind.Flags().BoolVar(&o.force, "force", false, "overwrite files changed since the turn")
	rewind.Flags().BoolVar(&o.filesOnly, "files-only", false, "leave the conversation as it is")
	rewind.Flags().BoolVar(&o.conversationOnly, "conversation-only", false, "leave the files as they are")
	fork := sub("fork ID", "start a new session from a session's conversation (up to --at-seq)", exactArgs(1, "one session id"))
	fork.Flags().Int64Var(&o.atSeq, "at-seq", 0, "fork at this event (inside a turn: at the turn's start); default: all of it")
	fork.Flags().StringVar(&o.newID, "new-id", "", "the new session's id")
	export := sub("export ID", "write a session as a document", exactArgs(1, "one session id"))
	export.Flags().StringVar(&o.exportFormat, "format", "md", "md, json or html")
	export.Flags().StringVarP(&o.out, "output", "o", "", "write to this file (default: standard output)")
	c.AddCommand(
		sub("list", "list every session, most recent first", noArgs),
		sub("show ID", "print a session's history", exactArgs(1, "one session id")),
		sub("delete ID", "delete a session and its history", exactArgs(1, "one session id")),
		sub("checkpoints ID", "list a session's turns and the files each changed", exactArgs(1, "one session id")),
		sub("diff ID [TURN]", "show what a turn (or the whole session) changed, as a unified diff", rangeArgs(1, 2, "a session id and a turn")),
		rewind, fork, export,
	)
	// sessions alone lists.
	c.RunE = run(g, func(ctx context.Context, env console.Env, args []string) error {
		return runSessions(ctx, env, g.configDir, o, "list", args)
	})
	return c
}

type sessionsOptions struct {
	format  string
	noStart bool
	// rewind
	undo, force, filesOnly, conversationOnly bool
	// fork
	atSeq int64
	newID string
	// export
	exportFormat, out string
}

func runSessions(ctx context.Context, env console.Env, configDir string, o sessionsOptions, verb string, args []string) error {
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
		_, err := c.Replay(ctx, id, 0, 0, func(e json.RawMessage, _ protocol.SessionUpdate) error {
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
	case "checkpoints", "diff", "rewind":
		return runCheckpoints(ctx, env, c, o, verb, args)
	case "fork":
		var res protocol.SessionForkResult
		if err := c.Call(ctx, protocol.MethodSessionFork, protocol.SessionForkParams{SessionID: args[0], AtSeq: o.atSeq, NewSessionID: o.newID}, &res); err != nil {
			return err
		}
		if *format == "json" {
			printJSON(res)
		} else {
			fmt.Fprintf(env.Stdout, "forked %s into %s (zeroclaw chat --session %s)\n", args[0], res.SessionID, res.SessionID)
		}
	case "export":
		f := o.exportFormat
		if f == "md" {
			f = "markdown"
		}
		var res protocol.SessionExportResult
		if err := c.Call(ctx, protocol.MethodSessionExport, protocol.SessionExportParams{SessionID: args[0], Format: f}, &res); err != nil {
			return err
		}
		if o.out == "" {
			fmt.Fprint(env.Stdout, res.Content)
			return nil
		}
		if err := os.WriteFile(o.out, []byte(res.Content), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "wrote %s (%d bytes)\n", o.out, len(res.Content))
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

// runCheckpoints serves sessions checkpoints, diff and rewind: on the
// session, attached.
func runCheckpoints(ctx context.Context, env console.Env, c *client.Client, o sessionsOptions, verb string, args []string) error {
	id := args[0]
	turn := 0
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return console.Exitf(2, "%q is not a turn number (from 1: zeroclaw sessions checkpoints %s lists them)", args[1], id)
		}
		turn = n
	}
	if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: id, KeepSiblings: true}, nil); err != nil {
		return err
	}
	printJSON := func(v any) {
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
	}
	switch verb {
	case "checkpoints":
		var res protocol.SessionCheckpointsResult
		if err := c.Call(ctx, protocol.MethodSessionCheckpoints, protocol.SessionRef{SessionID: id}, &res); err != nil {
			return err
		}
		if o.format == "json" {
			printJSON(res)
			return nil
		}
		for _, cp := range res.Checkpoints {
			mark := ""
			if cp.Rewound {
				mark = " (rewound)"
			}
			fmt.Fprintf(env.Stdout, "turn %d  %s  %s%s\n", cp.Turn, time.UnixMilli(cp.StartedMs).Format("2006-01-02 15:04"), cp.Title, mark)
			for _, f := range cp.Files {
				fmt.Fprintf(env.Stdout, "  %-8s %s (%d → %d bytes)\n", f.Change, f.Path, f.BytesBefore, f.BytesAfter)
			}
			for _, p := range cp.Uncaptured {
				fmt.Fprintf(env.Stdout, "  not kept %s\n", p)
			}
		}
	case "diff":
		var res protocol.SessionDiffResult
		if err := c.Call(ctx, protocol.MethodSessionDiff, protocol.SessionDiffParams{SessionID: id, Turn: turn}, &res); err != nil {
			return err
		}
		if o.format == "json" {
			printJSON(res)
			return nil
		}
		fmt.Fprint(env.Stdout, res.Diff)
	case "rewind":
		if turn == 0 && !o.undo {
			return console.Exitf(2, "give the turn to rewind to (zeroclaw sessions checkpoints %s lists them), or --undo", id)
		}
		p := protocol.SessionRewindParams{SessionID: id, Turn: turn, Force: o.force, Undo: o.undo}
		no := false
		if o.filesOnly {
			p.Conversation = &no
		}
		if o.conversationOnly {
			p.Files = &no
		}
		var res protocol.SessionRewindResult
		if err := c.Call(ctx, protocol.MethodSessionRewind, p, &res); err != nil {
			return err
		}
		if o.format == "json" {
			printJSON(res)
		} else {
			for _, f := range res.Restored {
				fmt.Fprintf(env.Stdout, "restored %s\n", f)
			}
			for _, f := range res.Removed {
				fmt.Fprintf(env.Stdout, "removed  %s\n", f)
			}
		}
		if !res.Rewound {
			var b strings.Builder
			for _, c := range res.Conflicts {
				fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Reason)
			}
			return fmt.Errorf("nothing was rewound: files changed since the agent's turn (--force overwrites them):%s", b.String())
		}
		if len(res.Restored)+len(res.Removed) == 0 && o.format != "json" {
			fmt.Fprintln(env.Stdout, "nothing to restore: the files are as they were")
		}
	}
	return nil
}
