package acp

import (
	"context"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// methodGoal is the goal extension's method (advertised in
// initialize's _meta.goal): a session's goal set, read, paused, resumed
// or cleared. Its changes reach the editor as agent_thought_chunk lines
// with _meta.goal (the goal, whole).
const methodGoal = "_session/goal"

type goalParams struct {
	SessionID string               `json:"sessionId"`
	Action    string               `json:"action,omitempty"` // set (default with an objective), get, pause, resume, clear
	Objective string               `json:"objective,omitempty"`
	Budget    *protocol.GoalBudget `json:"budget,omitempty"`
	// Keep (set, clear): what the goal's turns start runs on after it
	// ends.
	Keep bool `json:"keep,omitempty"`
}

// goal serves _session/goal: the daemon's session/goal methods.
func (b *Bridge) goal(ctx context.Context, p *goalParams) (any, error) {
	d, err := b.daemon(ctx)
	if err != nil {
		return nil, err
	}
	if err := b.reattach(ctx, d, p.SessionID); err != nil {
		return nil, acpError(err)
	}
	action := p.Action
	if action == "" {
		action = "get"
		if p.Objective != "" {
			action = "set"
		}
	}
	var res protocol.SessionGoalResult
	switch action {
	case "set":
		err = d.Call(ctx, protocol.MethodSessionGoal, protocol.SessionGoalParams{SessionID: p.SessionID, Objective: p.Objective, Budget: p.Budget, Keep: p.Keep}, &res)
	case "get":
		var info protocol.SessionInfo
		if err = d.Call(ctx, protocol.MethodSessionGet, protocol.SessionRef{SessionID: p.SessionID}, &info); err == nil {
			res.Goal = info.Goal
		}
	case "pause", "resume":
		err = d.Call(ctx, "session/goal/"+action, protocol.SessionRef{SessionID: p.SessionID}, &res)
	case "clear":
		err = d.Call(ctx, protocol.MethodSessionGoalClear, protocol.SessionGoalClearParams{SessionID: p.SessionID, Keep: p.Keep}, &res)
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "action %q: set, get, pause, resume or clear", action)
	}
	if err != nil {
		return nil, acpError(err)
	}
	return map[string]any{"goal": res.Goal}, nil
}
