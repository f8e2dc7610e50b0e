package talk

import (
	"slices"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// An approval's answers, said the same way wherever the chat or a
// prompt asks: each "always" names its scope, this session (kept with
// the live session only) or this project (stored, for later sessions
// there too, until revoked), as the daemon keeps it.

// Scopes as the person reads them.
const (
	forSession = "for the rest of this session (not stored)"
	inProject  = "in this project, this session and later ones, until revoked (zeroclaw permissions)"
)

// answerSaid is what decision does to the tool's calls, said after the
// answer ("" for a decision that is not a tool approval's).
func answerSaid(decision, tool, kind string) string {
	exact := "this exact " + inputWord(kind) + " of " + tool
	every := "every call of " + tool
	switch decision {
	case protocol.DecisionAllowOnce:
		return "allowed once: " + tool
	case protocol.DecisionAllowAlways:
		return "allowed " + forSession + ": " + every
	case protocol.DecisionAllowAlwaysInput:
		return "allowed " + forSession + ": " + exact
	case protocol.DecisionAllowProject:
		return "allowed " + inProject + ": " + every
	case protocol.DecisionAllowProjectInput:
		return "allowed " + inProject + ": " + exact
	case protocol.DecisionRejectOnce:
		return "rejected: " + tool
	case protocol.DecisionRejectAlways:
		return "rejected " + forSession + ": " + every
	case protocol.DecisionRejectProject:
		return "rejected " + inProject + ": " + every
	}
	return ""
}

// offers says whether a request takes decision: once and no always do;
// an "always" only when the request lists it (a daemon that stores no
// answers offers none for the project).
func offers(u *approval, decision string) bool {
	return decision == protocol.DecisionAllowOnce || decision == protocol.DecisionRejectOnce || slices.Contains(u.Options, decision)
}

// inputWord names a call's input for a person: a command, or an input.
func inputWord(kind string) string {
	if kind == protocol.KindExecute {
		return "command"
	}
	return "input"
}
