package protocol

import "strconv"

// Goals (issue 38): an objective a session works toward turn after turn,
// within a budget, until the model says it is met (goal_done) or that it
// needs the user (goal_blocked), the budget runs out, or a client pauses
// or clears it.

// Goal methods and event.
const (
	MethodSessionGoal       = "session/goal"
	MethodSessionGoalPause  = "session/goal/pause"
	MethodSessionGoalResume = "session/goal/resume"
	MethodSessionGoalClear  = "session/goal/clear"
	EventGoalUpdate         = "goal_update"
)

// Goal states.
const (
	GoalActive          = "active"
	GoalPaused          = "paused"
	GoalMet             = "met"
	GoalBlocked         = "blocked"
	GoalBudgetExhausted = "budget_exhausted"
	GoalCleared         = "cleared"
)

// GoalBudget bounds a goal (each limit absent: none).
type GoalBudget struct {
	USD     *float64 `json:"usd,omitempty"`
	Tokens  *int64   `json:"tokens,omitempty"`
	Minutes *float64 `json:"minutes,omitempty"`
	Turns   *int     `json:"turns,omitempty"`
}

// GoalSpent is what a goal's turns have used.
type GoalSpent struct {
	USD     float64 `json:"usd"`
	Tokens  int64   `json:"tokens"`
	Minutes float64 `json:"minutes"`
}

// Goal is a session's goal as the daemon tells it.
type Goal struct {
	Objective string     `json:"objective"`
	State     string     `json:"state"`
	Budget    GoalBudget `json:"budget"`
	Spent     GoalSpent  `json:"spent"`
	// Turns counts the goal's turns so far.
	Turns int `json:"turns"`
	// Reason says why it is blocked, paused or out of budget; Summary
	// what the model said when it was met.
	Reason    string `json:"reason,omitempty"`
	Summary   string `json:"summary,omitempty"`
	StartedMs int64  `json:"startedMs"`
	// Keep: what its turns started outlives its end.
	Keep bool `json:"keep,omitempty"`
	// Stopped counts what its end stopped (background processes and
	// sub-agents its turns started).
	Stopped int `json:"stopped,omitempty"`
}

// SessionGoalParams are session/goal's: set (or replace) the session's
// goal.
type SessionGoalParams struct {
	SessionID string      `json:"sessionId"`
	Objective string      `json:"objective"`
	Budget    *GoalBudget `json:"budget,omitempty"`
	// Keep: what the goal's turns started (background processes,
	// sub-agents) outlives its end (false: stopped when it ends).
	Keep bool `json:"keep,omitempty"`
}

// SessionGoalClearParams are session/goal/clear's: Keep keeps what the
// goal's turns started running (false: it is stopped).
type SessionGoalClearParams struct {
	SessionID string `json:"sessionId"`
	Keep      bool   `json:"keep,omitempty"`
}

// SessionGoalResult answers session/goal and its pause, resume and
// clear: the goal after.
type SessionGoalResult struct {
	SessionID string `json:"sessionId"`
	Goal      *Goal  `json:"goal"`
}

// GoalUpdateEvent is goal_update: the goal, whenever it changes.
type GoalUpdateEvent struct {
	Goal Goal `json:"goal"`
}

func (GoalUpdateEvent) EventType() string { return EventGoalUpdate }

// TurnsText says n turns in words: "1 turn", "3 turns".
func TurnsText(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return strconv.Itoa(n) + " turns"
}
