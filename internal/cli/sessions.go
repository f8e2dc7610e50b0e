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

// sessionsCmd lists, shows and deletes sessions: each verb is a
// subcommand with its own function (cobra routes; nothing routes again).
func sessionsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "sessions", Short: "list, show, rewind, fork, export or delete sessions", Args: noArgs}
	var o sessionsOptions
	pf := c.PersistentFlags()
	pf.StringVar(&o.format, "output-format", "text", "text or json")
	pf.BoolVar(&o.noStart, "no-start", false, "do not start a daemon when none is running")
	verb := func(f func(s *sessionsCall, args []string) error) func(*cobra.Command, []string) error {
		return run(g, func(ctx context.Context, env console.Env, args []string) error {
			return withSessions(ctx, env, g.configDir, o, func(s *sessionsCall) error { return f(s, args) })
		})
	}
	sub := func(use, short string, args cobra.PositionalArgs, f func(s *sessionsCall, args []string) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: args, RunE: verb(f)}
	}
	rewind := sub("rewind ID [TURN]", "put the files and the conversation back to before a turn (or, with --undo, undo the last rewind)", rangeArgs(1, 2, "a session id and a turn"), (*sessionsCall).rewind)
	rewind.Flags().BoolVar(&o.undo, "undo", false, "undo the last rewind")
	rewind.Flags().BoolVar(&o.force, "force", false, "overwrite files changed since the turn")
	rewind.Flags().BoolVar(&o.filesOnly, "files-only", false, "leave the conversation as it is")
	rewind.Flags().BoolVar(&o.conversationOnly, "conversation-only", false, "leave the files as they are")
	fork := sub("fork ID", "start a new session from a session's conversation (up to --at-seq)", exactArgs(1, "one session id"), (*sessionsCall).fork)
	fork.Flags().Int64Var(&o.atSeq, "at-seq", 0, "fork at this event (inside a turn: at the turn's start); default: all of it")
	fork.Flags().StringVar(&o.newID, "new-id", "", "the new session's id")
	export := sub("export ID", "write a session as a document", exactArgs(1, "one session id"), (*sessionsCall).export)
	export.Flags().StringVar(&o.exportFormat, "format", "md", "md, json or html")
	export.Flags().StringVarP(&o.out, "output", "o", "", "write to this file (default: standard output)")
	c.AddCommand(
		sub("list", "list every session, most recent first", noArgs, (*sessionsCall).list),
		sub("show ID", "print a session's history", exactArgs(1, "one session id"), (*sessionsCall).show),
		sub("delete ID", "delete a session and its history", exactArgs(1, "one session id"), (*sessionsCall).delete),
		sub("checkpoints ID", "list a session's turns and the files each changed", exactArgs(1, "one session id"), (*sessionsCall).checkpoints),
		sub("diff ID [TURN]", "show what a turn (or the whole session) changed, as a unified diff", rangeArgs(1, 2, "a session id and a turn"), (*sessionsCall).diff),
		rewind, fork, export,
	)
	// sessions alone lists.
	c.RunE = verb((*sessionsCall).list)
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

// sessionsCall is one sessions subcommand at work: its options and the
// daemon connection.
type sessionsCall struct {
	ctx context.Context
	env console.Env
	c   *client.Client
	o   sessionsOptions
}

// withSessions connects (starting a daemon unless --no-start) and runs f.
func withSessions(ctx context.Context, env console.Env, configDir string, o sessionsOptions, f func(s *sessionsCall) error) error {
	if err := outputFormat(o.format); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c, err := connect(ctx, env, configDir, o.noStart, client.Options{ClientInfo: protocol.ClientInfo{Name: "zeroclaw-sessions", Version: Version}})
	if err != nil {
		return err
	}
	defer c.Close()
	return f(&sessionsCall{ctx: ctx, env: env, c: c, o: o})
}

func (s *sessionsCall) json() bool { return s.o.format == "json" }

func (s *sessionsCall) printJSON(v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintln(s.env.Stdout, string(b))
}

func (s *sessionsCall) list([]string) error {
	var all []protocol.SessionInfo
	if err := s.c.EachSession(s.ctx, func(si protocol.SessionInfo) bool { all = append(all, si); return true }); err != nil {
		return err
	}
	if s.json() {
		if all == nil {
			all = []protocol.SessionInfo{}
		}
		s.printJSON(all)
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintln(s.env.Stdout, "no sessions")
	}
	for _, si := range all {
		live := ""
		if si.Live {
			live = " live"
		}
		fmt.Fprintf(s.env.Stdout, "%s  %s  %-11s %s%s  %d events  %s%s\n", si.SessionID,
			time.UnixMilli(si.UpdatedMs).Format("2006-01-02 15:04"), si.State, si.Mode, live, si.LastSeq, costOf(si.Usage), si.Title)
	}
	return nil
}

// show prints a session's history, streamed as replayed: a session of a
// million events or of multi-MiB tool outputs shows in bounded memory.
func (s *sessionsCall) show(args []string) error {
	id := args[0]
	if !s.json() {
		return talk.Show(s.ctx, s.c, id, s.env.Stdout)
	}
	n := 0
	_, err := s.c.Replay(s.ctx, id, 0, 0, func(e json.RawMessage, _ protocol.SessionUpdate) error {
		sep := ",\n    "
		if n == 0 {
			sep = "{\n  \"sessionId\": " + string(mustQuote(id)) + ",\n  \"events\": [\n    "
		}
		fmt.Fprintf(s.env.Stdout, "%s%s", sep, protocol.CompactJSON(e))
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(s.env.Stdout, "{\n  \"sessionId\": %s,\n  \"events\": [", mustQuote(id))
	}
	fmt.Fprintln(s.env.Stdout, "\n  ]\n}")
	return nil
}

func (s *sessionsCall) fork(args []string) error {
	var res protocol.SessionForkResult
	if err := s.c.Call(s.ctx, protocol.MethodSessionFork, protocol.SessionForkParams{SessionID: args[0], AtSeq: s.o.atSeq, NewSessionID: s.o.newID}, &res); err != nil {
		return err
	}
	if s.json() {
		s.printJSON(res)
	} else {
		fmt.Fprintf(s.env.Stdout, "forked %s into %s (zeroclaw chat --session %s)\n", args[0], res.SessionID, res.SessionID)
	}
	return nil
}

func (s *sessionsCall) export(args []string) error {
	f := s.o.exportFormat
	if f == "md" {
		f = "markdown"
	}
	var res protocol.SessionExportResult
	if err := s.c.Call(s.ctx, protocol.MethodSessionExport, protocol.SessionExportParams{SessionID: args[0], Format: f}, &res); err != nil {
		return err
	}
	if s.o.out == "" {
		fmt.Fprint(s.env.Stdout, res.Content)
		return nil
	}
	if err := os.WriteFile(s.o.out, []byte(res.Content), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(s.env.Stderr, "wrote %s (%d bytes)\n", s.o.out, len(res.Content))
	return nil
}

func (s *sessionsCall) delete(args []string) error {
	if err := s.c.DeleteSession(s.ctx, args[0]); err != nil {
		return err
	}
	d := protocol.SessionDeleteResult{SessionID: args[0], Deleted: true}
	if s.json() {
		s.printJSON(d)
	} else {
		fmt.Fprintf(s.env.Stdout, "deleted %s\n", d.SessionID)
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

// attach opens the session named by args[0] here (checkpoints, diff and
// rewind act on it) and reads the optional turn in args[1] (0 when none).
func (s *sessionsCall) attach(args []string) (string, int, error) {
	id := args[0]
	turn := 0
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return "", 0, console.Exitf(2, "%q is not a turn number (from 1: zeroclaw sessions checkpoints %s lists them)", args[1], id)
		}
		turn = n
	}
	if err := s.c.Call(s.ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: id, KeepSiblings: true}, nil); err != nil {
		return "", 0, err
	}
	return id, turn, nil
}

func (s *sessionsCall) checkpoints(args []string) error {
	id, _, err := s.attach(args)
	if err != nil {
		return err
	}
	var res protocol.SessionCheckpointsResult
	if err := s.c.Call(s.ctx, protocol.MethodSessionCheckpoints, protocol.SessionRef{SessionID: id}, &res); err != nil {
		return err
	}
	if s.json() {
		s.printJSON(res)
		return nil
	}
	for _, cp := range res.Checkpoints {
		mark := ""
		if cp.Rewound {
			mark = " (rewound)"
		}
		fmt.Fprintf(s.env.Stdout, "turn %d  %s  %s%s\n", cp.Turn, time.UnixMilli(cp.StartedMs).Format("2006-01-02 15:04"), cp.Title, mark)
		for _, f := range cp.Files {
			fmt.Fprintf(s.env.Stdout, "  %-8s %s (%d → %d bytes)\n", f.Change, f.Path, f.BytesBefore, f.BytesAfter)
		}
		for _, p := range cp.Uncaptured {
			fmt.Fprintf(s.env.Stdout, "  not kept %s\n", p)
		}
	}
	return nil
}

func (s *sessionsCall) diff(args []string) error {
	id, turn, err := s.attach(args)
	if err != nil {
		return err
	}
	var res protocol.SessionDiffResult
	if err := s.c.Call(s.ctx, protocol.MethodSessionDiff, protocol.SessionDiffParams{SessionID: id, Turn: turn}, &res); err != nil {
		return err
	}
	if s.json() {
		s.printJSON(res)
		return nil
	}
	fmt.Fprint(s.env.Stdout, res.Diff)
	return nil
}

func (s *sessionsCall) rewind(args []string) error {
	id, turn, err := s.attach(args)
	if err != nil {
		return err
	}
	o := s.o
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
	if err := s.c.Call(s.ctx, protocol.MethodSessionRewind, p, &res); err != nil {
		return err
	}
	if s.json() {
		s.printJSON(res)
	} else {
		for _, f := range res.Restored {
			fmt.Fprintf(s.env.Stdout, "restored %s\n", f)
		}
		for _, f := range res.Removed {
			fmt.Fprintf(s.env.Stdout, "removed  %s\n", f)
		}
	}
	if !res.Rewound {
		var b strings.Builder
		for _, c := range res.Conflicts {
			fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Reason)
		}
		if len(res.Processes) > 0 {
			for _, p := range res.Processes {
				fmt.Fprintf(&b, "\n  %s (pid %d): %s", p.ID, p.Pid, p.Command)
			}
			return fmt.Errorf("nothing was rewound: background processes those turns started still run (--force stops them first):%s", b.String())
		}
		return fmt.Errorf("nothing was rewound: files changed since the agent's turn (--force overwrites them):%s", b.String())
	}
	if len(res.Restored)+len(res.Removed) == 0 && !s.json() {
		fmt.Fprintln(s.env.Stdout, "nothing to restore: the files are as they were")
	}
	return nil
}
