package plan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/review"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
)

func exitPlan(plan string) string {
	b, _ := json.Marshal(map[string]string{"plan": plan})
	return "/tool exit_plan " + string(b)
}

// planned is a config with the default agent in the plan mode and a
// second echo agent as the reviewer of its approval requests.
func planned(cfg *config.Config) {
	a := cfg.Agents["default"]
	a.Risk = protocol.RiskPlan
	cfg.Agents["default"] = a
	cfg.Agents["reviewer"] = a
	cfg.Approvals.Reviewer = "reviewer"
	cfg.Daemon.ApprovalTimeoutSecs = 60
}

// start is a daemon's Manager with the reviewer and the plan mode's end
// joined, and a client of it.
func start(t *testing.T, tune func(*config.Config)) (*sessiontest.Harness, *sessiontest.Daemon, *session.Client, *sessiontest.Conn) {
	t.Helper()
	h := sessiontest.New(t, tune)
	h.Reviewer = review.Reviewer{}
	d := h.Start(t, func(m *session.Manager) { New(m) })
	cl, c := sessiontest.Client(t, "c1", "")
	return h, d, cl, c
}

// The plan mode's end: exit_plan writes the plan to the session's next
// plan file and tells it (a plan event), then asks the user with the
// plan's own choices (never the reviewer's to answer): keep planning
// with feedback (their words answered in the same turn, the mode kept)
// or without, proceed in the accept-edits mode or the ask mode (the
// session's mode switched at once, stored); a decision not offered is
// refused.
func TestExitPlanWritesTellsAndAsks(t *testing.T) {
	h, d, cl, c := start(t, planned)
	ctx := context.Background()
	cwd := t.TempDir()
	if _, err := d.M.New(ctx, cl, protocol.SessionNewParams{SessionID: "p", Cwd: cwd}); err != nil {
		t.Fatal(err)
	}
	mode := func() string {
		t.Helper()
		r, err := d.M.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Risk
	}
	// run prompts plan, answers its request with decision (and
	// feedback), and returns the plan event and the turn's result.
	run := func(plan, decision, feedback string) (protocol.PlanEvent, protocol.SessionPromptResult) {
		t.Helper()
		done, err := d.M.Prompt(cl, "p", exitPlan(plan))
		if err != nil {
			t.Fatal(err)
		}
		ev := sessiontest.Of[protocol.PlanEvent](t, c, "p", nil)
		req := sessiontest.Of[protocol.ApprovalRequestEvent](t, c, "p", nil)
		if req.Kind != protocol.KindPlan || req.Review != nil || strings.Join(req.Options, ",") != strings.Join(protocol.PlanDecisions, ",") {
			t.Errorf("the plan's request: %+v", req)
		}
		if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: "p", RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); ok || err == nil {
			t.Errorf("a decision the plan does not offer: %v %v", ok, err)
		}
		if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: "p", RequestID: req.RequestID, Decision: decision, Feedback: feedback}); !ok || err != nil {
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
	for _, e := range c.All(t) {
		if u, ok := e.Event.(protocol.UserMessageEvent); ok && u.Text == "add tests too" && u.Steered && e.TurnID == r.TurnID {
			steered = true
		}
	}
	if !steered {
		t.Error("the feedback did not join the turn as the user's message")
	}

	ev, r = run("1. again", protocol.DecisionKeepPlanning, " ")
	if ev.Path != ".zeroclaw/plans/p-2.md" || !strings.Contains(r.Content, "The user wants more planning. Stay in the plan mode") || mode() != protocol.RiskPlan {
		t.Errorf("keep planning with no feedback: %+v %q, mode %s", ev, r.Content, mode())
	}

	ev, r = run("1. write", protocol.DecisionProceedEdits, "")
	if ev.Path != ".zeroclaw/plans/p-3.md" || !strings.Contains(r.Content, "The user approved the plan (.zeroclaw/plans/p-3.md)") || !strings.Contains(r.Content, "accept edits mode") {
		t.Errorf("proceed with edits: %+v %q", ev, r.Content)
	}
	if m := mode(); m != protocol.RiskEdits {
		t.Errorf("the mode after proceed_accept_edits: %s", m)
	}
	if rec, _ := h.Store.GetSession(ctx, "p"); rec.Risk != protocol.RiskEdits {
		t.Errorf("the stored mode: %q", rec.Risk)
	}
	// Every client is told, as the agent's switch, in its turn.
	var told []string
	for _, e := range c.All(t) {
		if u, ok := e.Event.(protocol.ConfigUpdateEvent); ok {
			told = append(told, u.Risk+" by "+u.By+" in "+e.TurnID)
		}
	}
	if want := protocol.RiskEdits + " by agent in " + r.TurnID; len(told) != 1 || told[0] != want {
		t.Errorf("the switch was told %q, want [%s]", told, want)
	}

	plan := protocol.RiskPlan
	if _, err := d.M.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: "p", Risk: &plan}); err != nil {
		t.Fatal(err)
	}
	_, r = run("1. ask first", protocol.DecisionProceedAsk, "")
	if !strings.Contains(r.Content, "ask mode") || mode() != protocol.RiskSupervised {
		t.Errorf("proceed asking: %q, mode %s", r.Content, mode())
	}
	for _, e := range c.All(t) {
		if _, ok := e.Event.(protocol.ApprovalReviewedEvent); ok {
			t.Errorf("the plan was reviewed: %+v", e)
		}
	}
}

// exit_plan is a plan-mode turn's only: a turn that starts in another
// mode gets neither the tool nor its host, and a host asked once the
// mode has switched refuses.
func TestExitPlanOnlyInThePlanMode(t *testing.T) {
	_, d, cl, _ := start(t, func(cfg *config.Config) {
		a := cfg.Agents["default"]
		a.Risk = protocol.RiskSupervised
		cfg.Agents["default"] = a
	})
	id := d.Open(t, cl, "")
	s, err := d.M.Lookup(cl, id)
	if err != nil {
		t.Fatal(err)
	}
	var a agent.Agent
	(&Exit{}).TurnStarting(s, "", &a)
	if len(a.Tools) != 0 || a.PlanExit != nil {
		t.Errorf("outside the plan mode: tools %v, host %v", a.Tools, a.PlanExit)
	}
	if _, err := (host{s}).ExitPlan(context.Background(), "call_1", "1. go"); err == nil || err.Error() != "the session is not in the plan mode now (supervised)" {
		t.Errorf("exit_plan outside the plan mode: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Cwd(), ".zeroclaw")); !os.IsNotExist(err) {
		t.Errorf("a plan was written outside the plan mode: %v", err)
	}

	if err := s.SetMode(protocol.RiskPlan); err != nil {
		t.Fatal(err)
	}
	(&Exit{}).TurnStarting(s, "", &a)
	if len(a.Tools) != 1 || a.Tools[0].Spec().Name != "exit_plan" || a.PlanExit == nil {
		t.Errorf("in the plan mode: tools %v, host %v", a.Tools, a.PlanExit)
	}
}

// A plan nobody answers (the turn ends while it waits) is not approved:
// the model is told so, and the mode is kept.
func TestExitPlanNotAnswered(t *testing.T) {
	_, d, cl, c := start(t, planned)
	id := d.Open(t, cl, "")
	s, err := d.M.Lookup(cl, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := (host{s}).ExitPlan(ctx, "call_1", "1. wait")
	if err != nil || out != "The plan was not approved (no answer (cancel)). Stay in the plan mode." {
		t.Errorf("unanswered: %q %v", out, err)
	}
	if res := sessiontest.Of[protocol.ApprovalResolvedEvent](t, c, id, nil); res.By != "cancel" {
		t.Errorf("the request's end: %+v", res)
	}
	if m := s.Mode(); m != protocol.RiskPlan {
		t.Errorf("the mode: %s", m)
	}
}

// The plan's file: the next free number; a directory that cannot be
// made, or a file that cannot be written, is an error that says which.
func TestWrite(t *testing.T) {
	cwd := t.TempDir()
	for _, want := range []string{".zeroclaw/plans/s-1.md", ".zeroclaw/plans/s-2.md"} {
		if rel, err := write(cwd, "s", "plan"); err != nil || rel != want {
			t.Errorf("write: %q %v, want %q", rel, err, want)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := write(file, "s", "plan"); err == nil || !strings.HasPrefix(err.Error(), "the plan's directory: ") {
		t.Errorf("a cwd that is a file: %v", err)
	}
	if _, err := write(cwd, "no/such", "plan"); err == nil || !strings.HasPrefix(err.Error(), "the plan's file: ") {
		t.Errorf("a file that cannot be made: %v", err)
	}
}
