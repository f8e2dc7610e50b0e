package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// scheduleCmd adds, lists, runs, pauses and removes schedules: prompts
// run at due times (see docs/protocol.md, "schedule/create").
func scheduleCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "schedule", Short: "run a prompt at due times: add, list, run, pause, resume, rm", Args: noArgs}
	var format string
	var noStart bool
	pf := c.PersistentFlags()
	pf.StringVar(&format, "output-format", "text", "text or json")
	pf.BoolVar(&noStart, "no-start", false, "do not start a daemon when none is running")
	call := func(ctx context.Context, env console.Env, method string, params, result any) error {
		return callDaemon(ctx, env, g, format, noStart, "zeroclaw-schedule", nil, method, params, result)
	}
	show := func(env console.Env, s protocol.Schedule, verb string) {
		if format == "json" {
			b, _ := json.MarshalIndent(s, "", "  ")
			fmt.Fprintln(env.Stdout, string(b))
			return
		}
		fmt.Fprintf(env.Stdout, "%s %s: %s\n", verb, s.ScheduleID, scheduleLine(s))
	}

	var session, agent, cwd, tz, missed, until, approve string
	var maxRuns int
	var disabled bool
	add := &cobra.Command{Use: "add (CRON | every DURATION | at TIME) PROMPT...",
		Short: `add a schedule: "0 9 * * 1-5", "@daily", every 10m, at 17:30 (or an RFC 3339 time); it runs in --session, else in a new session per run`,
		Args:  rangeArgs(2, 1<<20, "a when (a cron expression, every DURATION or at TIME) and a prompt"),
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			var f protocol.ScheduleFields
			switch args[0] {
			case "every", "at":
				if len(args) < 3 {
					return console.Exitf(2, "%s wants a value and then the prompt", args[0])
				}
				if args[0] == "every" {
					f.Every = args[1]
				} else {
					f.At = args[1]
				}
				args = args[2:]
			default:
				f.Cron = args[0]
				args = args[1:]
			}
			f.Prompt = strings.Join(args, " ")
			f.Timezone, f.Missed, f.Until, f.MaxRuns, f.Approve = tz, missed, until, maxRuns, approve
			if disabled {
				f.Enabled = new(bool)
			}
			if session != "" {
				f.SessionID = session
			} else {
				dir, err := absDir(cwd)
				if err != nil {
					return err
				}
				if dir == "" {
					dir, _ = os.Getwd()
				}
				f.NewSession = &protocol.ScheduleNewSession{AgentAlias: agent, Cwd: dir}
			}
			var res protocol.ScheduleResult
			if err := call(ctx, env, protocol.MethodScheduleCreate, f, &res); err != nil {
				return err
			}
			show(env, res.Schedule, "added")
			if format == "text" {
				fmt.Fprintln(env.Stdout, "It fires while a daemon runs; a due time that passes while none runs follows --missed ("+res.Schedule.Missed+") at the next start.")
			}
			if !serviceInstalled(env, g) {
				// A daemon the CLI starts leaves once its clients and
				// its work are gone: nothing fires after that.
				fmt.Fprintln(env.Stderr, "note: schedules need a running daemon, and no user service is installed to keep one; install it with 'zeroclaw daemon install'")
			}
			return nil
		})}
	af := add.Flags()
	af.StringVar(&session, "session", "", "run every run in this session (else a new session per run)")
	af.StringVar(&agent, "agent", "", "the agent of a new session per run (default: the default agent)")
	af.StringVar(&cwd, "cwd", "", "the directory of a new session per run (default: this one)")
	af.StringVar(&tz, "tz", "", "the time zone a cron expression or a local at is read in (default: the daemon's)")
	af.StringVar(&missed, "missed", "", "what a due time missed while no daemon ran becomes: skip (default) or once (one catch-up run)")
	af.StringVar(&until, "until", "", "no run after this RFC 3339 time")
	af.IntVar(&maxRuns, "max-runs", 0, "no more runs than this (0: no limit)")
	af.StringVar(&approve, "approve", "", "ask (a run waits for an approval; default) or rules (only what permission rules allow runs)")
	af.BoolVar(&disabled, "disabled", false, "add it paused")

	list := &cobra.Command{Use: "list", Short: "list the schedules: when, the next run, the last one", Args: noArgs,
		RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
			var res protocol.ScheduleListResult
			for cursor := ""; ; {
				var page protocol.ScheduleListResult
				if err := call(ctx, env, protocol.MethodScheduleList, protocol.ScheduleListParams{Cursor: cursor}, &page); err != nil {
					return err
				}
				res.Schedules = append(res.Schedules, page.Schedules...)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if format == "json" {
				b, _ := json.MarshalIndent(res.Schedules, "", "  ")
				fmt.Fprintln(env.Stdout, string(b))
				return nil
			}
			if len(res.Schedules) == 0 {
				fmt.Fprintln(env.Stdout, "no schedules (zeroclaw schedule add)")
			}
			for _, s := range res.Schedules {
				fmt.Fprintf(env.Stdout, "%s  %s\n", s.ScheduleID, scheduleLine(s))
			}
			return nil
		})}
	byID := func(use, short, method string, fields func(id string) any, verb string) *cobra.Command {
		return &cobra.Command{Use: use + " ID", Short: short, Args: exactArgs(1, "one schedule id (zeroclaw schedule list shows them)"),
			RunE: run(g, func(ctx context.Context, env console.Env, args []string) error {
				if method == protocol.MethodScheduleDelete {
					var res protocol.ScheduleDeleteResult
					if err := call(ctx, env, method, protocol.ScheduleRef{ScheduleID: args[0]}, &res); err != nil {
						return err
					}
					if !res.Deleted {
						return fmt.Errorf("no schedule %s (zeroclaw schedule list shows them)", args[0])
					}
					if format == "json" {
						fmt.Fprintln(env.Stdout, `{"deleted":true}`)
					} else {
						fmt.Fprintf(env.Stdout, "removed %s\n", args[0])
					}
					return nil
				}
				var res protocol.ScheduleResult
				if err := call(ctx, env, method, fields(args[0]), &res); err != nil {
					return err
				}
				show(env, res.Schedule, verb)
				return nil
			})}
	}
	ref := func(id string) any { return protocol.ScheduleRef{ScheduleID: id} }
	enable := func(on bool) func(string) any {
		return func(id string) any {
			return protocol.ScheduleUpdateParams{ScheduleID: id, ScheduleFields: protocol.ScheduleFields{Enabled: &on}}
		}
	}
	c.AddCommand(add, list,
		byID("run", "fire a run now (its next due time stays)", protocol.MethodScheduleRun, ref, "running"),
		byID("pause", "keep a schedule without running it", protocol.MethodScheduleUpdate, enable(false), "paused"),
		byID("resume", "run a paused schedule again (its failures forgotten; the next run counted from now)", protocol.MethodScheduleUpdate, enable(true), "resumed"),
		byID("rm", "remove a schedule", protocol.MethodScheduleDelete, ref, "removed"))
	c.RunE = list.RunE
	return c
}

// scheduleLine says a schedule in one line: when, where, its next and
// last runs.
func scheduleLine(s protocol.Schedule) string {
	when := s.When()
	if s.Timezone != "" {
		when += " (" + s.Timezone + ")"
	}
	where := "a new session per run"
	if s.SessionID != "" {
		where = "session " + s.SessionID
	}
	line := fmt.Sprintf("%s, in %s: %q", when, where, firstLineOf(s.Prompt))
	switch {
	case s.PausedReason != "":
		line += "; paused: " + s.PausedReason
	case s.Enabled != nil && !*s.Enabled:
		line += "; paused"
	case s.NextRunMs > 0:
		line += "; next " + time.UnixMilli(s.NextRunMs).Local().Format("2006-01-02 15:04:05")
	default:
		line += "; no more runs"
	}
	if r := s.LastRun; r != nil {
		line += fmt.Sprintf("; last %s (%s)", r.State, time.UnixMilli(r.DueMs).Local().Format("01-02 15:04:05"))
		if r.Reason != "" {
			line += ": " + r.Reason
		}
	}
	if w := s.Waiting; w != nil {
		line += fmt.Sprintf("; waiting for an approval (%s in %s)", w.RequestID, w.SessionID)
	}
	return line + fmt.Sprintf("; %d runs", s.Runs)
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}
