package session

import (
	"encoding/json"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/answers"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Standing answers (internal/answers): what a user's "always" decided,
// for this session (held with it) or its project (the Manager's
// permission store).

// standing is where the session's answers stand.
func (s *Session) standing() answers.Scope {
	return answers.Scope{Held: &s.answers, Rules: s.m.conf().Rules(), Store: s.m.perms, Project: s.project, Cwd: s.cwd,
		SessionID: s.id, Log: s.m.log}
}

// heldAnswers are the live sessions' own answers, for the listing.
func (m *Manager) heldAnswers() []answers.Live {
	var out []answers.Live
	for _, s := range m.liveSessions() {
		out = append(out, answers.Live{SessionID: s.id, Project: s.project, Held: &s.answers})
	}
	return out
}

// Permissions lists the rules in force for a directory's project ("":
// everywhere), each with its scope (answers.Rules).
func (m *Manager) Permissions(cwd string) []protocol.PermissionRule {
	return answers.Rules(m.conf().Rules(), m.perms, cwd, m.heldAnswers())
}

// Revoke removes an answer: one stored for a project, or one a live
// session holds (its id "session#N").
func (m *Manager) Revoke(id string) (bool, error) {
	return answers.Revoke(m.perms, id, m.heldAnswers())
}

// Standing implements agent.Host: an "always" answer given earlier in
// the session, else the permission rules (answers.Scope.Standing).
func (s *Session) Standing(toolName string, input json.RawMessage) (agent.Decision, bool) {
	return s.standing().Standing(toolName, input)
}
