package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func exitPlan(plan string) string {
	b, _ := json.Marshal(map[string]string{"plan": plan})
	return "/tool exit_plan " + string(b)
}

// The plan mode's end: exit_plan writes the plan to the session's next
// plan file and tells it (a plan event), then asks the user with the
// plan's own choices (never the reviewer's to answer): keep planning
// with feedback (their words answered in the same turn, the mode kept),
// proceed in the accept-edits mode or the ask mode (the session's mode
// switched at once, stored); a decision not offered is refused.
func TestExitPlanWritesTellsAndAsks(t *testing.T) {
	h := newHarness(t, func(cfg *config.Config) {
		reviewed(cfg)
		a := cfg.Agents["default"]
		a.Risk = protocol.RiskPlan
		cfg.Agents["default"] = a
	})
	ctx := context.Background()
	cl, c := h.client(t, "c1")
	cwd := t.TempDir()
	if _, err := h.m.New(ctx, cl, protocol.SessionNewParams{SessionID: "p", Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	mode := func() string {
		t.Helper()
		r, err := h.m.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Risk
	}
	// run prompts plan, answers its request with decision (and
	// feedback), and returns the plan event and the turn's result.
	run := func(plan, decision, feedback string) (protocol.PlanEvent, protocol.SessionPromptResult) {
		t.Helper()
		skip := len(c.events(t))
		done, err := h.m.Prompt(cl, "p", exitPlan(plan))
		if err != nil {
			t.Fatal(err)
		}
		ev := waitFor[protocol.PlanEvent](t, c, skip)
		req := waitFor[protocol.ApprovalRequestEvent](t, c, skip)
		if req.Kind != protocol.KindPlan || req.Review != nil || strings.Join(req.Options, ",") != strings.Join(protocol.PlanDecisions, ",") {
			t.Errorf("the plan's request: %+v", req)
		}
		if ok, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "p", RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); ok || err == nil {
			t.Errorf("a decision the plan does not offer: %v %v", ok, err)
		}
		if ok, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "p", RequestID: req.RequestID, Decision: decision, Feedback: feedback}); !ok || err != nil {
			t.Fatalf("approve %s: %v %v", decision, ok, err)
		}
		return ev, <-done
	}

	ev, r := run("1. look\n2. write", protocol.DecisionKeepPlanning, "add tests too")
	if ev.Path != ".zeroclaw/plans/p-1.md" || ev.Text != "1. look\n2. write" {
		t.Errorf("the plan event: %+v", ev)
	}
	if b, err := os.ReadFile(filepath.Join(cwd, ev.Path)); err != nil || string(b) != ev.Text {
		t.Errorf("the plan's file: %q %v", b, err)
	}
	if r.Content != "echo: add tests too" || mode() != protocol.RiskPlan {
		t.Errorf("keep planning: %q, mode %s", r.Content, mode())
	}
	var steered bool
	for _, e := range c.events(t) {
		if u, ok := e.Event.(protocol.UserMessageEvent); ok && u.Text == "add tests too" && u.Steered && e.TurnID == r.TurnID {
			steered = true
		}
	}
	if !steered {
		t.Error("the feedback did not join the turn as the user's message")
	}

	ev, r = run("1. write", protocol.DecisionProceedEdits, "")
	if ev.Path != ".zeroclaw/plans/p-2.md" || !strings.Contains(r.Content, "The user approved the plan (.zeroclaw/plans/p-2.md)") || !strings.Contains(r.Content, "accept edits mode") {
		t.Errorf("proceed with edits: %+v %q", ev, r.Content)
	}
	if m := mode(); m != protocol.RiskEdits {
		t.Errorf("the mode after proceed_accept_edits: %s", m)
	}
	if rec, _ := h.st.GetSession(ctx, "p"); rec.Risk != protocol.RiskEdits {
		t.Errorf("the stored mode: %q", rec.Risk)
	}

	plan := protocol.RiskPlan
	if _, err := h.m.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: "p", Risk: &plan}); err != nil {
		t.Fatal(err)
	}
	_, r = run("1. ask first", protocol.DecisionProceedAsk, "")
	if !strings.Contains(r.Content, "ask mode") || mode() != protocol.RiskSupervised {
		t.Errorf("proceed asking: %q, mode %s", r.Content, mode())
	}
	for _, e := range c.events(t) {
		if _, ok := e.Event.(protocol.ApprovalReviewedEvent); ok {
			t.Errorf("the plan was reviewed: %+v", e)
		}
	}
}
