// Package protocol defines zeroclaw's wire vocabulary on top of JSON-RPC:
// method and event names, params and results, error codes, and the params
// decoder that accepts both camelCase and snake_case keys.
package protocol

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Version is the protocol version this daemon speaks.
const Version = 1

// SupportedVersions lists every protocol version the daemon accepts.
var SupportedVersions = []int{Version}

// Methods served by the daemon (client -> daemon).
const (
	MethodInitialize = "initialize"
	MethodStatus     = "status"
	MethodShutdown   = "shutdown"
	MethodReload     = "daemon/reload"
)

// Error codes beyond the JSON-RPC standard ones.
const (
	CodeSessionNotFound = -32000
	CodeSessionLimit    = -32001
	CodeSessionBusy     = -32002
	CodeForbidden       = -32003
	CodeNotInitialized  = -32010
	CodeVersionMismatch = -32011
	CodeConfigInvalid   = -32013
)

// ClientInfo names the client program.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ClientCapabilities is what the client can do for the daemon.
type ClientCapabilities struct {
	// Elicitation is nil when absent (no support); {} means form mode.
	Elicitation *Elicitation `json:"elicitation,omitempty"`
	// MaxFrameBytes is the largest frame the client accepts (0: the
	// protocol default); the daemon never sends a larger one.
	MaxFrameBytes int `json:"maxFrameBytes,omitempty"`
	// FS: the client reads and writes the session's files for its file
	// tools (fs/read_text_file, fs/write_text_file): an editor, whose
	// unsaved buffers are the truth and which shows writes as diffs.
	FS *FSCapabilities `json:"fs,omitempty"`
	// Terminal: the client runs the session's shell commands
	// (terminal/run), in its own terminal.
	Terminal bool `json:"terminal,omitempty"`
}

// FSCapabilities says which file requests a client answers.
type FSCapabilities struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

// Daemon -> client file requests (a client that declared fs).
const (
	MethodFSReadTextFile  = "fs/read_text_file"
	MethodFSWriteTextFile = "fs/write_text_file"
)

// Daemon -> client command requests (a client that declared terminal).
const (
	MethodTerminalRun    = "terminal/run"
	MethodTerminalCancel = "terminal/cancel" // a notification
)

// TerminalRunParams asks the client to run a command (Program -c
// Command, in Cwd) and answer when it exits or TimeoutSecs pass; RunID
// names it for terminal/cancel.
type TerminalRunParams struct {
	SessionID       string `json:"sessionId"`
	RunID           string `json:"runId"`
	Program         string `json:"program"`
	Command         string `json:"command"`
	Cwd             string `json:"cwd"`
	TimeoutSecs     int    `json:"timeoutSecs"`
	OutputByteLimit int    `json:"outputByteLimit"`
}

// TerminalRunResult is how a command ended: its output (stdout and
// stderr, the end kept) and exit code (null when a signal ended it).
type TerminalRunResult struct {
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
	ExitCode  *int   `json:"exitCode"`
	Signal    string `json:"signal,omitempty"`
	TimedOut  bool   `json:"timedOut,omitempty"`
}

// TerminalCancelParams stop a command the turn no longer waits for.
type TerminalCancelParams struct {
	SessionID string `json:"sessionId"`
	RunID     string `json:"runId"`
}

// FSReadParams asks the client for a file's text; Path is absolute.
type FSReadParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
}

// FSReadResult is the file's text.
type FSReadResult struct {
	Content string `json:"content"`
}

// FSWriteParams asks the client to write a file; Path is absolute.
type FSWriteParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// Elicitation advertises elicitation support.
type Elicitation struct {
	Form *struct{} `json:"form,omitempty"`
	// URL: the client can send the user to a URL (an MCP server's
	// url-mode elicitation).
	URL *struct{} `json:"url,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion    *int                `json:"protocolVersion,omitempty"`
	ClientInfo         *ClientInfo         `json:"clientInfo,omitempty"`
	ClientID           string              `json:"clientId,omitempty"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
}

// DefaultMaxFrame is the frame limit of the protocol unless configured:
// the largest frame either side accepts.
const DefaultMaxFrame = 8 << 20

// Capabilities lists what the daemon serves.
type Capabilities struct {
	Methods []string `json:"methods"`
	Events  []string `json:"events"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion int    `json:"protocolVersion"`
	ServerVersion   string `json:"serverVersion"`
	ServerPID       int    `json:"serverPid"`
	ClientID        string `json:"clientId"`
	// MaxFrameBytes is the largest frame the daemon accepts, and the
	// largest it sends to this client.
	MaxFrameBytes int          `json:"maxFrameBytes"`
	Capabilities  Capabilities `json:"capabilities"`
	// RiskLevels are the risk levels a session may be configured with
	// (RiskLevels), least allowed first, each with what a client shows
	// for it: a client's mode picker keeps no list of its own.
	RiskLevels []RiskLevel `json:"riskLevels"`
}

// SessionSummary is one live session in a status result.
type SessionSummary struct {
	SessionID  string `json:"sessionId"`
	AgentAlias string `json:"agentAlias"`
	Mode       string `json:"mode"`
	State      string `json:"state"`
	Clients    int    `json:"clients"`
}

// StatusResult is the result of status.
type StatusResult struct {
	ServerVersion   string           `json:"serverVersion"`
	ProtocolVersion int              `json:"protocolVersion"`
	PID             int              `json:"pid"`
	UptimeMs        int64            `json:"uptimeMs"`
	Endpoint        string           `json:"endpoint"`
	ConfigDir       string           `json:"configDir"`
	DataDir         string           `json:"dataDir"`
	Ephemeral       bool             `json:"ephemeral"`
	Clients         int              `json:"clients"`
	ActiveSessions  int              `json:"activeSessions"`
	Sessions        []SessionSummary `json:"sessions"`
	// Provider says which provider the default agent uses ("echo" when no
	// model is configured), so a user sees at once whether a model answers.
	Provider string `json:"provider"`
	// Gateway is the gateway's URL, when it runs (spec 10.1).
	Gateway string `json:"gateway,omitempty"`
	// Model and ProviderURL: the default agent's (with Provider, its kind).
	Model       string `json:"model,omitempty"`
	ProviderURL string `json:"providerUrl,omitempty"`
	// MCPServers are the configured MCP servers and their state.
	MCPServers []MCPServerStatus `json:"mcpServers,omitempty"`
	// ConfigWarnings are mistakes the config runs with.
	ConfigWarnings []string `json:"configWarnings,omitempty"`
	// Agents are the configured agents, by alias, with what each runs on
	// (for a client's agent picker; models lists an agent's models).
	Agents []AgentStatus `json:"agents"`
	// Today sums the model calls of every session today (local time),
	// and says what the [budget] allows.
	Today SpendToday `json:"today"`
	// Sandbox says how the agent's commands are confined.
	Sandbox SandboxStatus `json:"sandbox"`
	// StayingFor is the work that keeps an ephemeral daemon running
	// after its last client leaves (omitted: none, or a persistent
	// daemon).
	StayingFor *StayingFor `json:"stayingFor,omitempty"`
}

// StayingFor is the work an ephemeral daemon waits for before it exits:
// running turns (of top-level sessions), queued prompts, live
// background processes, active goals and running sub-agents.
type StayingFor struct {
	Turns     int `json:"turns,omitempty"`
	Queued    int `json:"queued,omitempty"`
	Processes int `json:"processes,omitempty"`
	Goals     int `json:"goals,omitempty"`
	Subagents int `json:"subagents,omitempty"`
}

// Empty says that nothing is left to wait for.
func (w StayingFor) Empty() bool { return w == StayingFor{} }

// String says the work as a person reads it: "2 processes, 1 goal"
// ("" when empty).
func (w StayingFor) String() string {
	var parts []string
	for _, c := range []struct {
		n         int
		one, many string
	}{{w.Turns, "turn", "turns"}, {w.Queued, "queued prompt", "queued prompts"}, {w.Processes, "process", "processes"},
		{w.Goals, "goal", "goals"}, {w.Subagents, "sub-agent", "sub-agents"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.one)
		case c.n > 1:
			parts = append(parts, strconv.Itoa(c.n)+" "+c.many)
		}
	}
	return strings.Join(parts, ", ")
}

// SandboxStatus is status's sandbox: the mode in force, whether commands
// may use the network, what enforces it (landlock, seatbelt, job, none)
// and why, or why not.
type SandboxStatus struct {
	Mode       string `json:"mode"`
	Network    bool   `json:"network"`
	EnforcedBy string `json:"enforcedBy"`
	Reason     string `json:"reason,omitempty"`
	// Namespaces: commands run in namespaces of their own (Linux); when
	// not, NamespacesReason says why.
	Namespaces       bool   `json:"namespaces"`
	NamespacesReason string `json:"namespacesReason,omitempty"`
}

// SpendToday is status's today: the day's usage and the limits.
type SpendToday struct {
	Day   string `json:"day"` // YYYY-MM-DD
	Usage Usage  `json:"usage"`
	// The [budget] limits in USD, when set.
	MaxCostUSDPerDay     float64 `json:"maxCostUsdPerDay,omitempty"`
	MaxCostUSDPerSession float64 `json:"maxCostUsdPerSession,omitempty"`
}

// AgentStatus describes a configured agent: its provider (config name
// and kind), model and risk level.
type AgentStatus struct {
	Alias        string `json:"alias"`
	Provider     string `json:"provider"`
	ProviderKind string `json:"providerKind"`
	Model        string `json:"model"`
	Risk         string `json:"risk"`
}

// ReloadResult answers daemon/reload: the config now in force.
type ReloadResult struct {
	Reloaded bool `json:"reloaded"`
	// Config is the file read ("" when there is none: built-in defaults).
	Config   string   `json:"config"`
	Warnings []string `json:"warnings,omitempty"`
	// RestartNeeded names the settings that changed but take effect only
	// when the daemon starts again (the gateway, daemon.max_frame_bytes).
	RestartNeeded []string `json:"restartNeeded,omitempty"`
}

// MCPServerStatus describes an MCP server: its state is stopped (not
// started yet), starting, ready or failed (with error: why, the exit
// status and the end of its stderr; started again after a backoff).
// PerSession: a session's own server (an editor's), SessionID which.
// Hidden are its tools the model is not offered (one that needs MCP
// tasks), and why. Auth says when it needs a login.
type MCPServerStatus struct {
	Name       string          `json:"name"`
	State      string          `json:"state"`
	Tools      int             `json:"tools"`
	Error      string          `json:"error,omitempty"`
	PerSession bool            `json:"perSession,omitempty"`
	SessionID  string          `json:"sessionId,omitempty"`
	Hidden     []MCPHiddenTool `json:"hiddenTools,omitempty"`
	// Auth is "login_required" when the server wants an OAuth login
	// (zeroclaw mcp login NAME).
	Auth string `json:"auth,omitempty"`
	// ProtocolVersion is the MCP revision the server and zeroclaw agreed
	// on ("2026-07-28", "2025-11-25", ...), once it was ready.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
}

// MCPHiddenTool is a server's tool not offered to the model, and why.
type MCPHiddenTool struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// ShutdownResult is the result of shutdown.
type ShutdownResult struct {
	ShuttingDown bool `json:"shuttingDown"`
}

// VersionMismatchData is the data of a -32011 error.
type VersionMismatchData struct {
	Supported []int  `json:"supported"`
	Kind      string `json:"kind"`
}

// Session methods (client -> daemon) and the daemon's requests and
// notifications (daemon -> client).
const (
	MethodSessionNew         = "session/new"
	MethodSessionPrompt      = "session/prompt"
	MethodSessionAwait       = "session/await"
	MethodSessionCancel      = "session/cancel"
	MethodSessionClose       = "session/close"
	MethodSessionApprove     = "session/approve"
	MethodSessionList        = "session/list"
	MethodSessionGet         = "session/get"
	MethodSessionCompact     = "session/compact"
	MethodSessionConfigure   = "session/configure"
	MethodModels             = "models"
	MethodSessionHistory     = "session/history"
	MethodSessionDelete      = "session/delete"
	MethodFileAttach         = "file/attach"
	MethodSessionEvent       = "session/event"
	MethodFileUpload         = "file/upload"
	MethodSessionRename      = "session/rename"
	MethodSessionWatch       = "session/watch"
	MethodSessionCheckpoints = "session/checkpoints"
	MethodSessionRewind      = "session/rewind"
	MethodSessionDiff        = "session/diff"
	MethodSessionFork        = "session/fork"
	MethodSessionExport      = "session/export"
	MethodSessionSteer       = "session/steer"
	MethodSessionQueue       = "session/queue"
	MethodSessionQueueRemove = "session/queue/remove"
	MethodSessionQueueClear  = "session/queue/clear"
	MethodProcessList        = "process/list"
	MethodProcessOutput      = "process/output"
	MethodProcessKill        = "process/kill"
	MethodProcessWrite       = "process/write"
	MethodSessionQueueSteer  = "session/queue/steer"
	MethodSessionMCP         = "session/mcp"
	MethodPermissionsList    = "permissions/list"
	MethodPermissionsRevoke  = "permissions/revoke"

	MethodSessionUpdate  = "session/update"
	MethodSessionChanged = "session/changed"
	// MethodSessionMCPChanged tells a session's attached clients that
	// what its MCP servers offer may have changed (session/mcp again).
	MethodSessionMCPChanged = "session/mcpChanged"
	MethodElicitationCreate = "elicitation/create"
)

// SessionRenameParams are session/rename's: the new title ("" clears it).
type SessionRenameParams struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
}

// SessionWatchResult answers session/watch.
type SessionWatchResult struct {
	Watching bool `json:"watching"`
}

// SessionChanged is the session/changed notification to a client that
// follows the list: the session as session/list describes it, or
// deleted.
type SessionChanged struct {
	SessionID string       `json:"sessionId"`
	Session   *SessionInfo `json:"session,omitempty"`
	Deleted   bool         `json:"deleted,omitempty"`
}

// Event types of session/update.
const (
	EventAgentMessageChunk = "agent_message_chunk"
	EventAgentThoughtChunk = "agent_thought_chunk"
	EventToolCall          = "tool_call"
	EventToolResult        = "tool_result"
	EventApprovalRequest   = "approval_request"
	EventApprovalResolved  = "approval_resolved"
	EventPlan              = "plan"
	EventContextUsage      = "context_usage"
	EventTurnComplete      = "turn_complete"
	EventUserMessage       = "user_message"
	EventHistoryTrimmed    = "history_trimmed"
	EventRewind            = "rewind"
	EventHook              = "hook"
	EventQueueUpdate       = "queue_update"
	EventToolProgress      = "tool_progress"
	EventProcessUpdate     = "process_update"
	EventSubagentUpdate    = "subagent_update"
	EventInputUpdate       = "input_update"
	EventTurnInterrupted   = "turn_interrupted"
	EventTurnResumed       = "turn_resumed"
)

// States of an input (input_update).
const (
	InputQueued    = "queued"
	InputStarted   = "started"
	InputSteered   = "steered"
	InputCompleted = "completed"
	InputCancelled = "cancelled"
	InputDiscarded = "discarded"
	InputRefused   = "refused"
)

// States of a sub-agent (subagent_update).
const (
	SubagentRunning     = "running"
	SubagentCompleted   = "completed"
	SubagentFailed      = "failed"
	SubagentCancelled   = "cancelled"
	SubagentInterrupted = "interrupted"
)

// EventTypes lists every event type, for the capabilities (the order
// of Events).
var EventTypes = func() []string {
	out := make([]string, len(Events))
	for i, e := range Events {
		out[i] = e.Type
	}
	return out
}()

// Decisions are every answer a tool's approval takes, in the order
// they are offered. allow_always_input (an addition to the spec) allows
// this tool with exactly this input for the rest of the session: the
// same command; the _project ones (additions) are stored for the
// project. A request lists those it takes (approval_request.options).
var Decisions = []string{DecisionAllowOnce, DecisionAllowAlways, DecisionAllowAlwaysInput, DecisionAllowProject, DecisionAllowProjectInput,
	DecisionRejectOnce, DecisionRejectAlways, DecisionRejectProject}

// SessionNewParams are the params of session/new.
type SessionNewParams struct {
	AgentAlias   string `json:"agentAlias,omitempty"`
	Cwd          string `json:"cwd,omitempty"`
	SessionID    string `json:"sessionId,omitempty"`
	Mode         string `json:"mode,omitempty"`
	KeepSiblings bool   `json:"keep_siblings,omitempty"`
	// Risk starts a new session in that risk level (its mode: readonly,
	// plan, supervised, edits, full); "" is the agent's. A session that
	// exists keeps its own (session/configure changes it).
	Risk string `json:"risk,omitempty"`
	// MCPServers are more MCP servers for this session only (an editor's,
	// through ACP): started on its first use, stopped with the session.
	MCPServers []MCPServerSpec `json:"mcpServers,omitempty"`
}

// MCPServerSpec is an MCP server given with session/new: a command
// (stdio, on the daemon's machine) or a URL (streamable HTTP).
type MCPServerSpec struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// SessionNewResult is the result of session/new.
type SessionNewResult struct {
	SessionID    string `json:"sessionId"`
	AgentAlias   string `json:"agentAlias"`
	Mode         string `json:"mode"`
	Cwd          string `json:"cwd"`
	MessageCount int64  `json:"messageCount"`
	LastSeq      int64  `json:"lastSeq"`
	Resumed      bool   `json:"resumed"`
	// Evicted lists the sibling sessions this call closed.
	Evicted []string `json:"evicted"`
	// Interrupted is true when the session's last turn was cut by a
	// daemon that died.
	Interrupted bool `json:"interrupted,omitempty"`
	// Queue is the prompts waiting behind the running turn (absent when
	// none waits).
	Queue []QueueItem `json:"queue,omitempty"`
	// Instructions are the project instruction files (AGENTS.md, else
	// CLAUDE.md, from the repository root down to cwd) in the agent's
	// system prompt, outermost first.
	Instructions []string `json:"instructions"`
	// What it runs on: the provider (its config name), the model, the
	// provider's URL, the risk level and the context window.
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ProviderURL   string `json:"providerUrl"`
	Risk          string `json:"risk"`
	ContextWindow int64  `json:"contextWindow"`
	// Reasoning is the session's reasoning level ("": the provider's).
	Reasoning string `json:"reasoning,omitempty"`
	Lineage
}

// Lineage is where a sub-agent's session comes from: the session and the
// tool call (task) that started it, and its depth (0: a session a client
// started, which has no parent).
type Lineage struct {
	ParentSessionID  string `json:"parentSessionId,omitempty"`
	ParentToolCallID string `json:"parentToolCallId,omitempty"`
	Depth            int    `json:"depth"`
}

// Attachment is one file of a prompt (section 9).
type Attachment struct {
	Path    string `json:"path,omitempty"`
	DataB64 string `json:"dataB64,omitempty"`
	// RefID names a file stored already (by file/upload or file/attach).
	RefID    string `json:"refId,omitempty"`
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	// Resource names an MCP server's resource: read from the server when
	// the prompt is sent.
	Resource *ResourceRef `json:"resource,omitempty"`
}

// SessionMCPResult is session/mcp's: what the session's MCP servers that
// are ready offer besides tools.
type SessionMCPResult struct {
	SessionID string        `json:"sessionId"`
	Prompts   []MCPPrompt   `json:"prompts"`
	Resources []MCPResource `json:"resources"`
}

// MCPPrompt is an MCP server's prompt, as a slash command.
type MCPPrompt struct {
	Command     string              `json:"command"` // /mcp__SERVER__PROMPT
	Server      string              `json:"server"`
	Name        string              `json:"name"`
	Description string              `json:"description,omitempty"`
	Arguments   []MCPPromptArgument `json:"arguments,omitempty"`
}

// MCPPromptArgument is one of a prompt's arguments.
type MCPPromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// MCPResource is an MCP server's resource (attach it with a resource
// attachment).
type MCPResource struct {
	Server   string `json:"server"`
	URI      string `json:"uri"`
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// ResourceRef names a resource of an MCP server (its [mcp.servers]
// name, or a session's own server's).
type ResourceRef struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// SessionPromptParams are the params of session/prompt.
type SessionPromptParams struct {
	SessionID   string       `json:"sessionId"`
	Prompt      *string      `json:"prompt"`
	Attachments []Attachment `json:"attachments,omitempty"`
	// ClientMessageID names the prompt (1–128 of [A-Za-z0-9._:-], unique
	// per session for 24 h): sent again, it runs nothing and is answered
	// with the first one's outcome.
	ClientMessageID string `json:"clientMessageId,omitempty"`
}

// SessionAwaitParams are session/await's: the prompt whose result to
// wait for.
type SessionAwaitParams struct {
	SessionID       string `json:"sessionId"`
	ClientMessageID string `json:"clientMessageId"`
}

// Usage counts the tokens of a turn (or a session, or a day) and what
// they cost.
type Usage struct {
	// InputTokens counts every input token, cached ones included.
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// The parts of InputTokens read from and written to the provider's
	// prompt cache.
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	// CostUSD is what the calls whose price is known cost; absent when
	// no call's price is known.
	CostUSD *float64 `json:"costUsd,omitempty"`
}

// ErrorInfo is the error of a failed turn.
type ErrorInfo struct {
	Message string `json:"message"`
}

// SessionPromptResult is the result of session/prompt.
type SessionPromptResult struct {
	SessionID  string     `json:"sessionId"`
	TurnID     string     `json:"turnId,omitempty"`
	StopReason string     `json:"stopReason"`
	Content    string     `json:"content"`
	Usage      *Usage     `json:"usage,omitempty"`
	Error      *ErrorInfo `json:"error,omitempty"`
	// Notice says what the person can do about a turn that ended short
	// (max_tokens: the limit and the key that raises it).
	Notice string `json:"notice,omitempty"`
	// InputID names the prompt (its input_update events carry it).
	InputID string `json:"inputId,omitempty"`
	// Duplicate: a prompt with this clientMessageId was taken before and
	// its turn (TurnID) is still queued or running: nothing more runs.
	Duplicate bool `json:"duplicate,omitempty"`
}

// SessionConfigureParams change a session's settings; an absent field
// stays, "" goes back to the agent's.
type SessionConfigureParams struct {
	SessionID string  `json:"sessionId"`
	Model     *string `json:"model,omitempty"`
	Risk      *string `json:"risk,omitempty"`
	// Reasoning is off, low, medium or high.
	Reasoning *string `json:"reasoning,omitempty"`
	// Sandbox (read-only, workspace-write) and Network (false) tighten
	// the session's sandbox; never past the config's.
	Sandbox *string `json:"sandbox,omitempty"`
	Network *bool   `json:"network,omitempty"`
}

// SessionConfigureResult says what a session runs on (session/configure,
// and in the session/new result).
type SessionConfigureResult struct {
	SessionID     string `json:"sessionId"`
	Provider      string `json:"provider"`
	ProviderKind  string `json:"providerKind"`
	Model         string `json:"model"`
	URL           string `json:"url"`
	Risk          string `json:"risk"`
	ContextWindow int64  `json:"contextWindow"`
	// Reasoning is the level in force ("": none set, the provider's).
	Reasoning string `json:"reasoning"`
	// Sandbox and Network say how the session's commands are confined
	// ("off": not at all).
	Sandbox string `json:"sandbox,omitempty"`
	Network bool   `json:"network"`
}

// ModelsParams are the params of models.
type ModelsParams struct {
	AgentAlias string `json:"agentAlias,omitempty"`
}

// ModelsResult lists what the agent's provider offers.
type ModelsResult struct {
	Provider string   `json:"provider"`
	Kind     string   `json:"kind"`
	URL      string   `json:"url"`
	Current  string   `json:"current"`
	Models   []string `json:"models"`
}

// SessionCompactResult is the result of session/compact.
type SessionCompactResult struct {
	SessionID string `json:"sessionId"`
	// DroppedMessages are those newly left out of the model's view.
	DroppedMessages int `json:"droppedMessages"`
}

// SessionRef is params naming one session.
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// SessionCancelResult is the result of session/cancel.
type SessionCancelResult struct {
	SessionID string `json:"sessionId"`
	Cancelled bool   `json:"cancelled"`
}

// SessionCloseResult is the result of session/close.
type SessionCloseResult struct {
	SessionID string `json:"sessionId"`
	Closed    bool   `json:"closed"`
}

// SessionDeleteResult is the result of session/delete.
type SessionDeleteResult struct {
	SessionID string `json:"sessionId"`
	Deleted   bool   `json:"deleted"`
}

// SessionApproveParams are the params of session/approve.
type SessionApproveParams struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	Reason    string `json:"reason,omitempty"`
	// Feedback goes with keep_planning: the user's message about the
	// plan, which the model answers in the same turn.
	Feedback string `json:"feedback,omitempty"`
}

// SessionApproveResult is the result of session/approve.
type SessionApproveResult struct {
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`
	Accepted  bool   `json:"accepted"`
}

// SessionListParams are the params of session/list.
type SessionListParams struct {
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
	// Cursor continues from a page's nextCursor (keyset paging: cheap on
	// any number of sessions); when set, offset is ignored.
	Cursor string `json:"cursor,omitempty"`
	// Query keeps the sessions whose title, id or cwd contains it (ASCII
	// letters in any case); it pages by cursor only, without a total.
	Query string `json:"query,omitempty"`
	// ParentSessionID lists that session's children (its sub-agents),
	// the oldest first, all in one page.
	ParentSessionID string `json:"parentSessionId,omitempty"`
}

// SessionInfo is one session of session/list.
type SessionInfo struct {
	SessionID    string `json:"sessionId"`
	AgentAlias   string `json:"agentAlias"`
	Mode         string `json:"mode"`
	Cwd          string `json:"cwd"`
	Title        string `json:"title"`
	State        string `json:"state"` // idle | running | interrupted
	Live         bool   `json:"live"`
	CreatedMs    int64  `json:"createdMs"`
	UpdatedMs    int64  `json:"updatedMs"`
	LastSeq      int64  `json:"lastSeq"`
	MessageCount int64  `json:"messageCount"`
	// Risk is the session's risk level: its own, else its agent's
	// (absent for a stored session whose agent the config no longer
	// names).
	Risk string `json:"risk,omitempty"`
	// Usage sums the session's model calls (absent before the first).
	Usage *Usage `json:"usage,omitempty"`
	// ForkedFrom names the session and seq a fork was made from.
	ForkedFrom *ForkRef `json:"forkedFrom,omitempty"`
	// RunningTurnID is the turn running now, when one is.
	RunningTurnID string `json:"runningTurnId,omitempty"`
	// ResumedAttempts: how many times the running turn was continued
	// after a daemon's end cut it (absent: never).
	ResumedAttempts int `json:"resumedAttempts,omitempty"`
	// Attached lists the clients attached to a live session.
	Attached []AttachedClient `json:"attached,omitempty"`
	// Processes are the background processes running in a live session.
	Processes []ProcessInfo `json:"processes,omitempty"`
	Lineage
	// Children are the session's sub-agents (session/get only).
	Children []SubagentInfo `json:"children,omitempty"`
	// Goal is the session's goal, when it has one (session/get only).
	Goal *Goal `json:"goal,omitempty"`
}

// AttachedClient is a client attached to a session.
type AttachedClient struct {
	ClientID   string `json:"clientId"`
	ClientName string `json:"clientName,omitempty"`
}

// ForkRef is where a fork came from.
type ForkRef struct {
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
}

// SessionForkParams are session/fork's.
type SessionForkParams struct {
	SessionID string `json:"sessionId"`
	// AtSeq: the conversation up to this seq (absent: all of it); a seq
	// inside a turn forks at that turn's start.
	AtSeq        int64  `json:"atSeq,omitempty"`
	NewSessionID string `json:"newSessionId,omitempty"`
}

// SessionForkResult is session/fork's.
type SessionForkResult struct {
	SessionID string `json:"sessionId"`
}

// SessionExportParams are session/export's.
type SessionExportParams struct {
	SessionID string `json:"sessionId"`
	Format    string `json:"format"` // markdown, json or html
}

// SessionExportResult is session/export's: the document.
type SessionExportResult struct {
	Format  string `json:"format"`
	Content string `json:"content"`
}

// SessionListResult is the result of session/list.
type SessionListResult struct {
	Sessions []SessionInfo `json:"sessions"`
	// Total (how many sessions there are) and NextOffset answer a page
	// asked without a cursor.
	Total      *int `json:"total,omitempty"`
	NextOffset *int `json:"nextOffset,omitempty"`
	// NextCursor continues after this page; absent on the last one.
	NextCursor *string `json:"nextCursor"`
}

// SessionHistoryParams are the params of session/history.
type SessionHistoryParams struct {
	SessionID string `json:"sessionId"`
	SinceSeq  int64  `json:"sinceSeq,omitempty"`
	Limit     int    `json:"limit,omitempty"`
}

// SessionHistoryResult is the result of session/history: the events'
// session/update params as they were sent.
type SessionHistoryResult struct {
	SessionID string            `json:"sessionId"`
	Events    []json.RawMessage `json:"events"`
	LastSeq   int64             `json:"lastSeq"`
	More      bool              `json:"more"`
}

// FileUploadParams are the params of file/upload: one part of a file
// sent in parts. The first part has no uploadId; the answer gives one.
// The part with final:true stores the file and answers with it.
type FileUploadParams struct {
	UploadID string `json:"uploadId,omitempty"`
	DataB64  string `json:"dataB64"`
	Final    bool   `json:"final,omitempty"`
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// FileUploadResult answers a part: the upload's id and the bytes received
// so far; with the final part, the stored file (as file/attach gives it).
type FileUploadResult struct {
	UploadID      string      `json:"uploadId"`
	ReceivedBytes int64       `json:"receivedBytes"`
	File          *StoredFile `json:"file,omitempty"`
}

// StoredFile is a file the daemon stored (file/attach, file/upload's
// last part): attach it to a prompt by its refId.
type StoredFile struct {
	RefID        string `json:"refId"` // sha256:<hex>
	Marker       string `json:"marker"`
	Path         string `json:"path"`
	SizeBytes    int64  `json:"sizeBytes"`
	Deduplicated bool   `json:"deduplicated"`
	MimeType     string `json:"mimeType"`
}

// FileAttachParams are file/attach's: files (or, the same, attachments).
type FileAttachParams struct {
	Files       []Attachment `json:"files,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
}

// FileAttachResult answers file/attach.
type FileAttachResult struct {
	Files []StoredFile `json:"files"`
}

// SessionEventParams are the params of session/event: one stored event,
// read whole in parts (for an event that was cut to fit a frame).
type SessionEventParams struct {
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Offset    int64  `json:"offset,omitempty"`
}

// SessionEventResult is a part of one stored event's params (the JSON as
// stored), base64-encoded.
type SessionEventResult struct {
	SessionID  string `json:"sessionId"`
	Seq        int64  `json:"seq"`
	Offset     int64  `json:"offset"`
	TotalBytes int64  `json:"totalBytes"`
	DataB64    string `json:"dataB64"`
	More       bool   `json:"more"`
}

// ElicitationParams are the params of elicitation/create.
type ElicitationParams struct {
	SessionID       string          `json:"sessionId"`
	Mode            string          `json:"mode"` // form | url
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"` // form
	// URL and ElicitationID: a url-mode question (an MCP server's): send
	// the user to URL.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitationId,omitempty"`
	// ToolCallID is the tool call that asks, when one does.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ElicitationResult is a client's answer to elicitation/create.
type ElicitationResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// PlanEntry is one entry of a plan event.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// CheckpointFile is one file a turn changed.
type CheckpointFile struct {
	Path string `json:"path"` // relative to the session's directory
	// Change is created, modified (content or mode) or deleted; a move
	// is a deleted and a created.
	Change      string `json:"change"`
	BytesBefore int64  `json:"bytesBefore"`
	BytesAfter  int64  `json:"bytesAfter"`
}

// Checkpoint is one turn's checkpoint (session/checkpoints).
type Checkpoint struct {
	Turn  int    `json:"turn"`  // from 1, in the order turns started; never renumbered
	Title string `json:"title"` // the prompt's first line
	Seq   int64  `json:"seq"`   // its user_message's
	// StartedMs is when the turn started.
	StartedMs int64            `json:"startedMs"`
	Files     []CheckpointFile `json:"files"`
	// Uncaptured are changed paths whose earlier content was not kept
	// (larger than max_file_bytes, excluded, outside the directory).
	Uncaptured []string `json:"uncaptured"`
	// Rewound: a rewind undid the turn's changes to the files.
	Rewound bool `json:"rewound,omitempty"`
	// FilesOmitted counts the files and uncaptured paths left out of
	// Files and Uncaptured (past 1000 in all; session/diff has them).
	FilesOmitted int `json:"filesOmitted,omitempty"`
}

// SessionCheckpointsResult is the result of session/checkpoints;
// Omitted counts the oldest checkpoints left out (past 2 MiB in all).
type SessionCheckpointsResult struct {
	SessionID   string       `json:"sessionId"`
	Checkpoints []Checkpoint `json:"checkpoints"`
	Omitted     int          `json:"omitted,omitempty"`
}

// SessionRewindParams are session/rewind's.
type SessionRewindParams struct {
	SessionID string `json:"sessionId"`
	// Turn: back to the state before this turn.
	Turn int `json:"turn,omitempty"`
	// Files and Conversation (default true each): restore the
	// directory, cut the model's view.
	Files        *bool `json:"files,omitempty"`
	Conversation *bool `json:"conversation,omitempty"`
	// Force overwrites files changed since by someone else.
	Force bool `json:"force,omitempty"`
	// Undo undoes the last rewind (Turn is not given then).
	Undo bool `json:"undo,omitempty"`
}

// RewindConflict is a path a rewind would overwrite: changed since the
// agent changed it.
type RewindConflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SessionRewindResult is the result of session/rewind: rewound, with
// what it restored and removed, or not, with the conflicts.
type SessionRewindResult struct {
	SessionID string           `json:"sessionId"`
	Rewound   bool             `json:"rewound"`
	Restored  []string         `json:"restored"`
	Removed   []string         `json:"removed"`
	Conflicts []RewindConflict `json:"conflicts,omitempty"`
	// Processes are background processes the turns rewound started that
	// still run: nothing is done until they are stopped (force stops
	// them first).
	Processes []ProcessInfo `json:"processes,omitempty"`
	// Turns are the turns it undid (redid, for an undo).
	Turns []int `json:"turns"`
}

// SessionDiffParams are session/diff's.
type SessionDiffParams struct {
	SessionID string `json:"sessionId"`
	// Turn is the turn to show (absent: the whole session).
	Turn int `json:"turn,omitempty"`
}

// SessionDiffResult is session/diff's: a unified diff, and the files.
type SessionDiffResult struct {
	SessionID string           `json:"sessionId"`
	Turn      int              `json:"turn,omitempty"`
	Diff      string           `json:"diff"`
	Files     []CheckpointFile `json:"files"`
}

// PermissionsListParams are permissions/list's.
type PermissionsListParams struct {
	// Cwd: the rules in force there (the config's, and the answers
	// stored for its project); "": the config's and every stored one.
	Cwd string `json:"cwd,omitempty"`
}

// PermissionRule is a permission rule as permissions/list shows it.
type PermissionRule struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Pattern  string `json:"pattern"`
	Decision string `json:"decision"` // allow, ask, deny
	// Dir is the project directory a stored answer holds for, or the
	// project of the session a session's answer holds in ("": the
	// config's rules, everywhere).
	Dir    string `json:"dir"`
	Origin string `json:"origin"` // config, answer
	// Scope is where and how long it holds: ScopeGlobal, ScopeProject or
	// ScopeSession.
	Scope string `json:"scope"`
	// SessionID is the session a session's answer holds in.
	SessionID string `json:"sessionId,omitempty"`
	// PatternTruncated: Pattern is cut, as listed (past 4096 bytes; the
	// rule holds whole).
	PatternTruncated bool `json:"patternTruncated,omitempty"`
}

// Scopes of a permission rule (permissions/list).
const (
	// ScopeGlobal: a rule of config.toml, for every session everywhere.
	ScopeGlobal = "global"
	// ScopeProject: an answer stored for a project (its git root, else
	// its directory), for every session there, across daemon restarts,
	// until revoked.
	ScopeProject = "project"
	// ScopeSession: an answer for one live session, kept in memory with
	// it and never stored: it ends when the session is closed or
	// unloaded, or the daemon stops.
	ScopeSession = "session"
)

// PermissionsListResult is permissions/list's.
type PermissionsListResult struct {
	Rules []PermissionRule `json:"rules"`
}

// PermissionsRevokeParams are permissions/revoke's.
type PermissionsRevokeParams struct {
	ID string `json:"id"`
}

// PermissionsRevokeResult is permissions/revoke's.
type PermissionsRevokeResult struct {
	ID      string `json:"id"`
	Revoked bool   `json:"revoked"`
}

// SessionSteerParams are session/steer's.
type SessionSteerParams struct {
	SessionID string  `json:"sessionId"`
	Prompt    *string `json:"prompt"`
	// Attachments as session/prompt takes them.
	Attachments []Attachment `json:"attachments,omitempty"`
	// ExpectedTurnID: steer only that turn (else -32002 naming the one
	// that runs).
	ExpectedTurnID string `json:"expectedTurnId,omitempty"`
	// IdleBehavior is what a steer does when no turn runs:
	// "promptRequired" (nothing, the default) or "start" (a new turn).
	IdleBehavior string `json:"idleBehavior,omitempty"`
	// ClientMessageID as session/prompt's: a steer sent again is not
	// steered twice.
	ClientMessageID string `json:"clientMessageId,omitempty"`
}

// Steer outcomes.
const (
	SteerInjected       = "injected"
	SteerStartedNewTurn = "startedNewTurn"
	SteerPromptRequired = "promptRequired"
)

// SessionSteerResult is session/steer's.
type SessionSteerResult struct {
	Outcome string `json:"outcome"`
	TurnID  string `json:"turnId,omitempty"`
	InputID string `json:"inputId,omitempty"`
	// Duplicate: a steer with this clientMessageId was taken before;
	// Outcome and TurnID are the first one's.
	Duplicate bool `json:"duplicate,omitempty"`
}

// SessionQueueResult is session/queue's (and the answer of its remove
// and clear: the queue after).
type SessionQueueResult struct {
	SessionID string      `json:"sessionId"`
	Items     []QueueItem `json:"items"`
	// Removed counts the prompts removed (remove, clear).
	Removed int `json:"removed,omitempty"`
}

// ProcessListResult is process/list's answer: the session's background
// processes, the oldest first, bounded: a command is told cut past 4096
// bytes (CommandTruncated), and past 1 MiB in all the oldest ended
// processes are left out (Omitted counts them).
type ProcessListResult struct {
	Processes []ProcessInfo `json:"processes"`
	Omitted   int           `json:"omitted,omitempty"`
}

// ProcessOutputParams are process/output's params.
type ProcessOutputParams struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
	// Since is the offset to read from (0: the start).
	Since int64 `json:"since,omitempty"`
	// MaxBytes bounds the read (0: 64 KiB, also the most).
	MaxBytes int `json:"maxBytes,omitempty"`
	// PlainText removes a terminal's escape sequences from the output
	// (next still counts the terminal's bytes).
	PlainText bool `json:"plainText,omitempty"`
	// WaitMs, when there is nothing past since yet and the process
	// runs, waits up to this long for output or its end (at most
	// 30000): a client follows a process without polling.
	WaitMs int `json:"waitMs,omitempty"`
}

// ProcessOutputResult is process/output's answer.
type ProcessOutputResult struct {
	Output string `json:"output"`
	// Next is the offset to read from next.
	Next int64 `json:"next"`
	// Dropped is how many bytes between since and the oldest kept are
	// gone (0 when since is still kept).
	Dropped  int64  `json:"dropped"`
	State    string `json:"state"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// ProcessKillParams are process/kill's params.
type ProcessKillParams struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
	// Signal is TERM (the default), KILL, INT or HUP.
	Signal string `json:"signal,omitempty"`
}

// ProcessKillResult is process/kill's answer: killed is false when it
// had already ended.
type ProcessKillResult struct {
	Killed bool `json:"killed"`
}

// ProcessWriteParams are process/write's params.
type ProcessWriteParams struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
	Input     string `json:"input"`
}

// ProcessWriteResult is process/write's answer.
type ProcessWriteResult struct {
	Written int `json:"written"`
}

// SessionQueueRemoveParams are session/queue/remove's.
type SessionQueueRemoveParams struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
}

// SessionQueueSteerParams are session/queue/steer's: the queued prompt
// by its queue id, or by the clientMessageId it was sent with (sent
// again, the first move's answer, duplicate).
type SessionQueueSteerParams struct {
	SessionID       string `json:"sessionId"`
	ID              string `json:"id,omitempty"`
	ClientMessageID string `json:"clientMessageId,omitempty"`
}
