package protocol

// Schedules (issue 38): a prompt run at due times, in a session or in a
// new session per run.

// Schedule methods.
const (
	MethodScheduleCreate = "schedule/create"
	MethodScheduleList   = "schedule/list"
	MethodScheduleUpdate = "schedule/update"
	MethodScheduleDelete = "schedule/delete"
	MethodScheduleRun    = "schedule/run"
)

// EventScheduleUpdate is a run's outcome, in the session it runs in.
const EventScheduleUpdate = "schedule_update"

// Missed-run policies: what a schedule does with the due times that
// passed while no daemon ran.
const (
	MissedSkip = "skip" // none of them runs
	MissedOnce = "once" // one catch-up run
)

// Approval policies of a schedule's runs.
const (
	ApproveAsk   = "ask"   // a run waits for an approval, as any turn does
	ApproveRules = "rules" // only what permission rules allow runs; what would ask is refused
)

// Run states.
const (
	RunStarted   = "started"
	RunCompleted = "completed"
	RunFailed    = "failed"
	RunSkipped   = "skipped"
)

// ScheduleNewSession is where a schedule whose runs each get a session
// of their own runs.
type ScheduleNewSession struct {
	AgentAlias string `json:"agentAlias,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
}

// ScheduleFields are what a client sets of a schedule (create; update
// sets those given).
type ScheduleFields struct {
	Prompt string `json:"prompt,omitempty"`
	// Exactly one of Cron (five fields, @daily and the like), Every (a Go
	// duration: 2s, 10m, 1h30m) and At (RFC 3339, or a local HH:MM: its
	// next time).
	Cron     string `json:"cron,omitempty"`
	Every    string `json:"every,omitempty"`
	At       string `json:"at,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	// SessionID runs every run in that session; NewSession in a new
	// session each.
	SessionID  string              `json:"sessionId,omitempty"`
	NewSession *ScheduleNewSession `json:"newSession,omitempty"`
	Missed     string              `json:"missed,omitempty"`
	// Until (RFC 3339) and MaxRuns end the schedule.
	Until   string `json:"until,omitempty"`
	MaxRuns int    `json:"maxRuns,omitempty"`
	Enabled *bool  `json:"enabled,omitempty"`
	Approve string `json:"approve,omitempty"`
}

// ScheduleRun is one run of a schedule.
type ScheduleRun struct {
	DueMs     int64  `json:"dueMs"`
	State     string `json:"state"`
	SessionID string `json:"sessionId,omitempty"`
	TurnID    string `json:"turnId,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// ScheduleWaiting says what a run waits for.
type ScheduleWaiting struct {
	Kind      string `json:"kind"` // approval
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId"`
}

// Schedule is a schedule as the daemon tells it.
type Schedule struct {
	ScheduleID string `json:"scheduleId"`
	ScheduleFields
	// PromptTruncated: Prompt is cut, as told (a prompt stored before
	// prompts were bounded; see schedule/create).
	PromptTruncated bool `json:"promptTruncated,omitempty"`
	// Runs counts the runs started; Failures the failed ones in a row
	// (3 pause the schedule: PausedReason says why).
	Runs         int              `json:"runs"`
	Failures     int              `json:"failures,omitempty"`
	PausedReason string           `json:"pausedReason,omitempty"`
	NextRunMs    int64            `json:"nextRunMs,omitempty"`
	LastRun      *ScheduleRun     `json:"lastRun,omitempty"`
	Waiting      *ScheduleWaiting `json:"waiting,omitempty"`
	CreatedMs    int64            `json:"createdMs"`
}

// When says when s runs, as it was given: its cron expression, "every
// D" or "at T".
func (s Schedule) When() string {
	switch {
	case s.Every != "":
		return "every " + s.Every
	case s.At != "":
		return "at " + s.At
	}
	return s.Cron
}

// ScheduleResult answers schedule/create, schedule/update and
// schedule/run.
type ScheduleResult struct {
	Schedule Schedule `json:"schedule"`
}

// ScheduleListParams are schedule/list's: the page after Cursor (a
// nextCursor; "": the first).
type ScheduleListParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ScheduleListResult answers schedule/list: a page of schedules;
// NextCursor continues after it (absent on the last page).
type ScheduleListResult struct {
	Schedules  []Schedule `json:"schedules"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// ScheduleRef names a schedule.
type ScheduleRef struct {
	ScheduleID string `json:"scheduleId"`
}

// ScheduleUpdateParams are schedule/update's: the schedule and the
// fields to change.
type ScheduleUpdateParams struct {
	ScheduleID string `json:"scheduleId"`
	ScheduleFields
}

// ScheduleDeleteResult answers schedule/delete.
type ScheduleDeleteResult struct {
	Deleted bool `json:"deleted"`
}

// ScheduleUpdateEvent is schedule_update: what became of a run, in the
// session it runs in.
type ScheduleUpdateEvent struct {
	ScheduleID string      `json:"scheduleId"`
	Run        ScheduleRun `json:"run"`
}

func (ScheduleUpdateEvent) EventType() string { return EventScheduleUpdate }
