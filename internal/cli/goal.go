package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// goalCmd sets, shows, pauses, resumes and clears a session's goal (see
// docs/protocol.md, "session/goal").
func goalCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "goal", Short: "a session's goal: set, status, pause, resume, clear", Args: noArgs}
	var format, session string
	var noStart bool
	pf := c.PersistentFlags()
	pf.StringVar(&format, "output-format", "text", "text or json")
	pf.StringVar(&session, "session", "", "the session (required)")
	pf.BoolVar(&noStart, "no-start", false, "do not start a daemon when none is running")
	call := func(ctx context.Context, env console.Env, method string, params, result any) error {
		if session == "" {
			return console.Exitf(2, "--session ID is required (zeroclaw sessions list shows them)")
		}
		// The goal's methods need the session attached.
		attach := func(ctx context.Context, c *client.Client) error {
			_, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: session, KeepSiblings: true})
			return err
		}
		return callDaemon(ctx, env, g, format, noStart, "zeroclaw-goal", attach, method, params, result)
	}
	show := func(env console.Env, goal *protocol.Goal) {
		if format == "json" {
			b, _ := json.MarshalIndent(goal, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return
		}
		if goal == nil {
			fmt.Fprintln(env.Stdout, "no goal (zeroclaw goal set --session ID OBJECTIVE)")
			return
		}
		fmt.Fprintln(env.Stdout, goalSummary(*goal))
	}
	var usd, minutes float64
	var turns int
	var tokens int64
	var keep bool
	set := &cobra.Command{Use: "set OBJECTIVE...", Short: "give the session a goal: it works toward it turn after turn, within the budget",
		Args: rangeArgs(1, 1<<20, "the objective"),
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			p := protocol.SessionGoalParams{SessionID: session, Objective: strings.Join(args, " "), Keep: keep}
			var b protocol.GoalBudget
			if usd > 0 {
				b.USD = &usd
			}
			if turns > 0 {
				b.Turns = &turns
			}
			if minutes > 0 {
				b.Minutes = &minutes
			}
			if tokens > 0 {
				b.Tokens = &tokens
			}
			if b != (protocol.GoalBudget{}) {
				p.Budget = &b
			}
			var res protocol.SessionGoalResult
			if err := call(ctx, env, protocol.MethodSessionGoal, p, &res); err != nil {
				return err
			}
			show(env, res.Goal)
			return nil
		})}
	sf := set.Flags()
	sf.Float64Var(&usd, "budget", 0, "at most this many USD")
	sf.IntVar(&turns, "turns", 0, "at most this many turns")
	sf.Float64Var(&minutes, "minutes", 0, "at most this many minutes")
	sf.Int64Var(&tokens, "tokens", 0, "at most this many tokens")
	sf.BoolVar(&keep, "keep", false, "what the goal's turns start (background processes, sub-agents) runs on after it ends")
	status := &cobra.Command{Use: "status", Short: "the session's goal: its state, turns and spending", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			var info protocol.SessionInfo
			if err := call(ctx, env, protocol.MethodSessionGet, protocol.SessionRef{SessionID: session}, &info); err != nil {
				return err
			}
			show(env, info.Goal)
			return nil
		})}
	control := func(verb, short string) *cobra.Command {
		return &cobra.Command{Use: verb, Short: short, Args: noArgs,
			RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
				var res protocol.SessionGoalResult
				if err := call(ctx, env, "session/goal/"+verb, protocol.SessionRef{SessionID: session}, &res); err != nil {
					return err
				}
				show(env, res.Goal)
				return nil
			})}
	}
	var keepOnClear bool
	clear := &cobra.Command{Use: "clear", Short: "drop the goal (what its turns started is stopped unless --keep)", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			var res protocol.SessionGoalResult
			if err := call(ctx, env, protocol.MethodSessionGoalClear, protocol.SessionGoalClearParams{SessionID: session, Keep: keepOnClear}, &res); err != nil {
				return err
			}
			show(env, res.Goal)
			return nil
		})}
	clear.Flags().BoolVar(&keepOnClear, "keep", false, "keep what the goal's turns started (background processes, sub-agents) running")
	c.AddCommand(set, status, control("pause", "no more goal turns until resumed (a running one ends as it would)"),
		control("resume", "go on with a paused or blocked goal"), clear)
	c.RunE = status.RunE
	return c
}

// goalSummary says a goal in one line.
func goalSummary(g protocol.Goal) string {
	s := fmt.Sprintf("%s after %s", strings.ReplaceAll(g.State, "_", " "), protocol.TurnsText(g.Turns))
	if b := g.Budget; b.USD != nil {
		s += fmt.Sprintf(", $%.4f of $%.2f", g.Spent.USD, *b.USD)
	} else if g.Spent.USD > 0 {
		s += fmt.Sprintf(", $%.4f", g.Spent.USD)
	}
	if b := g.Budget; b.Turns != nil {
		s += fmt.Sprintf(" (at most %d turns)", *b.Turns)
	}
	if g.Summary != "" {
		s += ": " + g.Summary
	} else if g.Reason != "" {
		s += ": " + g.Reason
	}
	obj, _, _ := strings.Cut(g.Objective, "\n")
	return s + " — " + obj
}
