package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Config is the whole of config.toml after defaults are applied.
type Config struct {
	Daemon    Daemon              `toml:"daemon"`
	Providers map[string]Provider `toml:"providers"`
	Agents    map[string]Agent    `toml:"agents"`
	Gateway   Gateway             `toml:"gateway"`
	MCP       MCP                 `toml:"mcp"`
	Budget    Budget              `toml:"budget"`
	// Checkpoints bound what each turn's checkpoint keeps.
	Checkpoints Checkpoints `toml:"checkpoints"`
	// Sandbox confines the commands the agent runs.
	Sandbox Sandbox `toml:"sandbox"`
	// Tools bounds what the tools keep running: background processes.
	Tools Tools `toml:"tools"`
	// Subagents bounds the sessions an agent starts with the task tool.
	Subagents Subagents `toml:"subagents"`
	// Schedules is [schedules]: prompts run at due times.
	Schedules Schedules `toml:"schedules"`
	// Goals is [goals]: objectives a session works toward.
	Goals Goals `toml:"goals"`
	// Approvals is [approvals]: a reviewer that answers for the user.
	Approvals Approvals `toml:"approvals"`
	// Permissions are the [[permissions]] rules, in order.
	Permissions []Permission `toml:"permissions"`
	// Hooks are the [[hooks]]: commands run at events of a turn.
	Hooks []Hook `toml:"hooks"`
	// Warnings are mistakes the config runs with (the daemon logs them).
	Warnings []string `toml:"-"`

	// Source is the file it was read from, "" for built-in defaults.
	Source string `toml:"-"`
	// Origins says where values came from, by key ("daemon.max_sessions",
	// "providers.x"): "config.toml:12" for the file, a reason for a table
	// chosen from the environment; a key absent here is a default (see
	// Origin).
	Origins map[string]string `toml:"-"`
}

// Origin says where the value of key came from: the file and line, the
// environment, or "default".
func (c *Config) Origin(key string) string {
	if o, ok := c.Origins[key]; ok {
		return o
	}
	for k := key; strings.Contains(k, "."); {
		k = k[:strings.LastIndex(k, ".")]
		if o, ok := c.Origins[k]; ok && !strings.Contains(o, ".toml:") {
			return o
		}
	}
	return "default"
}

// Daemon holds the [daemon] table.
type Daemon struct {
	MaxSessions         int `toml:"max_sessions"`
	PromptQueue         int `toml:"prompt_queue"`
	ApprovalTimeoutSecs int `toml:"approval_timeout_secs"`
	MaxFrameBytes       int `toml:"max_frame_bytes"`
	// ShellEnvDrop names more environment variables that commands the
	// agent runs do not get, beside every provider's api_key_env and the
	// well-known key variables (ShellEnvDropped).
	ShellEnvDrop []string `toml:"shell_env_drop"`
	// Shell runs the shell tool's commands: bash, sh, zsh, cmd,
	// powershell or pwsh; "": bash (cmd on Windows).
	Shell string `toml:"shell"`
	// MaxStopContinues bounds how often a Stop hook may send the agent
	// on in one turn.
	MaxStopContinues int `toml:"max_stop_continues"`
	// ContinueInterrupted: a turn a dying daemon cut goes on in the next
	// one (else it ends interrupted), at most ContinueAttempts times.
	ContinueInterrupted bool `toml:"continue_interrupted"`
	ContinueAttempts    int  `toml:"continue_attempts"`
}

// Provider is one [providers.<name>] table.
type Provider struct {
	Kind      string `toml:"kind"`
	BaseURL   string `toml:"base_url"`
	APIKeyEnv string `toml:"api_key_env"`
	Model     string `toml:"model"`
	// ContextWindow is the model's context window in tokens; 0: the
	// provider's default (see docs/protocol.md, "Context management").
	ContextWindow int64 `toml:"context_window"`
	// MaxTokens bounds a reply (one model call's output); 0: 8,192 for
	// anthropic, the server's own limit for openai.
	MaxTokens int `toml:"max_tokens"`
	// Reasoning is how hard the model thinks: "off" (or "": no
	// reasoning parameter sent), "low", "medium", "high".
	Reasoning string `toml:"reasoning"`
	// PromptCache sends Anthropic prompt-cache breakpoints (nil: true).
	PromptCache *bool `toml:"prompt_cache"`
	// Pricing is what the provider's models cost (nil: the built-in
	// table's price for the model, if it has one).
	Pricing *Pricing `toml:"pricing"`
}

// Pricing is a [providers.NAME.pricing] table: USD per million tokens.
// A cache price left out is the input price.
type Pricing struct {
	Input      float64  `toml:"input"`
	Output     float64  `toml:"output"`
	CacheRead  *float64 `toml:"cache_read"`
	CacheWrite *float64 `toml:"cache_write"`
}

// Hook is one [[hooks]] entry (Claude Code's command hooks).
type Hook struct {
	// Event is PreToolUse, PostToolUse, UserPromptSubmit, Stop or
	// SessionStart.
	Event string `toml:"event"`
	// Matcher is a tool name or a regular expression over it ("": all).
	Matcher     string `toml:"matcher"`
	Command     string `toml:"command"`
	TimeoutSecs int    `toml:"timeout_secs"`
}

// HookEvents are the events a hook can be for.
var HookEvents = []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"}

// Permission is one [[permissions]] rule: calls of Tool ("*": any)
// whose subject matches Pattern (a glob over the shell command line, or
// the file tool's path relative to the session directory) are allowed,
// asked about or denied.
type Permission struct {
	Tool     string `toml:"tool"`
	Pattern  string `toml:"pattern"`
	Decision string `toml:"decision"`
}

// Tools is the [tools] table.
type Tools struct {
	// MaxProcesses bounds a session's background processes running at
	// once (0: 8).
	MaxProcesses int `toml:"max_processes"`
	// OutputRingBytes is how much of each background process's output is
	// kept in memory, the newest (0: 1 MiB); all of it goes to a file.
	OutputRingBytes int `toml:"output_ring_bytes"`
	// ProcessLogBytes bounds each background process's output on disk
	// (0: 64 MiB): past it the oldest output is dropped, and the file
	// says so.
	ProcessLogBytes int64 `toml:"process_log_bytes"`
	// BackgroundAfterSecs is when a shell command given no timeout moves
	// to the background instead of being killed (0: 120, the default
	// timeout).
	BackgroundAfterSecs int `toml:"background_after_secs"`
	// WakeOnExit: a background process that ends on its own while its
	// session is idle starts a turn that tells the model (false: the
	// model hears of it at the session's next turn).
	WakeOnExit bool `toml:"wake_on_exit"`
	// KeepProcessesOnClose: session/close leaves a session's background
	// processes running (a later session/new finds them); false ends
	// them with the session. Deleting the session, or stopping the
	// daemon, ends them always.
	KeepProcessesOnClose bool `toml:"keep_processes_on_close"`
}

// Subagents is the [subagents] table.
// Approvals is [approvals].
type Approvals struct {
	// Reviewer names the agent that reviews each approval request first
	// ("": none, the default).
	Reviewer string `toml:"reviewer"`
	// ReviewerAllows is the highest risk the reviewer may allow alone
	// (low or medium).
	ReviewerAllows string `toml:"reviewer_allows"`
	// ReviewerTimeoutSecs bounds a review; past it the user is asked.
	ReviewerTimeoutSecs int `toml:"reviewer_timeout_secs"`
}

// Goals is [goals].
type Goals struct {
	// DefaultBudgetUSD bounds the cost of a goal set without a usd
	// limit (0: none).
	DefaultBudgetUSD float64 `toml:"default_budget_usd"`
	// DefaultTurns, DefaultMinutes and DefaultTokens bound a goal set
	// without that limit: every goal has all three.
	DefaultTurns   int   `toml:"default_turns"`
	DefaultMinutes int   `toml:"default_minutes"`
	DefaultTokens  int64 `toml:"default_tokens"`
}

// Schedules is [schedules].
type Schedules struct {
	// Enabled: due runs fire (false: schedules are kept, and run only
	// when asked: schedule/run).
	Enabled bool `toml:"enabled"`
	// Max bounds how many schedules there are.
	Max int `toml:"max"`
}

type Subagents struct {
	// MaxDepth is how deep sub-agents nest: 1, a session's children start
	// none; 0, no session starts any.
	MaxDepth int `toml:"max_depth"`
	// MaxConcurrent bounds a session's children running at once (the
	// daemon runs at most 16 in all).
	MaxConcurrent int `toml:"max_concurrent"`
}

// Sandbox is the [sandbox] table.
type Sandbox struct {
	// Mode is workspace-write, read-only or off ("": workspace-write
	// where the platform can enforce it, else off).
	Mode string `toml:"mode"`
	// Network: commands may connect and bind (TCP); false denies it.
	Network bool `toml:"network"`
	// Writable are more directories commands may write (absolute, or
	// from ~/).
	Writable []string `toml:"writable"`
	// Fallback is what happens when the sandbox cannot be enforced:
	// "refuse" (commands are refused, the default) or "off" (they run
	// unconfined).
	Fallback string `toml:"fallback"`
}

// SandboxModes and SandboxFallbacks are the values [sandbox] takes.
var (
	SandboxModes     = []string{"workspace-write", "read-only", "off"}
	SandboxFallbacks = []string{"refuse", "off"}
)

// Checkpoints is the [checkpoints] table: what is kept of each turn's
// changes to the session's directory, so it can be undone.
type Checkpoints struct {
	Enabled      bool     `toml:"enabled"`
	MaxFileBytes int64    `toml:"max_file_bytes"`
	Exclude      []string `toml:"exclude"`
	KeepTurns    int      `toml:"keep_turns"`
}

// Budget is the [budget] table: spending limits in USD (0: none).
type Budget struct {
	// MaxCostUSDPerSession bounds what one session may spend in all.
	MaxCostUSDPerSession float64 `toml:"max_cost_usd_per_session"`
	// MaxCostUSDPerDay bounds what the daemon's sessions may spend
	// together in a day (local time).
	MaxCostUSDPerDay float64 `toml:"max_cost_usd_per_day"`
}

// Agent is one [agents.<alias>] table.
type Agent struct {
	Provider     string `toml:"provider"`
	SystemPrompt string `toml:"system_prompt"`
	// Description says when to use the agent: the task tool lists it for
	// the model choosing a sub-agent.
	Description string `toml:"description"`
	// Model overrides the provider's model for this agent.
	Model           string   `toml:"model"`
	Risk            string   `toml:"risk"`
	Tools           []string `toml:"tools"`
	MaxTurnRequests int      `toml:"max_turn_requests"`
	// MaxTokens and Reasoning override the provider's (0, "": its own).
	MaxTokens int    `toml:"max_tokens"`
	Reasoning string `toml:"reasoning"`
}

// MCP holds the [mcp] table: the MCP servers whose tools the agents get.
type MCP struct {
	// TurnWaitMs bounds how long a turn waits, in all, for servers still
	// in their first start (0: 1000); it never waits for one restarting.
	TurnWaitMs int                  `toml:"turn_wait_ms"`
	Servers    map[string]MCPServer `toml:"servers"`
}

// MCPServer is one [mcp.servers.NAME] table: a command (stdio) or a URL
// (streamable HTTP).
type MCPServer struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	Cwd     string            `toml:"cwd"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// Trust lets every tool of the server run without approval;
	// AutoApprove names the tools that may.
	Trust       bool     `toml:"trust"`
	AutoApprove []string `toml:"auto_approve"`
	// StartTimeoutSecs bounds the start (0: 30 s); CallTimeoutSecs a
	// call (0: 300 s).
	StartTimeoutSecs int `toml:"start_timeout_secs"`
	CallTimeoutSecs  int `toml:"call_timeout_secs"`
	// PerSession starts the server once per session, with the session's
	// directory as its root (roots/list), instead of once for all.
	PerSession bool `toml:"per_session"`
	// OAuthClientID (and OAuthClientSecret) is a client registered
	// beforehand with an HTTP server's authorization server, for
	// zeroclaw mcp login; empty: it registers itself (dynamic client
	// registration).
	OAuthClientID     string `toml:"oauth_client_id"`
	OAuthClientSecret string `toml:"oauth_client_secret"`
	// OAuthClientMetadataURL is an https URL of a client ID metadata
	// document describing zeroclaw, used as the client id with an
	// authorization server that takes one (in place of registering).
	OAuthClientMetadataURL string `toml:"oauth_client_metadata_url"`
}

// SharedServers are the MCP servers started once for every session (not
// per_session).
func (m MCP) SharedServers() map[string]MCPServer { return m.servers(false) }

// PerSessionServers are the MCP servers each session starts for itself.
func (m MCP) PerSessionServers() map[string]MCPServer { return m.servers(true) }

func (m MCP) servers(perSession bool) map[string]MCPServer {
	out := map[string]MCPServer{}
	for n, s := range m.Servers {
		if s.PerSession == perSession {
			out[n] = s
		}
	}
	return out
}

// Check says what is wrong with the server's settings, if anything.
func (m MCPServer) Check(name string) error {
	switch {
	case m.Command == "" && m.URL == "":
		return fmt.Errorf("mcp.servers.%s: set command (a stdio server) or url (streamable HTTP)", name)
	case m.Command != "" && m.URL != "":
		return fmt.Errorf("mcp.servers.%s: command and url exclude each other", name)
	case m.URL != "":
		u, err := url.Parse(m.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp.servers.%s.url = %q: want http(s)://host/path", name, m.URL)
		}
	}
	if m.StartTimeoutSecs < 0 || m.CallTimeoutSecs < 0 {
		return fmt.Errorf("mcp.servers.%s: timeouts may not be negative", name)
	}
	if m.URL == "" && (m.OAuthClientID != "" || m.OAuthClientSecret != "") {
		return fmt.Errorf("mcp.servers.%s: oauth_client_id and oauth_client_secret are for a url server", name)
	}
	if m.OAuthClientSecret != "" && m.OAuthClientID == "" {
		return fmt.Errorf("mcp.servers.%s: oauth_client_secret needs oauth_client_id", name)
	}
	if m.OAuthClientMetadataURL != "" {
		// A client ID metadata document is named by an https URL with a
		// path (the authorization server fetches it).
		u, err := url.Parse(m.OAuthClientMetadataURL)
		if m.URL == "" || err != nil || u.Scheme != "https" || u.Host == "" || len(u.Path) < 2 {
			return fmt.Errorf("mcp.servers.%s.oauth_client_metadata_url = %q: want https://host/path of a document, on a url server", name, m.OAuthClientMetadataURL)
		}
	}
	return nil
}

// Gateway holds the [gateway] table (spec 10.1).
type Gateway struct {
	Enabled bool   `toml:"enabled"`
	Listen  string `toml:"listen"`
	// TLSCert and TLSKey (PEM files) turn on HTTPS/WSS; ClientCA (PEM)
	// requires client certificates it signed (mutual TLS).
	TLSCert  string `toml:"tls_cert"`
	TLSKey   string `toml:"tls_key"`
	ClientCA string `toml:"client_ca"`
	// AllowedOrigins are browser origins, besides the gateway's own, whose
	// pages may call it ("https://example.com").
	AllowedOrigins []string `toml:"allowed_origins"`
	// AllowInsecureRemote lets a non-loopback listen address serve
	// without TLS.
	AllowInsecureRemote bool `toml:"allow_insecure_remote"`
	// TokenTTL is how long a credential lives after its pairing;
	// SessionTTL how long a browser's session lives after its last use.
	// A duration: "30d", "12h", "90m".
	TokenTTL   string `toml:"token_ttl"`
	SessionTTL string `toml:"session_ttl"`
	// MetricsListen, when set, serves /metrics on this loopback address
	// without a credential (for a local Prometheus), whether or not the
	// gateway is enabled.
	MetricsListen string `toml:"metrics_listen"`
}

// CheckMetricsListen says what is wrong with metrics_listen, if anything:
// it must be a loopback HOST:PORT (it serves without a credential).
func (g Gateway) CheckMetricsListen() error {
	if g.MetricsListen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(g.MetricsListen)
	if err != nil {
		return fmt.Errorf("gateway.metrics_listen = %q: want HOST:PORT (%v)", g.MetricsListen, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("gateway.metrics_listen = %q: bad port %q", g.MetricsListen, port)
	}
	if !IsLoopback(host) {
		return fmt.Errorf("gateway.metrics_listen = %q: it serves without a credential, so only a loopback address (127.0.0.1, ::1) may serve it; the gateway's /metrics takes a token", g.MetricsListen)
	}
	return nil
}

// Lifetimes returns token_ttl and session_ttl (Check has vouched for
// them; 0 for one that is unset).
func (g Gateway) Lifetimes() (token, session time.Duration) {
	token, _ = ParseTTL(g.TokenTTL)
	session, _ = ParseTTL(g.SessionTTL)
	return token, session
}

// ParseTTL reads a lifetime: a Go duration ("12h", "90m") or a number of
// days ("30d"); "" is 0.
func ParseTTL(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n <= 0 || n > 3650 {
			return 0, fmt.Errorf("%q: want a number of days (1 to 3650) before the d", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a duration such as \"30d\", \"12h\" or \"90m\"", s)
	}
	if d < time.Minute {
		return 0, fmt.Errorf("%q: a lifetime of under a minute would lock every client out", s)
	}
	return d, nil
}

// TLS reports whether the gateway serves TLS.
func (g Gateway) TLS() bool { return g.TLSCert != "" || g.TLSKey != "" }

// Check says what is wrong with the gateway's settings, if anything.
func (g Gateway) Check() error {
	host, port, err := net.SplitHostPort(g.Listen)
	if err != nil {
		return fmt.Errorf("gateway.listen = %q: want HOST:PORT (%v)", g.Listen, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("gateway.listen = %q: bad port %q", g.Listen, port)
	}
	if (g.TLSCert == "") != (g.TLSKey == "") {
		return fmt.Errorf("gateway: tls_cert and tls_key go together (one of them is empty)")
	}
	if g.ClientCA != "" && !g.TLS() {
		return fmt.Errorf("gateway.client_ca needs tls_cert and tls_key: client certificates are a TLS feature")
	}
	if !g.TLS() && !g.AllowInsecureRemote && !IsLoopback(host) {
		return fmt.Errorf("gateway.listen = %q is reachable from other machines, and without TLS every token and prompt would cross the network in clear text: set tls_cert and tls_key, listen on 127.0.0.1, or set allow_insecure_remote = true to accept the risk", g.Listen)
	}
	if _, err := ParseTTL(g.TokenTTL); err != nil {
		return fmt.Errorf("gateway.token_ttl = %w", err)
	}
	if _, err := ParseTTL(g.SessionTTL); err != nil {
		return fmt.Errorf("gateway.session_ttl = %w", err)
	}
	for _, o := range g.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("gateway.allowed_origins: %q is not an origin (want scheme://host[:port])", o)
		}
	}
	return nil
}

// IsLoopback reports whether host (a name or an address, no port) is this
// machine only: localhost names and loopback addresses.
func IsLoopback(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Provider kinds: what a [providers.NAME] speaks (provider.New makes
// each). The one list.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindEcho      = "echo"
)

// Known values. Risk levels are the protocol's (protocol.RiskLevels),
// tool names and shells the tool package's (tool.Builtins, tool.Shells).
var (
	ProviderKinds = []string{KindOpenAI, KindAnthropic, KindEcho}
	Reasoning     = []string{"off", "low", "medium", "high"}
)

// ShellEnvDropped lists the environment variables commands the agent runs
// never see: the well-known provider key variables, every configured
// provider's api_key_env and daemon.shell_env_drop.
func (c *Config) ShellEnvDropped() []string {
	out := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY", "DEEPSEEK_API_KEY"}
	for _, p := range c.Providers {
		if p.APIKeyEnv != "" {
			out = append(out, p.APIKeyEnv)
		}
	}
	return append(out, c.Daemon.ShellEnvDrop...)
}

// Default returns the built-in configuration: one agent "default" on the
// provider the environment offers (ANTHROPIC_API_KEY, OPENAI_API_KEY,
// OLLAMA_HOST, in that order), else the offline echo provider.
func Default(getenv func(string) string) *Config {
	c := &Config{
		Daemon:      Daemon{MaxSessions: 64, PromptQueue: 32, ApprovalTimeoutSecs: 120, MaxFrameBytes: 8 << 20, ContinueInterrupted: true, ContinueAttempts: 2},
		Gateway:     Gateway{Listen: "127.0.0.1:42617", TokenTTL: "30d", SessionTTL: "7d"},
		Checkpoints: Checkpoints{Enabled: true, MaxFileBytes: 10 << 20, Exclude: []string{".git/", "node_modules/"}, KeepTurns: 100},
		Sandbox:     Sandbox{Network: true},
		Subagents:   Subagents{MaxDepth: 1, MaxConcurrent: 4},
		Schedules:   Schedules{Enabled: true, Max: 100},
		Goals:       Goals{DefaultTurns: 50, DefaultMinutes: 120, DefaultTokens: 5_000_000},
		Approvals:   Approvals{ReviewerAllows: "low", ReviewerTimeoutSecs: 30},
	}
	var p Provider
	switch {
	case getenv("ANTHROPIC_API_KEY") != "":
		p = Provider{Kind: KindAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY", Model: "claude-sonnet-4-5"}
	case getenv("OPENAI_API_KEY") != "":
		p = Provider{Kind: KindOpenAI, APIKeyEnv: "OPENAI_API_KEY", Model: "gpt-4o-mini"}
	case getenv("OLLAMA_HOST") != "":
		host := strings.TrimSuffix(getenv("OLLAMA_HOST"), "/")
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		p = Provider{Kind: KindOpenAI, BaseURL: host + "/v1", Model: "qwen2.5-coder:7b"}
	default:
		p = Provider{Kind: KindEcho}
	}
	c.Providers = map[string]Provider{p.Kind: p}
	c.Agents = map[string]Agent{"default": defaultAgent(p.Kind)}
	why := "default: no model configured (offline)"
	if p.APIKeyEnv != "" {
		why = "default: " + p.APIKeyEnv + " is set"
	} else if p.BaseURL != "" {
		why = "default: OLLAMA_HOST is set"
	}
	c.Origins = map[string]string{"providers." + p.Kind: why, "agents.default.provider": why}
	return c
}

func defaultAgent(provider string) Agent {
	return Agent{Provider: provider, Risk: protocol.RiskSupervised, Tools: tool.BuiltinNames(), MaxTurnRequests: 50}
}

// Load reads path, or returns the defaults when it does not exist. A file
// that does not parse, has an unknown key or a bad value is an error that
// names the file, the line where known, and the key.
func Load(path string, getenv func(string) string) (*Config, error) {
	def := Default(getenv)
	text, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c := &Config{Daemon: def.Daemon, Gateway: def.Gateway, Checkpoints: def.Checkpoints, Sandbox: def.Sandbox, Subagents: def.Subagents, Schedules: def.Schedules, Goals: def.Goals, Approvals: def.Approvals, Source: path, Origins: map[string]string{}}
	md, err := decode(path, string(text), c)
	if err != nil {
		return nil, err
	}
	c.noteOrigins(path, string(text), md)
	if err := c.agentsOrDefault(def); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.fillAgents()
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.warnUnsetKeys(getenv)
	return c, nil
}

// decode reads text, the file at path, into c: a parse error names its
// line, and so does the first key c has no place for.
func decode(path, text string, c *Config) (toml.MetaData, error) {
	md, err := toml.Decode(text, c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return md, fmt.Errorf("%s:%d: %s", path, pe.Position.Line, pe.Message)
		}
		return md, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		key := und[0].String()
		return md, fmt.Errorf("%s:%d: unknown key %s", path, lineOf(text, und[0]), key)
	}
	return md, nil
}

// noteOrigins records where in the file each key it sets is set.
func (c *Config) noteOrigins(path, text string, md toml.MetaData) {
	for _, k := range md.Keys() {
		c.Origins[k.String()] = fmt.Sprintf("%s:%d", filepath.Base(path), lineOf(text, k))
	}
	// Each entry of an array of tables ([[permissions]], [[hooks]]) by
	// its header's line: "permissions.0", "hooks.1", ...
	seen := map[string]int{}
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "[[") {
			continue
		}
		name, _, ok := strings.Cut(l[2:], "]]")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		c.Origins[fmt.Sprintf("%s.%d", name, seen[name])] = fmt.Sprintf("%s:%d", filepath.Base(path), i+1)
		seen[name]++
	}
}

// agentsOrDefault gives a file with no agents table its default agent.
// An agents table given in the file replaces the built-in one. With no
// agents, the one provider the file configures is the default agent's
// (a file that names a provider means to use it); with none, the
// environment's (def's); with several, which one is the file's to say.
func (c *Config) agentsOrDefault(def *Config) error {
	if len(c.Agents) == 0 && len(c.Providers) == 1 {
		for name := range c.Providers {
			c.Agents = map[string]Agent{"default": defaultAgent(name)}
			c.Origins["agents.default.provider"] = "default: the file's one provider"
		}
	}
	if len(c.Agents) == 0 && len(c.Providers) > 1 {
		return fmt.Errorf("%d providers and no [agents.default]: add one that names its provider (known: %s)", len(c.Providers), strings.Join(c.ProviderNames(), ", "))
	}
	if len(c.Agents) == 0 {
		c.Agents = def.Agents
		c.Origins["agents.default.provider"] = def.Origins["agents.default.provider"]
		for k, v := range def.Providers {
			if c.Providers == nil {
				c.Providers = map[string]Provider{}
			}
			if _, ok := c.Providers[k]; !ok {
				c.Providers[k] = v
				c.Origins["providers."+k] = def.Origins["providers."+k]
			}
		}
	}
	return nil
}

// fillAgents gives each agent the defaults of what it leaves out: the
// supervised risk level, the built-in tools, 50 model requests a turn.
func (c *Config) fillAgents() {
	for alias, a := range c.Agents {
		if a.Risk == "" {
			a.Risk = protocol.RiskSupervised
		}
		if a.Tools == nil {
			a.Tools = tool.BuiltinNames()
		}
		if a.MaxTurnRequests == 0 {
			a.MaxTurnRequests = 50
		}
		c.Agents[alias] = a
	}
}

// warnUnsetKeys warns of providers whose API key variable is not set:
// a mistake that still runs, said at load rather than at the first turn.
func (c *Config) warnUnsetKeys(getenv func(string) string) {
	for _, name := range c.ProviderNames() {
		if p := c.Providers[name]; p.APIKeyEnv != "" && getenv(p.APIKeyEnv) == "" {
			c.Warnings = append(c.Warnings, fmt.Sprintf("providers.%s.api_key_env = %q: the variable is not set, so requests go without a key", name, p.APIKeyEnv))
		}
	}
}

// lineOf finds the line that sets key (a table header or a key = value
// line inside its table), for messages; 0 when it cannot tell.
func lineOf(text string, key toml.Key) int {
	want := key.String()
	table := ""
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			table = strings.Trim(l, "[] \t")
			if h, _, ok := strings.Cut(table, "#"); ok {
				table = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "]"))
			}
			if table == want {
				return i + 1
			}
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `"`)
		full := k
		if table != "" {
			full = table + "." + k
		}
		if full == want {
			return i + 1
		}
	}
	return 0
}

// validate checks the whole configuration, section by section (the
// first error found is the answer; warnings are collected).
func (c *Config) validate() error {
	for _, check := range []func(*Config) error{
		(*Config).checkDaemon, (*Config).checkProviders, (*Config).checkHooks, (*Config).checkPermissions,
		(*Config).checkSandbox, (*Config).checkCheckpoints, (*Config).checkTools, (*Config).checkSubagents, (*Config).checkSchedules, (*Config).checkGoals, (*Config).checkApprovals, (*Config).checkBudget, (*Config).checkGateway,
		(*Config).checkMCP, (*Config).checkAgents,
	} {
		if err := check(c); err != nil {
			return err
		}
	}
	return nil
}

// minimum is an integer setting and the least it may be.
type minimum struct {
	key    string
	v, min int
}

func checkMinimums(fs ...minimum) error {
	for _, f := range fs {
		if f.v < f.min {
			return fmt.Errorf("%s = %d: must be at least %d", f.key, f.v, f.min)
		}
	}
	return nil
}

// choice is a string setting, the values it may take, and what unset
// means ("" when it may not be unset).
type choice struct {
	key, v string
	values []string
	unset  string
}

func checkChoices(cs ...choice) error {
	for _, c := range cs {
		if (c.v == "" && c.unset != "") || slices.Contains(c.values, c.v) {
			continue
		}
		msg := fmt.Sprintf("%s = %q: must be one of %s", c.key, c.v, strings.Join(c.values, ", "))
		if c.unset != "" {
			msg += " (or unset: " + c.unset + ")"
		}
		return errors.New(msg)
	}
	return nil
}

// amount is a money or price setting: 0 or more, a real number.
type amount struct {
	key        string
	v          *float64
	what, note string
}

func checkAmounts(as ...amount) error {
	for _, a := range as {
		if a.v != nil && (*a.v < 0 || math.IsNaN(*a.v) || math.IsInf(*a.v, 0)) {
			return fmt.Errorf("%s = %v: must be %s, 0 or more%s", a.key, *a.v, a.what, a.note)
		}
	}
	return nil
}

func (c *Config) checkDaemon() error {
	d := c.Daemon
	if err := checkMinimums(
		minimum{"daemon.max_sessions", d.MaxSessions, 1},
		minimum{"daemon.prompt_queue", d.PromptQueue, 1},
		minimum{"daemon.approval_timeout_secs", d.ApprovalTimeoutSecs, 0},
		minimum{"daemon.max_frame_bytes", d.MaxFrameBytes, 1024},
		minimum{"daemon.continue_attempts", d.ContinueAttempts, 0},
	); err != nil {
		return err
	}
	return checkChoices(choice{"daemon.shell", d.Shell, tool.Shells, "bash, cmd on Windows"})
}

func (c *Config) checkProviders() error {
	for _, name := range c.ProviderNames() {
		p := c.Providers[name]
		if err := checkChoices(choice{"providers." + name + ".kind", p.Kind, ProviderKinds, ""}); err != nil {
			return err
		}
		if p.BaseURL != "" {
			u, err := url.Parse(p.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("providers.%s.base_url = %q: want http(s)://host[:port][/path]", name, p.BaseURL)
			}
		}
		if p.ContextWindow != 0 && p.ContextWindow < 1024 {
			return fmt.Errorf("providers.%s.context_window = %d: must be at least 1024 tokens (or 0 for the default)", name, p.ContextWindow)
		}
		if err := checkLimits("providers."+name, p.MaxTokens, p.Reasoning); err != nil {
			return err
		}
		if pr := p.Pricing; pr != nil {
			const what = "a price in USD per million tokens"
			key := "providers." + name + ".pricing."
			if err := checkAmounts(amount{key + "input", &pr.Input, what, ""}, amount{key + "output", &pr.Output, what, ""},
				amount{key + "cache_read", pr.CacheRead, what, ""}, amount{key + "cache_write", pr.CacheWrite, what, ""}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Config) checkHooks() error {
	for i, h := range c.Hooks {
		if err := checkChoices(choice{fmt.Sprintf("hooks[%d].event", i), h.Event, HookEvents, ""}); err != nil {
			return err
		}
		if strings.TrimSpace(h.Command) == "" {
			return fmt.Errorf("hooks[%d].command is required", i)
		}
		if h.TimeoutSecs < 0 {
			return fmt.Errorf("hooks[%d].timeout_secs = %d: must be at least 1 (0: 60 s)", i, h.TimeoutSecs)
		}
		if h.Matcher != "" && h.Matcher != "*" {
			if _, err := regexp.Compile("^(?:" + h.Matcher + ")$"); err != nil {
				return fmt.Errorf("hooks[%d].matcher = %q: %v", i, h.Matcher, err)
			}
		}
	}
	return nil
}

func (c *Config) checkPermissions() error {
	for i, p := range c.Permissions {
		if p.Tool == "" {
			return fmt.Errorf("permissions[%d]: tool is required (a tool's name, or \"*\")", i)
		}
		if _, builtin := tool.Lookup(p.Tool); p.Tool != "*" && !builtin && !strings.Contains(p.Tool, "__") {
			c.Warnings = append(c.Warnings, fmt.Sprintf("permissions[%d].tool = %q is no built-in tool (an MCP server's tools are named server__tool)", i, p.Tool))
		}
		if err := checkChoices(choice{fmt.Sprintf("permissions[%d].decision", i), p.Decision, []string{"allow", "ask", "deny"}, ""}); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) checkSandbox() error {
	sb := c.Sandbox
	if err := checkChoices(choice{"sandbox.mode", sb.Mode, SandboxModes, "workspace-write where it can be enforced"},
		choice{"sandbox.fallback", sb.Fallback, SandboxFallbacks, "refuse"}); err != nil {
		return err
	}
	for i, w := range sb.Writable {
		if rest, ok := strings.CutPrefix(w, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				w = filepath.Join(home, rest)
				c.Sandbox.Writable[i] = w
			}
		}
		if !filepath.IsAbs(w) {
			return fmt.Errorf("sandbox.writable: %q is not an absolute path (or one from ~/)", w)
		}
	}
	return nil
}

func (c *Config) checkCheckpoints() error {
	if cp := c.Checkpoints; cp.MaxFileBytes < 1 || cp.KeepTurns < 1 {
		return fmt.Errorf("checkpoints: max_file_bytes = %d and keep_turns = %d must be at least 1", cp.MaxFileBytes, cp.KeepTurns)
	}
	return nil
}

func (c *Config) checkTools() error {
	t := c.Tools
	if t.MaxProcesses < 0 || t.MaxProcesses > 64 {
		return fmt.Errorf("tools.max_processes = %d: want 1 to 64 (the daemon's limit), or 0 for 8", t.MaxProcesses)
	}
	if t.BackgroundAfterSecs < 0 || t.BackgroundAfterSecs > 3600 {
		return fmt.Errorf("tools.background_after_secs = %d: want 1 to 3600, or 0 for 120", t.BackgroundAfterSecs)
	}
	if t.ProcessLogBytes < 0 || (t.ProcessLogBytes > 0 && t.ProcessLogBytes < 64<<10) || t.ProcessLogBytes > 4<<30 {
		return fmt.Errorf("tools.process_log_bytes = %d: want 65536 to 4294967296, or 0 for 64 MiB", t.ProcessLogBytes)
	}
	if t.OutputRingBytes < 0 || (t.OutputRingBytes > 0 && t.OutputRingBytes < 4096) || t.OutputRingBytes > 64<<20 {
		return fmt.Errorf("tools.output_ring_bytes = %d: want 4096 to 67108864, or 0 for 1 MiB", t.OutputRingBytes)
	}
	return nil
}

func (c *Config) checkApprovals() error {
	a := c.Approvals
	if a.Reviewer != "" {
		if _, ok := c.Agents[a.Reviewer]; !ok {
			return fmt.Errorf("approvals.reviewer = %q: no such agent (known: %s)", a.Reviewer, strings.Join(c.AgentAliases(), ", "))
		}
	}
	if a.ReviewerAllows != "low" && a.ReviewerAllows != "medium" {
		return fmt.Errorf("approvals.reviewer_allows = %q: low or medium", a.ReviewerAllows)
	}
	if a.ReviewerTimeoutSecs < 1 || a.ReviewerTimeoutSecs > 600 {
		return fmt.Errorf("approvals.reviewer_timeout_secs = %d: want 1 to 600", a.ReviewerTimeoutSecs)
	}
	return nil
}

func (c *Config) checkGoals() error {
	if v := c.Goals.DefaultBudgetUSD; v < 0 || v > 1e6 {
		return fmt.Errorf("goals.default_budget_usd = %v: want 0 (none) to 1000000", v)
	}
	if v := c.Goals.DefaultTurns; v < 1 || v > 100000 {
		return fmt.Errorf("goals.default_turns = %d: want 1 to 100000", v)
	}
	if v := c.Goals.DefaultMinutes; v < 1 || v > 525600 {
		return fmt.Errorf("goals.default_minutes = %d: want 1 to 525600 (a year)", v)
	}
	if v := c.Goals.DefaultTokens; v < 1 || v > 1e12 {
		return fmt.Errorf("goals.default_tokens = %d: want 1 to 1000000000000", v)
	}
	return nil
}

func (c *Config) checkSchedules() error {
	if m := c.Schedules.Max; m < 1 || m > 10000 {
		return fmt.Errorf("schedules.max = %d: want 1 to 10000", m)
	}
	return nil
}

func (c *Config) checkSubagents() error {
	s := c.Subagents
	if s.MaxDepth < 0 || s.MaxDepth > 4 {
		return fmt.Errorf("subagents.max_depth = %d: want 0 (no sub-agents) to 4", s.MaxDepth)
	}
	if s.MaxConcurrent < 1 || s.MaxConcurrent > 16 {
		return fmt.Errorf("subagents.max_concurrent = %d: want 1 to 16 (the daemon's limit)", s.MaxConcurrent)
	}
	return nil
}

func (c *Config) checkBudget() error {
	const what, note = "an amount in USD", " (0: no limit)"
	return checkAmounts(amount{"budget.max_cost_usd_per_session", &c.Budget.MaxCostUSDPerSession, what, note},
		amount{"budget.max_cost_usd_per_day", &c.Budget.MaxCostUSDPerDay, what, note})
}

func (c *Config) checkGateway() error {
	if c.Gateway.Enabled {
		if err := c.Gateway.Check(); err != nil {
			return err
		}
	}
	return c.Gateway.CheckMetricsListen()
}

func (c *Config) checkMCP() error {
	for _, name := range sortedKeys(c.MCP.Servers) {
		if err := c.MCP.Servers[name].Check(name); err != nil {
			return err
		}
	}
	if c.MCP.TurnWaitMs < 0 || c.MCP.TurnWaitMs > 60000 {
		return fmt.Errorf("mcp.turn_wait_ms = %d: from 0 (the default, 1000) to 60000", c.MCP.TurnWaitMs)
	}
	return nil
}

func (c *Config) checkAgents() error {
	if _, ok := c.Agents["default"]; !ok {
		return fmt.Errorf("agents: no [agents.default]; the default agent is required")
	}
	for _, alias := range c.AgentAliases() {
		a := c.Agents[alias]
		if _, ok := c.Providers[a.Provider]; !ok {
			return fmt.Errorf("agents.%s.provider = %q: no [providers.%s] (known: %s)", alias, a.Provider, a.Provider, strings.Join(c.ProviderNames(), ", "))
		}
		if err := checkChoices(choice{"agents." + alias + ".risk", a.Risk, protocol.RiskIDs(), ""}); err != nil {
			return err
		}
		for _, t := range a.Tools {
			if _, ok := tool.Lookup(t); !ok && !IsMCPPattern(t) {
				return fmt.Errorf("agents.%s.tools: unknown tool %q (known: %s, or an MCP server's tools as mcp__SERVER__* or mcp__SERVER__TOOL)", alias, t, strings.Join(tool.BuiltinNames(), ", "))
			}
		}
		if err := checkMinimums(minimum{"agents." + alias + ".max_turn_requests", a.MaxTurnRequests, 1}); err != nil {
			return err
		}
		if err := checkLimits("agents."+alias, a.MaxTokens, a.Reasoning); err != nil {
			return err
		}
	}
	return nil
}

// checkLimits checks a table's max_tokens and reasoning.
func checkLimits(table string, maxTokens int, reasoning string) error {
	if maxTokens < 0 {
		return fmt.Errorf("%s.max_tokens = %d: must be at least 1 (or 0 for the provider's default)", table, maxTokens)
	}
	return checkChoices(choice{table + ".reasoning", reasoning, Reasoning, "the provider's default"})
}

// RestartNeeded names the settings that differ between old and new but
// are read only when the daemon starts: the gateway and the frame limit.
func RestartNeeded(old, new *Config) []string {
	var out []string
	if !reflect.DeepEqual(old.Gateway, new.Gateway) {
		out = append(out, "gateway")
	}
	if old.Daemon.MaxFrameBytes != new.Daemon.MaxFrameBytes {
		out = append(out, "daemon.max_frame_bytes")
	}
	return out
}

// ProviderNames returns the configured provider names, sorted.
func (c *Config) ProviderNames() []string { return sortedKeys(c.Providers) }

// AgentAliases returns the configured agent aliases, sorted.
func (c *Config) AgentAliases() []string { return sortedKeys(c.Agents) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
