package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Approvals: a call that asks waits for a client's answer (or the
// timeout); an "always" answer stands in the scope its option names
// (standing.go).

// approve answers a pending approval; false when it is unknown or
// already answered.
func (s *Session) approve(requestID, decision, reason, feedback string, by *Client) (bool, error) {
	for _, p := range s.m.participants() {
		if child := p.Answers(s, requestID); child != nil {
			return child.approve(requestID, decision, reason, feedback, by) // a child's, shown here
		}
	}
	if opts := s.t.ApprovalOptions(requestID); opts != nil && !slices.Contains(opts, decision) {
		return false, &protocol.ParamsError{Field: "decision", Reason: fmt.Sprintf("%q: this request takes %s", decision, strings.Join(opts, ", "))}
	}
	a, ok := s.t.Answer(requestID)
	if ok {
		a.Answer <- answer{Decision: decision, Reason: reason, Feedback: feedback, By: by}
	}
	return ok, nil
}

// Approve implements agent.Host: an approval_request to every attached
// client; the first answer wins; no answer within the configured timeout
// is a rejection by "timeout".
func (s *Session) Approve(ctx context.Context, req agent.ApprovalRequest) agent.Decision {
	if d, ok := s.Standing(req.ToolName, req.Input); ok && !d.Ask {
		return d
	}
	if s.t.NoAsk() {
		return agent.Decision{Why: "not asked: this run may do only what permission rules allow (a schedule's approve: rules)"}
	}
	id := protocol.NewID("apr_", 6)
	// The reviewer first, when there is one.
	decision, rv, why := s.review(ctx, id, req)
	switch decision {
	case "allow":
		return agent.Decision{Allow: true}
	case "deny":
		return agent.Decision{Why: "the reviewer refused it: " + why}
	}
	options := req.Options
	if options == nil {
		options = s.standing().Decisions(req)
	}
	a := &approval{Options: options, Answer: make(chan answer, 1)}
	s.t.Ask(id, a)

	secs := s.m.conf().Config().Daemon.ApprovalTimeoutSecs
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	ev := protocol.ApprovalRequestEvent{RequestID: id, ToolCallID: req.ToolCallID, ToolName: req.ToolName, Kind: req.Kind,
		RawInput: input, Summary: req.Summary, TimeoutSecs: secs, Options: options, Rule: req.Rule, Review: rv}
	s.emit(ev)
	// The participants hear the turn waits (a goal is blocked; a
	// sub-agent's question is shown to its ancestors' clients too:
	// whoever answers first, here or there).
	kind := s.turnKind()
	s.m.each(func(p Participant) { p.Asking(s, kind, Ask{Request: &ev}) })

	var expired <-chan time.Time
	if secs > 0 {
		t := time.NewTimer(time.Duration(secs) * time.Second)
		defer t.Stop()
		expired = t.C
	}
	var ans answer
	by := "client"
	select {
	case ans = <-a.Answer:
	case <-expired:
		ans, by = s.withdraw(id, a, answer{Decision: "reject_once"}, "timeout")
	case <-ctx.Done():
		ans, by = s.withdraw(id, a, answer{Decision: "reject_once"}, "cancel")
	}
	resolved := protocol.ApprovalResolvedEvent{RequestID: id, Decision: ans.Decision, By: by}
	if ans.By != nil {
		resolved.ClientID, resolved.ClientName = ans.By.ID(), ans.By.Name()
	}
	s.emit(resolved)
	s.m.each(func(p Participant) { p.Asking(s, kind, Ask{Request: &ev, Resolved: &resolved}) })

	if req.Options != nil {
		// Its own options (a plan's): the choice is the caller's to
		// read; no standing answer is kept.
		return agent.Decision{Allow: by == "client", Choice: ans.Decision, Feedback: ans.Feedback, Why: "no answer (" + by + ")"}
	}
	s.standing().Keep(req, ans.Decision)
	if strings.HasPrefix(ans.Decision, "allow_") {
		return agent.Decision{Allow: true}
	}
	switch by {
	case "timeout":
		return agent.Decision{Why: "no approval within " + strconv.Itoa(secs) + " s"}
	case "cancel":
		return agent.Decision{Why: "the turn was cancelled"}
	}
	rejected := "rejected by the user"
	if ans.Reason != "" {
		rejected += ": " + ans.Reason
	}
	return agent.Decision{Why: rejected}
}

// withdraw removes a pending approval unless a client answered first, in
// which case that answer wins.
func (s *Session) withdraw(id string, a *approval, def answer, by string) (answer, string) {
	if _, pending := s.t.Answer(id); pending {
		return def, by
	}
	return <-a.Answer, "client"
}
