package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// The members of each session/update type beyond the ones every event
// has (sessionId, seq, type, turnId), one Go type per event type: the
// daemon (and the agent) build events as these, encoded as they are;
// the published schema is generated from them; and ParseUpdate decodes a
// received event into the same type, so every reader switches on Go
// types and a new event is one type and one entry of Events.

// EventHeader is what every session/update has; the members of its
// type follow (Events).
type EventHeader struct {
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Type      string `json:"type"`
	// TurnID names the turn the event belongs to: every event a turn
	// makes, from its user_message to its turn_complete, has it.
	TurnID string `json:"turnId,omitempty"`
}

// EventBody is one event's own members: one of the types of Events.
type EventBody interface {
	// EventType is the event's type on the wire (EventToolCall, ...).
	EventType() string
}

// Event pairs an event type with the Go type of its members.
type Event struct {
	Type   string
	Fields reflect.Type
}

// Events lists every event type the daemon emits, with its members:
// the one list the capabilities, the schema and ParseUpdate come from.
var Events = events(
	AgentMessageChunkEvent{},
	AgentThoughtChunkEvent{},
	ToolCallEvent{},
	ToolResultEvent{},
	ApprovalRequestEvent{},
	ApprovalResolvedEvent{},
	PlanEvent{},
	ContextUsageEvent{},
	TurnCompleteEvent{},
	UserMessageEvent{},
	HistoryTrimmedEvent{},
	RewindEvent{},
	HookEvent{},
	QueueUpdateEvent{},
	ToolProgressEvent{},
	ProcessUpdateEvent{},
	SubagentUpdateEvent{},
	InputUpdateEvent{},
	TurnInterruptedEvent{},
	TurnResumedEvent{},
	ScheduleUpdateEvent{},
	GoalUpdateEvent{},
	ApprovalReviewedEvent{},
	ConfigUpdateEvent{},
)

func events(bodies ...EventBody) []Event {
	out := make([]Event, len(bodies))
	for i, b := range bodies {
		out[i] = Event{b.EventType(), reflect.TypeOf(b)}
	}
	return out
}

// eventTypes finds an event type's Go type.
var eventTypes = func() map[string]reflect.Type {
	m := make(map[string]reflect.Type, len(Events))
	for _, e := range Events {
		m[e.Type] = e.Fields
	}
	return m
}()

// SessionUpdate is a session/update as a client reads it (ParseUpdate):
// the members every event has, the cut marker of an event the daemon
// shortened to fit a frame (session/event reads it whole), and the
// event's own members as its own type, a value of one of the types of
// Events, or UnknownEvent for a type this build does not know.
type SessionUpdate struct {
	EventHeader
	Cut   *CutInfo
	Event EventBody
}

// UnknownEvent is an event of a type this build does not know (a newer
// daemon's): its members, as they came.
type UnknownEvent struct {
	Type   string
	Fields json.RawMessage
}

// EventType implements EventBody.
func (u UnknownEvent) EventType() string { return u.Type }

// UndecodableEvent is an event of a known type whose members do not
// decode into that type (a member of the wrong JSON type: a stored event
// written by a build that spelled it otherwise, say): its members, as
// they came, and why they could not be read. A reader shows that an
// event was there and could not be read, and goes on with the next one.
type UndecodableEvent struct {
	Type   string
	Fields json.RawMessage
	Err    string
}

// EventType implements EventBody.
func (u UndecodableEvent) EventType() string { return u.Type }

// ParseUpdate decodes one session/update's params: its type is looked up
// in Events and its members decoded into that type's Go type. Only a
// header that does not decode (not an object, a seq that is not a
// number) is an error: an unknown event type is an UnknownEvent, and a
// known type whose members do not decode is an UndecodableEvent, so a
// replay, an export or a fork goes on past it.
func ParseUpdate(raw []byte) (SessionUpdate, error) {
	var head struct {
		EventHeader
		Cut *CutInfo `json:"cut"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return SessionUpdate{}, fmt.Errorf("session/update: %w", err)
	}
	u := SessionUpdate{EventHeader: head.EventHeader, Cut: head.Cut}
	t, ok := eventTypes[head.Type]
	if !ok {
		u.Event = UnknownEvent{Type: head.Type, Fields: bytes.Clone(raw)}
		return u, nil
	}
	v := reflect.New(t)
	if err := json.Unmarshal(raw, v.Interface()); err != nil {
		u.Event = UndecodableEvent{Type: head.Type, Fields: bytes.Clone(raw), Err: fmt.Sprintf("%s (seq %d): %v", head.Type, head.Seq, err)}
		return u, nil
	}
	u.Event = v.Elem().Interface().(EventBody)
	return u, nil
}

// List is s, or an empty list for none: a list member is always a list
// on the wire ([]), never null.
func List[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// EventType of each event.
func (AgentMessageChunkEvent) EventType() string { return EventAgentMessageChunk }
func (AgentThoughtChunkEvent) EventType() string { return EventAgentThoughtChunk }
func (ToolCallEvent) EventType() string          { return EventToolCall }
func (ToolResultEvent) EventType() string        { return EventToolResult }
func (ApprovalRequestEvent) EventType() string   { return EventApprovalRequest }
func (ApprovalResolvedEvent) EventType() string  { return EventApprovalResolved }
func (PlanEvent) EventType() string              { return EventPlan }
func (ContextUsageEvent) EventType() string      { return EventContextUsage }
func (TurnCompleteEvent) EventType() string      { return EventTurnComplete }
func (UserMessageEvent) EventType() string       { return EventUserMessage }
func (HistoryTrimmedEvent) EventType() string    { return EventHistoryTrimmed }
func (RewindEvent) EventType() string            { return EventRewind }
func (HookEvent) EventType() string              { return EventHook }
func (QueueUpdateEvent) EventType() string       { return EventQueueUpdate }
func (ProcessUpdateEvent) EventType() string     { return EventProcessUpdate }
func (ToolProgressEvent) EventType() string      { return EventToolProgress }
func (SubagentUpdateEvent) EventType() string    { return EventSubagentUpdate }
func (InputUpdateEvent) EventType() string       { return EventInputUpdate }
func (TurnInterruptedEvent) EventType() string   { return EventTurnInterrupted }
func (TurnResumedEvent) EventType() string       { return EventTurnResumed }

// TurnInterruptedEvent is turn_interrupted: the turn (the envelope's
// turnId) was cut by the daemon's end (Reason daemon_exit); the next
// daemon wrote it, at the next seq.
type TurnInterruptedEvent struct {
	Reason string `json:"reason"`
}

// TurnResumedEvent is turn_resumed: the turn goes on in this daemon,
// its Attempt-th run (2 for the first continuation).
type TurnResumedEvent struct {
	Attempt int `json:"attempt"`
}

// InputUpdateEvent is input_update: what became of an input (a prompt or
// a steer), for every client to show: queued (it waits behind a turn),
// started (its turn began), steered (it went into the running turn),
// completed, cancelled (removed from the queue, or its turn cancelled
// before it began), discarded (its session closed or was deleted
// first), refused (not taken: Reason says why). Its turn (once it has
// one) is the envelope's turnId.
type InputUpdateEvent struct {
	ClientMessageID string `json:"clientMessageId,omitempty"`
	InputID         string `json:"inputId"`
	State           string `json:"state"`
	Reason          string `json:"reason,omitempty"`
}

// SubagentUpdateEvent is subagent_update: a sub-agent the session
// started (the task tool) started, or ended.
type SubagentUpdateEvent struct {
	Subagent SubagentInfo `json:"subagent"`
}

// SubagentRef names a sub-agent: its session and its task's description.
type SubagentRef struct {
	SessionID   string `json:"sessionId"`
	Description string `json:"description"`
}

// SubagentInfo describes a sub-agent: its session, what it was asked to
// do, its agent, how it stands, its answer once it ended and what it
// used.
type SubagentInfo struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Description is the task's, a few words.
	Description string `json:"description"`
	Agent       string `json:"agent"`
	Background  bool   `json:"background,omitempty"`
	// State is running, completed, failed, cancelled or interrupted.
	State string `json:"state"`
	// Summary is its answer (its last message), cut to 2 KiB, once it
	// ended; the failure's message when it failed.
	Summary string `json:"summary,omitempty"`
	Usage   *Usage `json:"usage,omitempty"`
}

// ToolProgressEvent is tool_progress: a running tool said how far it is
// (an MCP server's notifications/progress), at most five times a second
// per call (the last, at its total, always).
type ToolProgressEvent struct {
	ToolCallID string   `json:"toolCallId"`
	Progress   float64  `json:"progress"`
	Total      *float64 `json:"total,omitempty"`
	Message    string   `json:"message,omitempty"`
}

// ProcessUpdateEvent is process_update: a background process of the
// session started or ended.
type ProcessUpdateEvent struct {
	Process ProcessInfo `json:"process"`
}

// ProcessInfo describes a background process.
type ProcessInfo struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	Pid     int    `json:"pid"`
	TTY     bool   `json:"tty"`
	// State is running, exited, killed or lost.
	State       string `json:"state"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	Signal      string `json:"signal,omitempty"`
	StartedAt   string `json:"startedAt"`
	EndedAt     string `json:"endedAt,omitempty"`
	OutputBytes int64  `json:"outputBytes"`
	// CommandTruncated: Command is cut (process/list bounds it).
	CommandTruncated bool `json:"commandTruncated,omitempty"`
}

// QueueUpdateEvent is queue_update: the session's queue of prompts as it
// is now, whole.
type QueueUpdateEvent struct {
	Items []QueueItem `json:"items"`
}

// QueueItem is one queued prompt.
type QueueItem struct {
	ID         string `json:"id"`
	Text       string `json:"text"` // its first line
	ClientID   string `json:"clientId,omitempty"`
	ClientName string `json:"clientName,omitempty"`
	QueuedMs   int64  `json:"queuedAt"`
}

// HookEvent is hook: a command hook ran.
type HookEvent struct {
	Event      string `json:"event"` // PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart
	Command    string `json:"command"`
	Outcome    string `json:"outcome"` // ok, blocked, error, timeout
	DurationMs int64  `json:"durationMs"`
	// Reason is why it blocked (its stderr or its JSON's reason).
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// ToolName names the call a tool's hook ran for.
	ToolName string `json:"toolName,omitempty"`
}

// RewindEvent is rewind: files and (or) the conversation went back to
// before a turn, or a rewind was undone. The history stays as it was:
// this event says what changed after it.
type RewindEvent struct {
	Turn         int      `json:"turn"` // back to before this turn (an undo: the rewind's)
	Undo         bool     `json:"undo,omitempty"`
	Files        bool     `json:"files"`
	Conversation bool     `json:"conversation"`
	Turns        []int    `json:"turns,omitempty"` // the turns undone (redone)
	Restored     []string `json:"restored"`
	Removed      []string `json:"removed"`
	// Overwritten are the conflicts a forced rewind overwrote.
	Overwritten []RewindConflict `json:"overwritten,omitempty"`
	// Recovered: a crash interrupted it; the daemon finished it at start.
	Recovered bool `json:"recovered,omitempty"`
}

// UserMessageEvent is user_message: a prompt as the session took it,
// with the turn it starts (or, Steered, joins: a session/steer).
type UserMessageEvent struct {
	Text    string `json:"text"`
	Steered bool   `json:"steered,omitempty"`
	// ClientID and ClientName name the client that sent it (the name
	// from its initialize's clientInfo), when one did.
	ClientID   string `json:"clientId,omitempty"`
	ClientName string `json:"clientName,omitempty"`
}

// AgentMessageChunkEvent is agent_message_chunk: streamed reply text.
type AgentMessageChunkEvent struct {
	Text string `json:"text"`
}

// AgentThoughtChunkEvent is agent_thought_chunk: streamed reasoning.
type AgentThoughtChunkEvent struct {
	Text string `json:"text"`
}

// ToolCallEvent is tool_call: a call the model made, before it runs.
// Title and Kind are for the people watching (Kind is ACP's: read,
// edit, delete, move, search, execute, think, fetch, other: the Kind
// constants);
// NeedsApproval is true exactly when an approval_request for this call
// follows.
type ToolCallEvent struct {
	ToolCallID    string          `json:"toolCallId"`
	Name          string          `json:"name"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
	NeedsApproval bool            `json:"needsApproval"`
	RawInput      json.RawMessage `json:"rawInput"`
}

// ToolResultEvent is tool_result: what a call gave back to the model.
type ToolResultEvent struct {
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	RawOutput  string `json:"rawOutput"`
	IsError    bool   `json:"isError"`
	// Details are the call's structured fields, where a tool has them
	// for clients (a background process's: ProcessDetails).
	Details json.RawMessage `json:"details,omitempty"`
}

// ApprovalRequestEvent is approval_request: the daemon waits for a
// session/approve (or the timeout). Kind is the tool's, as in tool_call.
type ApprovalRequestEvent struct {
	RequestID   string          `json:"requestId"`
	ToolCallID  string          `json:"toolCallId"`
	ToolName    string          `json:"toolName"`
	Kind        string          `json:"kind"`
	RawInput    json.RawMessage `json:"rawInput"`
	Summary     string          `json:"summary"`
	TimeoutSecs int             `json:"timeoutSecs"`
	Options     []string        `json:"options"`
	// Rule says why it asks: the permission rule that says ask, or the
	// risk level.
	Rule string `json:"rule,omitempty"`
	// Subagent names the sub-agent that asks, when the request is its,
	// shown in its parent's session (answer it there, with this
	// requestId).
	Subagent *SubagentRef `json:"subagent,omitempty"`
	// Review is the reviewer's rating, when it left the call to the
	// user.
	Review *Review `json:"review,omitempty"`
}

// ApprovalResolvedEvent is approval_resolved: the decision, and who made
// it (a client, "timeout" or "cancel").
type ApprovalResolvedEvent struct {
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	By        string `json:"by"`
	// ClientID and ClientName name the client that answered (by
	// "client").
	ClientID   string `json:"clientId,omitempty"`
	ClientName string `json:"clientName,omitempty"`
}

// PlanEvent is plan: the agent's plan as it stands.
type PlanEvent struct {
	Entries []PlanEntry `json:"entries"`
	// Text is a plan-mode plan, whole (exit_plan's), and Path the file
	// it was written to, relative to the session's directory.
	Text string `json:"text,omitempty"`
	Path string `json:"path,omitempty"`
}

// ContextUsageEvent is context_usage, after each model call.
type ContextUsageEvent struct {
	// InputTokens is the size of the call's input, cached parts included.
	InputTokens      int64 `json:"inputTokens"`
	MaxContextTokens int64 `json:"maxContextTokens"`
	// The parts of the input read from and written to the prompt cache.
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	// SessionCostUSD is what the session has cost so far, when a price
	// is known.
	SessionCostUSD *float64 `json:"sessionCostUsd,omitempty"`
}

// HistoryTrimmedEvent is history_trimmed: older turns left the model's
// view.
type HistoryTrimmedEvent struct {
	DroppedMessages int    `json:"droppedMessages"`
	KeptTurns       int    `json:"keptTurns"`
	Reason          string `json:"reason"`
}

// TurnCompleteEvent is turn_complete: how the turn ended.
type TurnCompleteEvent struct {
	Outcome    string     `json:"outcome"`
	StopReason string     `json:"stopReason"`
	Content    string     `json:"content"`
	Error      *ErrorInfo `json:"error,omitempty"`
	Notice     string     `json:"notice,omitempty"` // as the prompt's result's
}

// Outcomes of turn_complete.
const (
	OutcomeCompleted = "completed"
	OutcomeCancelled = "cancelled"
	OutcomeFailed    = "failed"
)

// Stop reasons of session/prompt and turn_complete.
const (
	StopEndTurn         = "end_turn"
	StopCancelled       = "cancelled"
	StopMaxTurnRequests = "max_turn_requests"
	StopError           = "error"
	StopMaxTokens       = "max_tokens"
	StopRefusal         = "refusal"
	StopBudget          = "budget"
	StopBlocked         = "blocked" // a UserPromptSubmit hook refused the prompt
	// StopInterrupted: the daemon stopped before the prompt's turn ended
	// (a result kept for its clientMessageId).
	StopInterrupted = "interrupted"
)

// Approval decisions (session/approve, approval_resolved). Each
// "always" answer names its scope: the _always ones hold for the rest of
// the session (kept with the live session, never stored), the _project
// ones for the session's project (stored, for every later session
// there, until revoked).
const (
	DecisionAllowOnce         = "allow_once"
	DecisionAllowAlways       = "allow_always"        // this tool, this session
	DecisionAllowAlwaysInput  = "allow_always_input"  // this very input, this session
	DecisionAllowProject      = "allow_project"       // this tool, this project
	DecisionAllowProjectInput = "allow_project_input" // this very input, this project
	DecisionRejectOnce        = "reject_once"
	DecisionRejectAlways      = "reject_always"  // this tool, this session
	DecisionRejectProject     = "reject_project" // this tool, this project
	// A plan's (exit_plan's approval_request, kind KindPlan).
	DecisionProceedAsk   = "proceed_ask"
	DecisionProceedEdits = "proceed_accept_edits"
	DecisionKeepPlanning = "keep_planning"
)

// ApprovalReviewedEvent is approval_reviewed: what the reviewer ([approvals]
// reviewer) said of an approval request, and what came of it (allow: it
// ran unasked; deny: refused; ask: the user was asked, with the rating).
type ApprovalReviewedEvent struct {
	RequestID  string `json:"requestId"`
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Reviewer   string `json:"reviewer"`
	// Decision is what was done: allow, deny or ask (an answer past
	// reviewer_allows, an error, a timeout or no answer ask).
	Decision  string `json:"decision"`
	Risk      string `json:"risk,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	// Error says why there was no usable answer.
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"durationMs"`
}

func (ApprovalReviewedEvent) EventType() string { return EventApprovalReviewed }

// EventApprovalReviewed is approval_reviewed's type.
const EventApprovalReviewed = "approval_reviewed"

// ConfigUpdateEvent is config_update: the session's settings changed
// (session/configure, or the plan mode's end switching its mode): what
// they are now, as session/configure answers them, which of them
// changed, and who changed them. A mode binds the session from the
// moment it changes, so every attached client is told at once (the
// chat's footer, the editor's mode option, the dashboard's picker). A
// change that changes nothing is not told.
type ConfigUpdateEvent struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	URL           string `json:"url"`
	Risk          string `json:"risk"`
	ContextWindow int64  `json:"contextWindow"`
	// Reasoning is the level in force ("": the provider's own).
	Reasoning string `json:"reasoning"`
	// Sandbox and Network say how the session's commands are confined
	// ("off": not at all).
	Sandbox string `json:"sandbox"`
	Network bool   `json:"network"`
	// Changed names what changed: model, risk, reasoning, sandbox,
	// network (the ConfigSettings), in that order.
	Changed []string `json:"changed"`
	// By is who changed them: ConfigByClient (ClientID and ClientName
	// name it) or ConfigByAgent (the plan mode's end: exit_plan, as its
	// user answered).
	By         string `json:"by"`
	ClientID   string `json:"clientId,omitempty"`
	ClientName string `json:"clientName,omitempty"`
}

func (ConfigUpdateEvent) EventType() string { return EventConfigUpdate }

// EventConfigUpdate is config_update's type.
const EventConfigUpdate = "config_update"

// Who changed a session's settings (config_update's by).
const (
	ConfigByClient = "client"
	ConfigByAgent  = "agent"
)

// ConfigSettings are the settings a config_update's changed names, in
// its order.
var ConfigSettings = []string{"model", "risk", "reasoning", "sandbox", "network"}

// Review is a reviewer's rating on an approval_request it left to the
// user.
type Review struct {
	Risk      string `json:"risk"`
	Rationale string `json:"rationale"`
}

// KindPlan is the kind of the approval_request that asks to leave the
// plan mode with a plan.
const KindPlan = "plan"

// PlanDecisions are a plan approval's options.
var PlanDecisions = []string{DecisionProceedAsk, DecisionProceedEdits, DecisionKeepPlanning}

// Tool kinds of tool_call and approval_request (ACP's ToolKind).
const (
	KindRead    = "read"
	KindEdit    = "edit"
	KindDelete  = "delete"
	KindMove    = "move"
	KindSearch  = "search"
	KindExecute = "execute"
	KindThink   = "think"
	KindFetch   = "fetch"
	KindOther   = "other"
	// KindSampling is an approval's kind (not a tool's): a tool asks to
	// call the model (an MCP server's sampling/createMessage).
	KindSampling = "sampling"
)
