package talk

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// /goal and /schedule: the session's goal (session/goal) and the
// schedules that run in it (schedule/*).

// goal shows the session's goal, sets one (/goal OBJECTIVE [--budget
// $N] [--turns N] [--minutes N] [--tokens N] [--keep]), or pauses,
// resumes or clears it (/goal clear [--keep]: what its turns started
// runs on).
func (ch *chat) goal(ctx context.Context, _, arg string) error {
	sid := ch.cv.r.sessionID
	arg = strings.TrimSpace(arg)
	var res protocol.SessionGoalResult
	switch arg {
	case "":
		var g protocol.SessionInfo
		if err := ch.cv.c.Call(ctx, protocol.MethodSessionGet, protocol.SessionRef{SessionID: sid}, &g); err != nil {
			return err
		}
		if g.Goal == nil {
			ch.say("no goal (/goal OBJECTIVE [--budget $5] [--turns N] [--minutes N] [--tokens N] sets one)")
			return nil
		}
		ch.say(goalLine(*g.Goal))
		return nil
	case "pause", "resume", "clear":
		if err := ch.cv.c.Call(ctx, "session/goal/"+arg, protocol.SessionRef{SessionID: sid}, &res); err != nil {
			return err
		}
		ch.say(goalLine(*res.Goal))
		return nil
	case "clear --keep":
		if err := ch.cv.c.Call(ctx, protocol.MethodSessionGoalClear, protocol.SessionGoalClearParams{SessionID: sid, Keep: true}, &res); err != nil {
			return err
		}
		ch.say(goalLine(*res.Goal))
		return nil
	}
	p := protocol.SessionGoalParams{SessionID: sid, Budget: &protocol.GoalBudget{}}
	var words []string
	fields := strings.Fields(arg)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "--keep" {
			p.Keep = true
			continue
		}
		if !strings.HasPrefix(f, "--") || i+1 == len(fields) {
			words = append(words, f)
			continue
		}
		v := fields[i+1]
		i++
		switch f {
		case "--budget":
			usd, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
			if err != nil {
				return fmt.Errorf("--budget %q: an amount in USD, such as $5", v)
			}
			p.Budget.USD = &usd
		case "--turns":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("--turns %q: a number", v)
			}
			p.Budget.Turns = &n
		case "--minutes":
			m, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("--minutes %q: a number", v)
			}
			p.Budget.Minutes = &m
		case "--tokens":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("--tokens %q: a number", v)
			}
			p.Budget.Tokens = &n
		default:
			words = append(words, f, v)
		}
	}
	if *p.Budget == (protocol.GoalBudget{}) {
		p.Budget = nil
	}
	// The objective as typed, less the budget's flags (its lines kept).
	p.Objective = arg
	if len(words) != len(fields) {
		p.Objective = strings.Join(words, " ")
	}
	if err := ch.cv.c.Call(ctx, protocol.MethodSessionGoal, p, &res); err != nil {
		return err
	}
	ch.say(goalLine(*res.Goal))
	ch.note("the session works toward it turn after turn; /goal pause, /goal clear")
	return nil
}

// goalLine says a goal in one line.
func goalLine(g protocol.Goal) string {
	s := fmt.Sprintf("goal %s, %s", strings.ReplaceAll(g.State, "_", " "), protocol.TurnsText(g.Turns))
	b := g.Budget
	if b.USD != nil {
		s += fmt.Sprintf(", $%.4f of $%.2f", g.Spent.USD, *b.USD)
	} else if g.Spent.USD > 0 {
		s += fmt.Sprintf(", $%.4f", g.Spent.USD)
	}
	if b.Turns != nil {
		s += fmt.Sprintf(" (of %d)", *b.Turns)
	}
	if g.Reason != "" {
		s += ": " + g.Reason
	}
	if g.Summary != "" {
		s += ": " + g.Summary
	}
	if g.Stopped > 0 {
		s += fmt.Sprintf(" (stopped %d it started)", g.Stopped)
	}
	if g.Keep {
		s += " (what it started runs on)"
	}
	obj, _, _ := strings.Cut(g.Objective, "\n")
	return s + " — " + obj
}

// schedule lists the schedules that run in this session, or adds one
// (/schedule every 10m PROMPT, at 17:30 PROMPT, "CRON" PROMPT), or runs,
// pauses, resumes or removes one by id.
func (ch *chat) schedule(ctx context.Context, _, arg string) error {
	sid := ch.cv.r.sessionID
	arg = strings.TrimSpace(arg)
	word, rest, _ := strings.Cut(arg, " ")
	rest = strings.TrimSpace(rest)
	var res protocol.ScheduleResult
	switch word {
	case "":
		n := 0
		for cursor := ""; ; {
			var l protocol.ScheduleListResult
			if err := ch.cv.c.Call(ctx, protocol.MethodScheduleList, protocol.ScheduleListParams{Cursor: cursor}, &l); err != nil {
				return err
			}
			for _, s := range l.Schedules {
				if s.SessionID == sid {
					ch.say(s.ScheduleID + "  " + scheduleSummary(s))
					n++
				}
			}
			if cursor = l.NextCursor; cursor == "" {
				break
			}
		}
		if n == 0 {
			ch.say("no schedules run in this session (/schedule every 10m PROMPT, at 17:30 PROMPT, \"0 9 * * 1-5\" PROMPT)")
		}
		return nil
	case "run", "pause", "resume", "rm":
		if rest == "" {
			return fmt.Errorf("/schedule %s wants a schedule's id (/schedule lists them)", word)
		}
		var err error
		switch word {
		case "run":
			err = ch.cv.c.Call(ctx, protocol.MethodScheduleRun, protocol.ScheduleRef{ScheduleID: rest}, &res)
		case "rm":
			var d protocol.ScheduleDeleteResult
			if err = ch.cv.c.Call(ctx, protocol.MethodScheduleDelete, protocol.ScheduleRef{ScheduleID: rest}, &d); err == nil {
				if !d.Deleted {
					return fmt.Errorf("no schedule %s", rest)
				}
				ch.say("removed " + rest)
				return nil
			}
		default:
			on := word == "resume"
			err = ch.cv.c.Call(ctx, protocol.MethodScheduleUpdate, protocol.ScheduleUpdateParams{ScheduleID: rest, ScheduleFields: protocol.ScheduleFields{Enabled: &on}}, &res)
		}
		if err != nil {
			return err
		}
		ch.say(res.Schedule.ScheduleID + "  " + scheduleSummary(res.Schedule))
		return nil
	}
	f := protocol.ScheduleFields{SessionID: sid}
	switch word {
	case "every", "at":
		v, prompt, _ := strings.Cut(rest, " ")
		if word == "every" {
			f.Every = v
		} else {
			f.At = v
		}
		f.Prompt = strings.TrimSpace(prompt)
	default:
		if !strings.HasPrefix(arg, `"`) {
			return fmt.Errorf("/schedule every DURATION PROMPT, at TIME PROMPT or \"CRON\" PROMPT (the cron expression in quotes)")
		}
		q, err := strconv.QuotedPrefix(arg)
		if err != nil {
			return fmt.Errorf("the cron expression's quotes do not close")
		}
		f.Cron, _ = strconv.Unquote(q)
		f.Prompt = strings.TrimSpace(arg[len(q):])
	}
	if f.Prompt == "" {
		return fmt.Errorf("a schedule wants a prompt after its when")
	}
	if err := ch.cv.c.Call(ctx, protocol.MethodScheduleCreate, f, &res); err != nil {
		return err
	}
	ch.say("added " + res.Schedule.ScheduleID + "  " + scheduleSummary(res.Schedule))
	return nil
}

// scheduleSummary says a schedule: when, its next and last runs.
func scheduleSummary(s protocol.Schedule) string {
	when := s.When()
	prompt, _, _ := strings.Cut(strings.TrimSpace(s.Prompt), "\n")
	line := when + ": " + prompt
	switch {
	case s.PausedReason != "":
		line += " (paused: " + s.PausedReason + ")"
	case s.Enabled != nil && !*s.Enabled:
		line += " (paused)"
	case s.NextRunMs > 0:
		line += " (next " + time.UnixMilli(s.NextRunMs).Local().Format("Jan 2 15:04") + ")"
	}
	if r := s.LastRun; r != nil {
		line += ", last " + r.State
	}
	if s.Waiting != nil {
		line += ", waiting for an approval"
	}
	return line
}
