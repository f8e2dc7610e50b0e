package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/permission"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Standing answers: what a user's "always" decided, in the scope its
// option named. An answer for the session (allow_always,
// allow_always_input, reject_always) is kept here, with the live
// session, and never stored: it ends when the session leaves memory
// (closed, unloaded, the daemon stopped). An answer for the project
// (allow_project, allow_project_input, reject_project) is a rule in the
// Manager's permission store, for every session of the project until it
// is revoked. permissions/list shows both, each with its scope.

// sessionAnswer is an "always" answer that holds for the rest of its
// session.
type sessionAnswer struct {
	id       string // "session#N" (unique in the daemon), for permissions/list and revoke
	tool     string
	exact    bool   // only for this very input
	input    string // the input it holds for (compact JSON), when exact
	pattern  string // what it covers, as permissions/list shows it
	decision string // permission.Allow or permission.Deny
}

// sessionAnswerPrefix starts the id of an answer held by a session.
const sessionAnswerPrefix = "session#"

// Standing implements agent.Host: an "always" answer given earlier in
// the session for this tool (or this tool with this very input), else
// the permission rules: the config's, then the answers stored for the
// session's project.
func (s *Session) Standing(toolName string, input json.RawMessage) (agent.Decision, bool) {
	sameInput := string(protocol.CompactJSON(input))
	s.mu.Lock()
	allowed := slices.ContainsFunc(s.answers, func(a sessionAnswer) bool {
		return a.decision == permission.Allow && a.tool == toolName && (!a.exact || a.input == sameInput)
	})
	rejected := slices.ContainsFunc(s.answers, func(a sessionAnswer) bool {
		return a.decision == permission.Deny && a.tool == toolName
	})
	s.mu.Unlock()
	switch {
	case allowed:
		return agent.Decision{Allow: true}, true
	case rejected:
		return agent.Decision{Why: "the user rejected " + toolName + " for the rest of this session"}, true
	}
	rules := s.m.conf().Rules()
	if s.m.perms != nil {
		rules = append(rules[:len(rules):len(rules)], s.m.perms.For(s.project)...)
	}
	v := permission.Judge(rules, toolName, permission.Subjects(toolName, input, s.cwd))
	switch v.Decision {
	case permission.Allow:
		return agent.Decision{Allow: true}, true
	case permission.Deny:
		return agent.Decision{Why: "refused by the permission rule " + v.Rule.String()}, true
	case permission.Ask:
		return agent.Decision{Ask: true, Why: "the permission rule " + v.Rule.String() + " asks"}, true
	}
	return agent.Decision{}, false
}

// decisions are the answers a tool's approval request takes: once; for
// the rest of the session; and for the project, where answers are
// stored (the exact one only when a rule of this input would allow
// exactly this call, not a compound command line nor a model call).
func (s *Session) decisions(req agent.ApprovalRequest) []string {
	project := s.m.perms != nil
	out := []string{protocol.DecisionAllowOnce, protocol.DecisionAllowAlways, protocol.DecisionAllowAlwaysInput}
	if project {
		out = append(out, protocol.DecisionAllowProject)
		if _, whole := permission.Exact(req.ToolName, req.Input, s.cwd); whole && req.Kind != protocol.KindSampling {
			out = append(out, protocol.DecisionAllowProjectInput)
		}
	}
	out = append(out, protocol.DecisionRejectOnce, protocol.DecisionRejectAlways)
	if project {
		out = append(out, protocol.DecisionRejectProject)
	}
	return out
}

// keep makes an "always" answer stand in the scope its decision names
// (allow_once and reject_once keep nothing).
func (s *Session) keep(req agent.ApprovalRequest, answer string) {
	switch answer {
	case protocol.DecisionAllowAlways:
		s.hold(req, permission.Allow, false)
	case protocol.DecisionAllowAlwaysInput:
		s.hold(req, permission.Allow, true)
	case protocol.DecisionRejectAlways:
		s.hold(req, permission.Deny, false)
	case protocol.DecisionAllowProject:
		s.store(req, permission.Allow, false)
	case protocol.DecisionAllowProjectInput:
		s.store(req, permission.Allow, true)
	case protocol.DecisionRejectProject:
		s.store(req, permission.Deny, false)
	}
}

// hold keeps an answer for the rest of the session.
func (s *Session) hold(req agent.ApprovalRequest, decision string, exact bool) {
	a := sessionAnswer{id: fmt.Sprintf("%s%d", sessionAnswerPrefix, s.m.answers.Add(1)), tool: req.ToolName, exact: exact,
		pattern: "*", decision: decision}
	if exact {
		a.input = string(protocol.CompactJSON(req.Input))
		a.pattern, _ = permission.Exact(req.ToolName, req.Input, s.cwd)
	}
	s.mu.Lock()
	s.answers = append(s.answers, a)
	s.mu.Unlock()
}

// store keeps an answer as a rule for the session's project, so this
// and later sessions there hold to it. Where it cannot be stored (no
// store, a failed write, an input no exact rule can stand for) it holds
// for the rest of the session instead, and the log says why.
func (s *Session) store(req agent.ApprovalRequest, decision string, exact bool) {
	pattern, whole := "*", true
	if exact {
		pattern, whole = permission.Exact(req.ToolName, req.Input, s.cwd)
	}
	var err error
	switch {
	case s.m.perms == nil:
		err = fmt.Errorf("no store of answers")
	case !whole:
		err = fmt.Errorf("a compound or unparsable command: each part would be allowed alone")
	default:
		_, err = s.m.perms.Add(permission.Rule{Tool: req.ToolName, Pattern: pattern, Decision: decision, Dir: s.project})
	}
	if err != nil {
		s.m.log.Warn("an answer for the project could not be stored: it holds for this session only", "sessionId", s.id, "err", err)
		s.hold(req, decision, exact)
	}
}

// Permissions lists the rules in force for a directory's project ("":
// everywhere): the config's, the answers stored for the project, then
// the answers the live sessions there hold for themselves; each says
// its scope.
func (m *Manager) Permissions(cwd string) []protocol.PermissionRule {
	dir := ""
	if cwd != "" {
		dir = permission.ProjectDir(cwd)
	}
	var out []protocol.PermissionRule
	add := func(r permission.Rule, scope, sessionID string) {
		out = append(out, protocol.PermissionRule{ID: r.ID, Tool: r.Tool, Pattern: r.Pattern, Decision: r.Decision, Dir: r.Dir,
			Origin: r.Origin, Scope: scope, SessionID: sessionID})
	}
	for _, r := range m.conf().Rules() {
		add(r, protocol.ScopeGlobal, "")
	}
	if m.perms != nil {
		for _, r := range m.perms.For(dir) {
			add(r, protocol.ScopeProject, "")
		}
	}
	for _, s := range m.liveSessions() {
		if dir != "" && s.project != dir {
			continue
		}
		s.mu.Lock()
		for _, a := range s.answers {
			add(permission.Rule{ID: a.id, Tool: a.tool, Pattern: a.pattern, Decision: a.decision, Dir: s.project, Origin: "answer"},
				protocol.ScopeSession, s.id)
		}
		s.mu.Unlock()
	}
	return out
}

// Revoke removes an answer: one stored for a project, or one a live
// session holds (its id "session#N").
func (m *Manager) Revoke(id string) (bool, error) {
	if strings.HasPrefix(id, sessionAnswerPrefix) {
		for _, s := range m.liveSessions() {
			s.mu.Lock()
			n := len(s.answers)
			s.answers = slices.DeleteFunc(s.answers, func(a sessionAnswer) bool { return a.id == id })
			gone := len(s.answers) < n
			s.mu.Unlock()
			if gone {
				return true, nil
			}
		}
		return false, nil
	}
	if m.perms == nil {
		return false, nil
	}
	return m.perms.Revoke(id)
}
