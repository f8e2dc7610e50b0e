package session

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The plan mode's end (exit_plan): the plan is written to
// <cwd>/.zeroclaw/plans/<session>-<n>.md and told (a plan event with its
// text and path), then the user is asked (an approval_request of kind
// plan): proceed in the ask mode, proceed in the accept-edits mode (the
// session's mode switches at once), or keep planning, whose feedback
// joins the turn as the user's message (a steer), answered in the same
// turn.

// planHost is the session's tool.PlanExit.
type planHost struct{ s *Session }

// planTools gives a turn that starts in plan mode its exit_plan.
func (s *Session) planTools(a *agent.Agent) {
	if a.RiskNow() != protocol.RiskPlan {
		return
	}
	a.Tools = append(a.Tools[:len(a.Tools):len(a.Tools)], tool.ExitPlan)
	a.PlanExit = planHost{s}
}

func (h planHost) ExitPlan(ctx context.Context, callID, plan string) (string, error) {
	s := h.s
	s.mu.Lock()
	risk := cmp.Or(s.risk, s.agent.Risk)
	s.mu.Unlock()
	if risk != protocol.RiskPlan {
		return "", fmt.Errorf("the session is not in the plan mode now (%s)", risk)
	}
	rel, err := s.writePlan(plan)
	if err != nil {
		return "", err
	}
	s.emit(protocol.PlanEvent{Entries: []protocol.PlanEntry{}, Text: plan, Path: rel})
	input, _ := json.Marshal(map[string]string{"plan": plan})
	d := s.Approve(ctx, agent.ApprovalRequest{ToolCallID: callID, ToolName: "exit_plan", Input: input, Summary: "Proceed with this plan?",
		Kind: protocol.KindPlan, Rule: "the plan mode asks before it ends", Options: protocol.PlanDecisions})
	switch d.Choice {
	case protocol.DecisionProceedAsk, protocol.DecisionProceedEdits:
		mode := protocol.RiskSupervised
		if d.Choice == protocol.DecisionProceedEdits {
			mode = protocol.RiskEdits
		}
		if err := s.setRisk(mode); err != nil {
			return "", err
		}
		return fmt.Sprintf("The user approved the plan (%s). The session is now in the %s mode: carry the plan out now, step by step.", rel, gate.ModeName(mode)), nil
	case protocol.DecisionKeepPlanning:
		if fb := strings.TrimSpace(d.Feedback); fb != "" {
			// Their words join this turn, answered before it ends.
			s.t.steer(steer{text: fb}, "")
			return "The user wants more planning; their message follows. Stay in the plan mode and call exit_plan again with the plan revised.", nil
		}
		return "The user wants more planning. Stay in the plan mode and call exit_plan again with the plan revised.", nil
	}
	return "The plan was not approved (" + d.Why + "). Stay in the plan mode.", nil
}

// writePlan writes plan to the session's next plan file and returns its
// path relative to the session's directory.
func (s *Session) writePlan(plan string) (string, error) {
	dir := filepath.Join(s.cwd, agent.PlanDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("the plan's directory: %w", err)
	}
	for n := 1; n < 100000; n++ {
		rel := filepath.Join(agent.PlanDir, fmt.Sprintf("%s-%d.md", s.id, n))
		f, err := os.OpenFile(filepath.Join(s.cwd, rel), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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

// setRisk switches the session's mode (stored), as session/configure
// does.
func (s *Session) setRisk(risk string) error {
	s.mu.Lock()
	model, reasoning := s.model, s.reasoning
	s.mu.Unlock()
	if err := s.m.store.SetConfig(s.id, model, risk, reasoning); err != nil {
		return err
	}
	s.mu.Lock()
	s.risk = risk
	s.mu.Unlock()
	return nil
}
