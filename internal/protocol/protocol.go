// Package protocol defines zeroclaw's wire vocabulary on top of JSON-RPC:
// method and event names, params and results, error codes, and the params
// decoder that accepts both camelCase and snake_case keys.
package protocol

// Version is the protocol version this daemon speaks.
const Version = 1

// SupportedVersions lists every protocol version the daemon accepts.
var SupportedVersions = []int{Version}

// Methods served by the daemon (client -> daemon).
const (
	MethodInitialize = "initialize"
	MethodStatus     = "status"
	MethodShutdown   = "shutdown"
)

// Error codes beyond the JSON-RPC standard ones.
const (
	CodeSessionNotFound = -32000
	CodeSessionLimit    = -32001
	CodeSessionBusy     = -32002
	CodeForbidden       = -32003
	CodeNotInitialized  = -32010
	CodeVersionMismatch = -32011
	CodeFrameTooLarge   = -32012
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
}

// Elicitation advertises elicitation support.
type Elicitation struct {
	Form *struct{} `json:"form,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion    *int                `json:"protocolVersion,omitempty"`
	ClientInfo         *ClientInfo         `json:"clientInfo,omitempty"`
	ClientID           string              `json:"clientId,omitempty"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
}

// Capabilities lists what the daemon serves.
type Capabilities struct {
	Methods []string `json:"methods"`
	Events  []string `json:"events"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion int          `json:"protocolVersion"`
	ServerVersion   string       `json:"serverVersion"`
	ServerPID       int          `json:"serverPid"`
	ClientID        string       `json:"clientId"`
	Capabilities    Capabilities `json:"capabilities"`
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
