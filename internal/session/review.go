package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// The reviewer ([approvals] reviewer): each approval request goes first
// to that agent's model, with the request, the session's recent
// conversation and the sandbox in force; it answers a JSON object
// {decision: allow | ask | deny, risk: low | medium | high, rationale}.
// allow runs the call (when its risk is at most reviewer_allows), deny
// refuses it (the model is told why), anything else (ask, a higher risk,
// an error, a timeout, an answer that is not that object) asks the user,
// with the rating shown. A permission rule's refusal holds before the
// reviewer is asked. Every review is an approval_reviewed event.

const reviewerSystem = `You review the tool calls of a coding agent before they run, on behalf of its user.
Judge the risk of the call for the user's machine, data and accounts: low (reads, changes inside the project that are easy to undo), medium (changes that are harder to undo, network writes, installs), high (deletes, secrets, system files, pushes, payments, anything irreversible or outside the project).
Answer with one JSON object and nothing else: {"decision": "allow" | "ask" | "deny", "risk": "low" | "medium" | "high", "rationale": "one sentence"}.
allow: it is safe and clearly serves the task. deny: it is harmful or clearly not what the user wants. ask: let the user decide.`

var riskRank = map[string]int{"low": 0, "medium": 1, "high": 2}

// review asks the reviewer about req (its request id: id): "allow",
// "deny" (why: the rationale) or "ask" (rv: the rating to show, when
// there is one). With no reviewer configured: "ask".
func (s *Session) review(ctx context.Context, id string, req agent.ApprovalRequest) (decision string, rv *protocol.Review, why string) {
	cfg := s.m.conf().cfg.Approvals
	if cfg.Reviewer == "" || req.Options != nil || req.Kind == protocol.KindSampling {
		return "ask", nil, ""
	}
	t0 := time.Now()
	ev := protocol.ApprovalReviewedEvent{RequestID: id, ToolCallID: req.ToolCallID, ToolName: req.ToolName, Reviewer: cfg.Reviewer, Decision: "ask"}
	defer func() {
		ev.DurationMs = time.Since(t0).Milliseconds()
		s.emit(ev)
		metrics.ApprovalReview(ev.Decision)
	}()
	a, _, err := s.m.buildAgent(cfg.Reviewer, "chat", s.cwd)
	if err != nil {
		ev.Error = err.Error()
		return "ask", nil, ""
	}
	rctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.ReviewerTimeoutSecs)*time.Second)
	defer cancel()
	resp, err := a.Provider.Stream(rctx, provider.Request{System: reviewerSystem, Model: a.Model, MaxTokens: 512,
		Messages: []provider.Message{{Role: provider.RoleUser, Text: s.reviewPrompt(req)}}}, func(provider.Delta) {})
	if resp != nil {
		s.Charge(resp.Usage)
	}
	if err != nil {
		ev.Error = err.Error()
		if rctx.Err() == context.DeadlineExceeded {
			ev.Error = fmt.Sprintf("no answer within %d s ([approvals] reviewer_timeout_secs)", cfg.ReviewerTimeoutSecs)
		}
		return "ask", nil, ""
	}
	var ans struct {
		Decision, Risk, Rationale string
	}
	text := resp.Text
	i, j := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if i < 0 || j < i || json.Unmarshal([]byte(text[i:j+1]), &ans) != nil ||
		!slices.Contains([]string{"allow", "ask", "deny"}, ans.Decision) || riskRank[ans.Risk] == 0 && ans.Risk != "low" {
		ev.Error = "the reviewer's answer is not {decision, risk, rationale}: " + cut(strings.TrimSpace(text), 200)
		return "ask", nil, ""
	}
	ev.Risk, ev.Rationale = ans.Risk, cut(ans.Rationale, 1000)
	rv = &protocol.Review{Risk: ev.Risk, Rationale: ev.Rationale}
	switch {
	case ans.Decision == "deny":
		ev.Decision = "deny"
		return "deny", rv, ev.Rationale
	case ans.Decision == "allow" && riskRank[ans.Risk] <= riskRank[cfg.ReviewerAllows]:
		ev.Decision = "allow"
		return "allow", rv, ev.Rationale
	}
	return "ask", rv, ""
}

// reviewPrompt is what the reviewer reads: the request, the sandbox in
// force, and the conversation's last messages.
func (s *Session) reviewPrompt(req agent.ApprovalRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The tool call:\n- tool: %s (%s)\n- input: %s\n- summary: %s\n- why it asks: %s\n", req.ToolName, req.Kind, cut(string(req.Input), 4000), req.Summary, req.Rule)
	sb := s.sandbox()
	switch {
	case sb == nil:
		b.WriteString("- sandbox: none (commands may write anywhere the user can)\n")
	default:
		fmt.Fprintf(&b, "- sandbox: %s (network %v)\n", sb.Mode, sb.Network)
	}
	fmt.Fprintf(&b, "- the session's directory: %s\n\nThe conversation's last messages:\n", s.cwd)
	s.mu.Lock()
	msgs := s.history.Messages
	if len(msgs) > 6 {
		msgs = msgs[len(msgs)-6:]
	}
	for _, m := range msgs {
		text := m.Text
		for _, c := range m.ToolCalls {
			text += fmt.Sprintf(" [calls %s %s]", c.Name, cut(string(c.Input), 300))
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, cut(strings.ReplaceAll(text, "\n", " "), 600))
	}
	s.mu.Unlock()
	return b.String()
}
