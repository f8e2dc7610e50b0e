// Package plan is the plan mode's end: the exit_plan tool's host. The
// plan is written under the plan directory (<cwd>/.zeroclaw/plans/
// <session>-<n>.md) and told (a plan event with its text and path), then
// the user is asked (an approval_request of kind plan): proceed in the
// ask mode, proceed in the accept-edits mode (the session's mode
// switches at once), or keep planning, whose feedback joins the turn as
// the user's message (a steer), answered in the same turn.
//
// It takes part in the sessions' turns as a session.Participant: a turn
// that starts in the plan mode gets exit_plan and its host.
package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Exit gives the turns that start in the plan mode their exit_plan.
type Exit struct{ session.Moments }

// New makes the plan mode's end and joins it to every session of m's
// turns. The daemon joins it after the other participants, so exit_plan
// comes after their tools.
func New(m *session.Manager) *Exit {
	e := &Exit{}
	m.Join(e)
	return e
}

// TurnStarting implements session.Participant: a turn that starts in
// the plan mode gets exit_plan, with the session as its host.
func (*Exit) TurnStarting(s *session.Session, _ string, a *agent.Agent) {
	if s.Mode() != protocol.RiskPlan {
		return
	}
	a.Tools = append(a.Tools[:len(a.Tools):len(a.Tools)], tool.ExitPlan)
	a.PlanExit = host{s}
}

// host is a session's tool.PlanExit.
type host struct{ s *session.Session }

func (h host) ExitPlan(ctx context.Context, callID, plan string) (string, error) {
	s := h.s
	if risk := s.Mode(); risk != protocol.RiskPlan {
		return "", fmt.Errorf("the session is not in the plan mode now (%s)", risk)
	}
	rel, err := write(s.Cwd(), s.ID(), plan)
	if err != nil {
		return "", err
	}
	s.Publish(protocol.PlanEvent{Entries: []protocol.PlanEntry{}, Text: plan, Path: rel})
	input, _ := json.Marshal(map[string]string{"plan": plan})
	d := s.Approve(ctx, agent.ApprovalRequest{ToolCallID: callID, ToolName: "exit_plan", Input: input, Summary: "Proceed with this plan?",
		Kind: protocol.KindPlan, Rule: "the plan mode asks before it ends", Options: protocol.PlanDecisions})
	switch d.Choice {
	case protocol.DecisionProceedAsk, protocol.DecisionProceedEdits:
		mode := protocol.RiskSupervised
		if d.Choice == protocol.DecisionProceedEdits {
			mode = protocol.RiskEdits
		}
		if err := s.SetMode(mode); err != nil {
			return "", err
		}
		return fmt.Sprintf("The user approved the plan (%s). The session is now in the %s mode: carry the plan out now, step by step.", rel, gate.ModeName(mode)), nil
	case protocol.DecisionKeepPlanning:
		if fb := strings.TrimSpace(d.Feedback); fb != "" {
			// Their words join this turn, answered before it ends.
			s.SteerRunning(fb)
			return "The user wants more planning; their message follows. Stay in the plan mode and call exit_plan again with the plan revised.", nil
		}
		return "The user wants more planning. Stay in the plan mode and call exit_plan again with the plan revised.", nil
	}
	return "The plan was not approved (" + d.Why + "). Stay in the plan mode.", nil
}

// write writes plan to session id's next plan file under cwd and
// returns its path relative to cwd. The plan directory must really be
// one: a symbolic link on the way (a cloned repo's .zeroclaw/plans ->
// .. or -> /elsewhere) is refused, and the file is made through an
// os.Root of cwd, so nothing it names can take the write out of the
// project.
func write(cwd, id, plan string) (string, error) {
	dir := filepath.Join(cwd, agent.PlanDir)
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return "", fmt.Errorf("the plan's directory: %w", err)
	}
	defer root.Close()
	at := ""
	for _, part := range strings.Split(filepath.FromSlash(agent.PlanDir), string(filepath.Separator)) {
		at = filepath.Join(at, part)
		fi, err := root.Lstat(at)
		switch {
		case os.IsNotExist(err):
			if err := root.Mkdir(at, 0o755); err != nil && !os.IsExist(err) {
				return "", fmt.Errorf("the plan's directory: %w", err)
			}
			continue
		case err != nil:
			return "", fmt.Errorf("the plan's directory: %w", err)
		case !fi.IsDir():
			return "", fmt.Errorf("the plan's directory: %s is not a directory (a symbolic link?): plans are written only in a real %s", filepath.Join(cwd, at), agent.PlanDir)
		}
	}
	for n := 1; n < 100000; n++ {
		rel := filepath.Join(agent.PlanDir, fmt.Sprintf("%s-%d.md", id, n))
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("the plan's file: %w", err)
		}
		_, err = f.WriteString(plan)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("the plan's file: %w", err)
		}
		return filepath.ToSlash(rel), nil
	}
	return "", fmt.Errorf("too many plans in %s", dir)
}
