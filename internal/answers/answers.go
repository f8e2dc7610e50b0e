// Package answers keeps what a user's "always" decided, in the scope
// its option named. An answer for the session (allow_always,
// allow_always_input, reject_always) is Held with the live session and
// never stored: it ends when the session leaves memory (closed,
// unloaded, the daemon stopped). An answer for the project
// (allow_project, allow_project_input, reject_project) is a rule in the
// permission store, for every session of the project until it is
// revoked. permissions/list shows both, each with its scope (Rules).
package answers

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/permission"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Prefix starts the id of an answer a session holds ("session#N").
const Prefix = "session#"

// last is the last id given to a held answer: unique in the daemon.
var last atomic.Int64

// answer is an "always" answer that holds for the rest of its session.
type answer struct {
	id       string
	tool     string
	exact    bool   // only for this very input
	input    string // the input it holds for (compact JSON), when exact
	pattern  string // what it covers, as permissions/list shows it
	decision string // permission.Allow or permission.Deny
}

// Held are a session's answers for itself, in the order given. Its lock
// is taken alone.
type Held struct {
	mu   sync.Mutex
	list []answer
}

func (h *Held) add(a answer) {
	h.mu.Lock()
	h.list = append(h.list, a)
	h.mu.Unlock()
}

// Revoke removes the held answer id, saying whether it was there.
func (h *Held) Revoke(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.list)
	h.list = slices.DeleteFunc(h.list, func(a answer) bool { return a.id == id })
	return len(h.list) < n
}

// Scope is where a session's answers stand: what it holds, the config's
// rules, the store of the projects' answers (nil: none stored, none
// offered), the session's project and directory.
type Scope struct {
	Held    *Held
	Rules   []permission.Rule
	Store   *permission.Store
	Project string
	Cwd     string
	// SessionID names the session in the log.
	SessionID string
	// Log is told of an answer for the project that could not be
	// stored (it holds for the session instead).
	Log *slog.Logger
}

// Standing is an "always" answer given earlier in the session for this
// tool (or this tool with this very input), else the permission rules:
// the config's, then the answers stored for the session's project.
func (sc Scope) Standing(toolName string, input json.RawMessage) (agent.Decision, bool) {
	same := string(protocol.CompactJSON(input))
	h := sc.Held
	h.mu.Lock()
	allowed := slices.ContainsFunc(h.list, func(a answer) bool {
		return a.decision == permission.Allow && a.tool == toolName && (!a.exact || a.input == same)
	})
	rejected := slices.ContainsFunc(h.list, func(a answer) bool { return a.decision == permission.Deny && a.tool == toolName })
	h.mu.Unlock()
	switch {
	case allowed:
		return agent.Decision{Allow: true}, true
	case rejected:
		return agent.Decision{Why: "the user rejected " + toolName + " for the rest of this session"}, true
	}
	rules := sc.Rules
	if sc.Store != nil {
		rules = append(rules[:len(rules):len(rules)], sc.Store.For(sc.Project)...)
	}
	v := permission.Judge(rules, toolName, permission.Subjects(toolName, input, sc.Cwd))
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

// Decisions are the answers a tool's approval request takes: once; for
// the rest of the session; and for the project, where answers are
// stored (the exact one only when a rule of this input would allow
// exactly this call, not a compound command line nor a model call).
func (sc Scope) Decisions(req agent.ApprovalRequest) []string {
	project := sc.Store != nil
	out := []string{protocol.DecisionAllowOnce, protocol.DecisionAllowAlways, protocol.DecisionAllowAlwaysInput}
	if project {
		out = append(out, protocol.DecisionAllowProject)
		if _, whole := permission.Exact(req.ToolName, req.Input, sc.Cwd); whole && req.Kind != protocol.KindSampling {
			out = append(out, protocol.DecisionAllowProjectInput)
		}
	}
	out = append(out, protocol.DecisionRejectOnce, protocol.DecisionRejectAlways)
	if project {
		out = append(out, protocol.DecisionRejectProject)
	}
	return out
}

// Keep makes an "always" answer stand in the scope its decision names
// (allow_once and reject_once keep nothing).
func (sc Scope) Keep(req agent.ApprovalRequest, decision string) {
	switch decision {
	case protocol.DecisionAllowAlways:
		sc.hold(req, permission.Allow, false)
	case protocol.DecisionAllowAlwaysInput:
		sc.hold(req, permission.Allow, true)
	case protocol.DecisionRejectAlways:
		sc.hold(req, permission.Deny, false)
	case protocol.DecisionAllowProject:
		sc.store(req, permission.Allow, false)
	case protocol.DecisionAllowProjectInput:
		sc.store(req, permission.Allow, true)
	case protocol.DecisionRejectProject:
		sc.store(req, permission.Deny, false)
	}
}

// hold keeps an answer for the rest of the session.
func (sc Scope) hold(req agent.ApprovalRequest, decision string, exact bool) {
	a := answer{id: fmt.Sprintf("%s%d", Prefix, last.Add(1)), tool: req.ToolName, exact: exact, pattern: "*", decision: decision}
	if exact {
		a.input = string(protocol.CompactJSON(req.Input))
		a.pattern, _ = permission.Exact(req.ToolName, req.Input, sc.Cwd)
	}
	sc.Held.add(a)
}

// store keeps an answer as a rule for the session's project, so this
// and later sessions there hold to it. Where it cannot be stored (no
// store, a failed write, an input no exact rule can stand for) it holds
// for the rest of the session instead, and the log says why.
func (sc Scope) store(req agent.ApprovalRequest, decision string, exact bool) {
	pattern, whole := "*", true
	if exact {
		pattern, whole = permission.Exact(req.ToolName, req.Input, sc.Cwd)
	}
	var err error
	switch {
	case sc.Store == nil:
		err = fmt.Errorf("no store of answers")
	case !whole:
		err = fmt.Errorf("a compound or unparsable command: each part would be allowed alone")
	default:
		_, err = sc.Store.Add(permission.Rule{Tool: req.ToolName, Pattern: pattern, Decision: decision, Dir: sc.Project})
	}
	if err != nil {
		if sc.Log != nil {
			sc.Log.Warn("an answer for the project could not be stored: it holds for this session only", "sessionId", sc.SessionID, "err", err)
		}
		sc.hold(req, decision, exact)
	}
}

// Live is a live session's answers, for the listing: its id, its
// project, what it holds.
type Live struct {
	SessionID, Project string
	Held               *Held
}

// MaxListedPattern bounds a rule's pattern as Rules tells it, in bytes.
const MaxListedPattern = 4096

// Rules lists the rules in force for a directory's project ("":
// everywhere): the config's, the answers stored for the project, then
// the answers the live sessions there hold for themselves; each says
// its scope.
func Rules(config []permission.Rule, st *permission.Store, cwd string, live []Live) []protocol.PermissionRule {
	dir := ""
	if cwd != "" {
		dir = permission.ProjectDir(cwd)
	}
	var out []protocol.PermissionRule
	add := func(r permission.Rule, scope, sessionID string) {
		pr := protocol.PermissionRule{ID: r.ID, Tool: r.Tool, Pattern: r.Pattern, Decision: r.Decision, Dir: r.Dir,
			Origin: r.Origin, Scope: scope, SessionID: sessionID}
		if len(pr.Pattern) > MaxListedPattern {
			// An exact answer's pattern is its whole input (a long
			// command): told cut, it still holds whole.
			n := MaxListedPattern
			for n > 0 && !utf8.RuneStart(pr.Pattern[n]) {
				n--
			}
			pr.Pattern, pr.PatternTruncated = pr.Pattern[:n], true
		}
		out = append(out, pr)
	}
	for _, r := range config {
		add(r, protocol.ScopeGlobal, "")
	}
	if st != nil {
		for _, r := range st.For(dir) {
			add(r, protocol.ScopeProject, "")
		}
	}
	for _, l := range live {
		if dir != "" && l.Project != dir {
			continue
		}
		l.Held.mu.Lock()
		for _, a := range l.Held.list {
			add(permission.Rule{ID: a.id, Tool: a.tool, Pattern: a.pattern, Decision: a.decision, Dir: l.Project, Origin: "answer"},
				protocol.ScopeSession, l.SessionID)
		}
		l.Held.mu.Unlock()
	}
	return out
}

// Revoke removes an answer: one stored for a project, or one a live
// session holds (its id "session#N").
func Revoke(st *permission.Store, id string, live []Live) (bool, error) {
	if strings.HasPrefix(id, Prefix) {
		for _, l := range live {
			if l.Held.Revoke(id) {
				return true, nil
			}
		}
		return false, nil
	}
	if st == nil {
		return false, nil
	}
	return st.Revoke(id)
}
