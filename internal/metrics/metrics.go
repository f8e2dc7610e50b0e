// Package metrics counts what the daemon does, for Prometheus: turns by
// how they ended, model calls by provider and model (their latency,
// errors and cost), tool and MCP calls, connections, sessions, events
// sent and store commits. The labels are bounded: no session ids, and at
// most maxValues values of a label (model names, tool names) before the
// rest count as "other".
//
// Nothing is counted, and nothing is allocated, until Enable: a daemon
// enables its metrics at start when something serves them (the gateway,
// metrics_listen), and no other process (the ACP bridge, the CLI's
// commands) ever does. The text format is written here (expose.go):
// counters, gauges and fixed-bucket histograms are all this package
// needs, and Prometheus's client library brought eight modules, protobuf
// and its package initialisation to every process of the binary.
package metrics

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// maxValues bounds how many values a free label (a model, a tool, an MCP
// server) takes: a daemon asked for 10,000 model names does not grow
// 10,000 series.
const maxValues = 64

// set is every family the daemon counts, built by Enable.
type set struct {
	turns, providerRequests, providerSeconds, providerTokens, cost, toolCalls, approvalReviews,
	scheduleRuns, mcpCalls, connections, bytesSent, bytesReceived, eventsSent, storeCommit,
	processes, processesRunning *family
	all     []*family // in the order a scrape writes them
	started time.Time // when counting began: the daemon's start
}

var (
	on    atomic.Bool
	built = sync.OnceValue(build)

	bounds sync.Map // label name → *bound
)

func build() *set {
	s := &set{
		turns: counter("zeroclaw_turns_total", "Turns ended, by stop reason.", "stop_reason"),
		providerRequests: counter("zeroclaw_provider_requests_total",
			"Model calls, by provider, model and outcome (ok, error, cancelled).", "provider", "model", "outcome"),
		providerSeconds: histogram("zeroclaw_provider_request_seconds", "How long a model call took, to its last byte.",
			exponential(0.05, 2, 12), "provider", "model"),
		providerTokens: counter("zeroclaw_provider_tokens_total",
			"Tokens of model calls, by provider, model and direction (input, output).", "provider", "model", "direction"),
		cost: counter("zeroclaw_cost_usd_total", "What model calls cost, in USD, where the price is known.", "provider", "model"),
		toolCalls: counter("zeroclaw_tool_calls_total",
			"Tool calls, by tool and decision (auto, allowed, rejected, refused, unknown, cancelled).", "tool", "decision"),
		approvalReviews: counter("zeroclaw_approval_reviews_total",
			"Approval requests the reviewer answered, by what was done (allow, deny, ask).", "decision"),
		scheduleRuns: counter("zeroclaw_schedule_runs_total",
			"Schedules' runs ended or skipped, by outcome (completed, failed, skipped).", "outcome"),
		mcpCalls: counter("zeroclaw_mcp_calls_total",
			"Calls to MCP servers' tools, by server and outcome (ok, error, timeout, cancelled, not_ready).", "server", "outcome"),
		connections:   gauge("zeroclaw_connections", "Client connections open, by transport (socket, gateway).", "transport"),
		bytesSent:     counter("zeroclaw_bytes_sent_total", "Bytes written to clients, by transport (socket, gateway).", "transport"),
		bytesReceived: counter("zeroclaw_bytes_received_total", "Bytes read from clients, by transport (socket, gateway).", "transport"),
		eventsSent:    counter("zeroclaw_events_sent_total", "Session events written to clients."),
		storeCommit: histogram("zeroclaw_store_commit_seconds", "How long a store commit (one batch of writes) took.",
			exponential(0.0001, 2, 16)),
		processes: counter("zeroclaw_background_processes_total",
			"Background processes, by what happened to them (started; exited, killed, lost: how they ended).", "event"),
		processesRunning: gauge("zeroclaw_background_processes_running", "Background processes running now, all sessions together."),
	}
	s.all = []*family{s.turns, s.providerRequests, s.providerSeconds, s.providerTokens, s.cost, s.toolCalls, s.approvalReviews,
		s.scheduleRuns, s.mcpCalls, s.connections, s.bytesSent, s.bytesReceived, s.eventsSent, s.storeCommit,
		s.processes, s.processesRunning}
	s.started = time.Now()
	return s
}

// Enable starts the counting (once the daemon knows its metrics are
// served); until then every count is a no-op.
func Enable() {
	built()
	on.Store(true)
}

// m is the set while counting is on, else nil.
func m() *set {
	if !on.Load() {
		return nil
	}
	return built()
}

// Handler serves the metrics in Prometheus's text format (404 while they
// are not enabled).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := m()
		if s == nil {
			http.Error(w, "metrics are not enabled in this process", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(s.expose())
	})
}

// bound keeps the values a label has taken.
type bound struct {
	mu   sync.Mutex
	seen map[string]bool
}

// value is v, or "other" once the label has taken maxValues others.
func value(label, v string) string {
	if v == "" {
		return "none"
	}
	b, _ := bounds.LoadOrStore(label, &bound{seen: map[string]bool{}})
	bd := b.(*bound)
	bd.mu.Lock()
	defer bd.mu.Unlock()
	if bd.seen[v] {
		return v
	}
	if len(bd.seen) >= maxValues {
		return "other"
	}
	bd.seen[v] = true
	return v
}

// Turn counts a turn that ended.
func Turn(stopReason string) {
	if s := m(); s != nil {
		s.turns.with(value("stop_reason", stopReason)).add(1)
	}
}

// ProviderCall counts a model call: its outcome (ok, error, cancelled),
// how long it took, its tokens and its cost (priced: the price is known).
func ProviderCall(provider, model, outcome string, took time.Duration, input, output int64, usd float64, priced bool) {
	s := m()
	if s == nil {
		return
	}
	p, md := value("provider", provider), value("model", model)
	s.providerRequests.with(p, md, outcome).add(1)
	s.providerSeconds.with(p, md).observe(took.Seconds())
	if input > 0 {
		s.providerTokens.with(p, md, "input").add(float64(input))
	}
	if output > 0 {
		s.providerTokens.with(p, md, "output").add(float64(output))
	}
	if priced && usd > 0 {
		s.cost.with(p, md).add(usd)
	}
}

// ToolCall counts a tool call and what was decided about it.
func ToolCall(tool, decision string) {
	if s := m(); s != nil {
		s.toolCalls.with(value("tool", tool), decision).add(1)
	}
}

// ApprovalReview counts a review by what was done (allow, deny, ask).
func ApprovalReview(decision string) {
	if s := m(); s != nil {
		s.approvalReviews.with(decision).add(1)
	}
}

// ScheduleRun counts a schedule's run by outcome (completed, failed,
// skipped; started is not counted).
func ScheduleRun(outcome string) {
	if s := m(); s != nil && outcome != "started" {
		s.scheduleRuns.with(outcome).add(1)
	}
}

// MCPCall counts a call to an MCP server's tool.
func MCPCall(server, outcome string) {
	if s := m(); s != nil {
		s.mcpCalls.with(value("server", server), outcome).add(1)
	}
}

// Connected counts a connection open on transport until the func it
// returns is called.
func Connected(transport string) (closed func()) {
	s := m()
	if s == nil {
		return func() {}
	}
	g := s.connections.with(transport)
	g.add(1)
	var once sync.Once
	return func() { once.Do(func() { g.add(-1) }) }
}

// Bytes counts the bytes of one transport's connections (nothing while
// the metrics are off).
type Bytes struct{ sent, received *series }

// BytesOf is the byte counters of transport (socket, gateway).
func BytesOf(transport string) Bytes {
	s := m()
	if s == nil {
		return Bytes{}
	}
	return Bytes{sent: s.bytesSent.with(transport), received: s.bytesReceived.with(transport)}
}

// Sent counts n bytes written.
func (b Bytes) Sent(n int) {
	if n > 0 && b.sent != nil {
		b.sent.add(float64(n))
	}
}

// Received counts n bytes read.
func (b Bytes) Received(n int) {
	if n > 0 && b.received != nil {
		b.received.add(float64(n))
	}
}

// Counted is c with what is read and written on it counted for
// transport; c itself while the metrics are off.
func Counted(transport string, c net.Conn) net.Conn {
	b := BytesOf(transport)
	if b.sent == nil {
		return c
	}
	return &countedConn{Conn: c, b: b}
}

type countedConn struct {
	net.Conn
	b Bytes
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.b.Received(n)
	return n, err
}

func (c *countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.b.Sent(n)
	return n, err
}

// ProcessStarted counts a background process that started.
func ProcessStarted() {
	if s := m(); s != nil {
		s.processes.with("started").add(1)
		s.processesRunning.with().add(1)
	}
}

// ProcessEnded counts one that ended: exited, killed, or lost (with a
// daemon before this one: not running here).
func ProcessEnded(how string) {
	s := m()
	if s == nil {
		return
	}
	switch how {
	case "exited", "killed":
		s.processesRunning.with().add(-1)
	case "lost":
	default:
		return
	}
	s.processes.with(how).add(1)
}

// EventsSent counts events written to a client (one call per batch).
func EventsSent(n int) {
	if s := m(); s != nil {
		s.eventsSent.with().add(float64(n))
	}
}

// StoreCommit observes a store commit's duration.
func StoreCommit(took time.Duration) {
	if s := m(); s != nil {
		s.storeCommit.with().observe(took.Seconds())
	}
}

// SessionCounts says how many sessions are live, running and stored (the
// daemon's; read at each scrape).
type SessionCounts func() (live, running, stored int)

var sessionsFn struct {
	mu sync.Mutex
	f  SessionCounts
}

// CountSessions sets what zeroclaw_sessions reads (the last daemon's).
func CountSessions(f SessionCounts) {
	sessionsFn.mu.Lock()
	sessionsFn.f = f
	sessionsFn.mu.Unlock()
}

func sessionCounts() SessionCounts {
	sessionsFn.mu.Lock()
	defer sessionsFn.mu.Unlock()
	return sessionsFn.f
}
