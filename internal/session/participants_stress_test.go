package session_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/continuation"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/hooks"
	"github.com/zeroclaw/zeroclaw/internal/plan"
	"github.com/zeroclaw/zeroclaw/internal/processes"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/rewind"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/subagents"
)

// The lock-order stress with every feature at once: besides the
// package's own operations, goals set, paused, resumed and cleared (their
// turns starting when nothing else waits), sub-agents in the foreground
// and the background (their progress told to parents that close under
// them), background processes started, read, written and killed, a
// schedule's notes and the approval it waits for, the mode switched (a
// plan-mode turn gets exit_plan), and turns' checkpoints listed, diffed,
// rewound and undone (each turn's checkpoint kept, the hooks told of
// every moment), and what continuation reads at a start (open inputs, a
// cut attempt's events), all on the same few sessions, under the race
// detector.
func TestLockOrderUnderStressWithEveryFeature(t *testing.T) {
	var gs *goals.Goals
	var cps *rewind.Checkpoints
	var db *store.Store
	join := func(m *session.Manager, st *store.Store) {
		db = st
		gs = goals.New(m, st, nil)
		subagents.New(m, st, nil)
		cps = rewind.New(m, st, nil)
		hooks.New(m, nil)
		plan.New(m)
	}
	ops := []session.StressOp{
		// A goal set, then paused, resumed or cleared (its turns start
		// when nothing else waits).
		func(_ context.Context, r *rand.Rand, _ *session.Manager, cl *session.Client, id, _ string) (string, error) {
			turns := 2
			if _, err := gs.Set(cl, protocol.SessionGoalParams{SessionID: id, Objective: "stress the locks", Budget: &protocol.GoalBudget{Turns: &turns}}); err != nil {
				return "goal", err
			}
			var err error
			switch r.IntN(3) {
			case 0:
				_, err = gs.Pause(cl, id)
			case 1:
				_, err = gs.Resume(cl, id)
			default:
				_, err = gs.Clear(cl, id, false)
			}
			if err == nil {
				return "goal changed", nil
			}
			return "goal", nil
		},
		// A sub-agent, in the foreground or the background.
		func(_ context.Context, r *rand.Rand, m *session.Manager, cl *session.Client, id, _ string) (string, error) {
			line := `/tool task {"description":"look","prompt":"/tool list_dir {}\n/chunks 5"}`
			if r.IntN(2) == 0 {
				line = `/tool task {"description":"behind","prompt":"/chunks 10","background":true}`
			}
			p, err := m.Submit(cl, id, session.Input{Text: line})
			if err == nil {
				go func() { <-p.Done }()
			}
			return "task", err
		},
		// A background process, and the calls about it.
		func(_ context.Context, r *rand.Rand, m *session.Manager, cl *session.Client, id, _ string) (string, error) {
			if r.IntN(2) == 0 {
				p, err := m.Submit(cl, id, session.Input{Text: `/tool shell {"command":"read -r x; echo $x","background":true}`})
				if err == nil {
					go func() { <-p.Done }()
				}
				return "process start", err
			}
			list, err := processes.List(m, cl, id)
			if err != nil || len(list.Processes) == 0 {
				return "", err
			}
			pid := list.Processes[0].ID
			switch r.IntN(3) {
			case 0:
				_, err = processes.Output(m, cl, protocol.ProcessOutputParams{SessionID: id, ID: pid})
			case 1:
				_, err = processes.Write(m, cl, protocol.ProcessWriteParams{SessionID: id, ID: pid, Input: "x\n"})
			default:
				_, err = processes.Kill(m, cl, protocol.ProcessKillParams{SessionID: id, ID: pid})
			}
			return "process call", err
		},
		// What a schedule does to a session: a note, the approval it
		// waits for.
		func(_ context.Context, _ *rand.Rand, m *session.Manager, _ *session.Client, id, _ string) (string, error) {
			m.Waiting(id)
			return "schedule note", m.Note(id, protocol.ScheduleUpdateEvent{ScheduleID: "sch_stress", Run: protocol.ScheduleRun{SessionID: id}})
		},
		// The mode switched, a turn running or not.
		func(ctx context.Context, r *rand.Rand, m *session.Manager, cl *session.Client, id, _ string) (string, error) {
			risk := []string{protocol.RiskSupervised, protocol.RiskPlan, protocol.RiskFull}[r.IntN(3)]
			_, err := m.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: id, Risk: &risk})
			return "mode", err
		},
		// The checkpoints listed, a turn's diff, a rewind or its undo. A
		// rewind refused while a turn runs, or for want of a turn to go
		// back to or of a rewind to undo, went for the turn slot all the
		// same: it counts.
		func(ctx context.Context, r *rand.Rand, _ *session.Manager, cl *session.Client, id, _ string) (string, error) {
			var err error
			switch r.IntN(6) {
			case 0:
				_, err = cps.List(ctx, cl, id)
				return "checkpoints", err
			case 1:
				_, err = cps.Diff(ctx, cl, protocol.SessionDiffParams{SessionID: id, Turn: 1})
				return "diff", err
			case 2, 3:
				_, err = cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: id, Undo: true})
			default:
				_, err = cps.Rewind(ctx, cl, protocol.SessionRewindParams{SessionID: id, Turn: 1, Force: true})
			}
			if pe := (*protocol.ParamsError)(nil); errors.As(err, &pe) || errors.Is(err, session.ErrBusy) {
				err = nil
			}
			return "rewind", err
		},
	}
	ops = append(ops,
		// What continuation reads of a session at a start (its open
		// inputs, what a cut attempt left in its events), while its
		// turns and everything else go on.
		func(ctx context.Context, _ *rand.Rand, m *session.Manager, cl *session.Client, id, _ string) (string, error) {
			s, err := m.Lookup(cl, id)
			if err != nil {
				return "", err
			}
			open, err := s.OpenInputs(ctx)
			if err != nil {
				return "continuation", err
			}
			for _, o := range open {
				if o.Cut != nil {
					if err := continuation.ReadCut(ctx, db, id, o.Cut); err != nil {
						return "continuation", err
					}
				}
			}
			return "continuation", continuation.ReadCut(ctx, db, id, &session.Cut{TurnID: "turn_any", Since: 1})
		})
	session.Stress(t, join, ops, []string{"goal changed", "task", "process start", "schedule note", "mode", "rewind", "continuation"})
}
