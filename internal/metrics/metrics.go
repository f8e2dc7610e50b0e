// Package metrics counts what the daemon does, for Prometheus
// (github.com/prometheus/client_golang): turns by how they ended, model
// calls by provider and model (their latency, errors and cost), tool and
// MCP calls, connections, sessions, events sent and store commits. The
// labels are bounded: no session ids, and at most maxValues values of a
// label (model names, tool names) before the rest count as "other".
package metrics

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxValues bounds how many values a free label (a model, a tool, an MCP
// server) takes: a daemon asked for 10,000 model names does not grow
// 10,000 series.
const maxValues = 64

var (
	reg = prometheus.NewRegistry()

	turns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_turns_total",
		Help: "Turns ended, by stop reason."}, []string{"stop_reason"})
	providerRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_provider_requests_total",
		Help: "Model calls, by provider, model and outcome (ok, error, cancelled)."}, []string{"provider", "model", "outcome"})
	providerSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "zeroclaw_provider_request_seconds",
		Help: "How long a model call took, to its last byte.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, []string{"provider", "model"})
	providerTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_provider_tokens_total",
		Help: "Tokens of model calls, by provider, model and direction (input, output)."}, []string{"provider", "model", "direction"})
	cost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_cost_usd_total",
		Help: "What model calls cost, in USD, where the price is known."}, []string{"provider", "model"})
	toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_tool_calls_total",
		Help: "Tool calls, by tool and decision (auto, allowed, rejected, refused, unknown, cancelled)."}, []string{"tool", "decision"})
	approvalReviews = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_approval_reviews_total",
		Help: "Approval requests the reviewer answered, by what was done (allow, deny, ask)."}, []string{"decision"})
	scheduleRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_schedule_runs_total",
		Help: "Schedules' runs ended or skipped, by outcome (completed, failed, skipped)."}, []string{"outcome"})
	mcpCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_mcp_calls_total",
		Help: "Calls to MCP servers' tools, by server and outcome (ok, error, timeout, cancelled, not_ready)."}, []string{"server", "outcome"})
	connections = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zeroclaw_connections",
		Help: "Client connections open, by transport (socket, gateway)."}, []string{"transport"})
	bytesSent = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_bytes_sent_total",
		Help: "Bytes written to clients, by transport (socket, gateway)."}, []string{"transport"})
	bytesReceived = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_bytes_received_total",
		Help: "Bytes read from clients, by transport (socket, gateway)."}, []string{"transport"})
	eventsSent = prometheus.NewCounter(prometheus.CounterOpts{Name: "zeroclaw_events_sent_total",
		Help: "Session events written to clients."})
	storeCommit = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zeroclaw_store_commit_seconds",
		Help: "How long a store commit (one batch of writes) took.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	processes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zeroclaw_background_processes_total",
		Help: "Background processes, by what happened to them (started; exited, killed, lost: how they ended)."}, []string{"event"})
	processesRunning = prometheus.NewGauge(prometheus.GaugeOpts{Name: "zeroclaw_background_processes_running",
		Help: "Background processes running now, all sessions together."})
	sessionsDesc = prometheus.NewDesc("zeroclaw_sessions", "Sessions, by state (live: loaded; running: a turn runs; stored: all on disk).", []string{"state"}, nil)

	bounds sync.Map // label name → *bound
)

func init() {
	reg.MustRegister(turns, providerRequests, providerSeconds, providerTokens, cost, toolCalls, scheduleRuns, approvalReviews, mcpCalls, connections, bytesSent, bytesReceived, eventsSent, storeCommit,
		processes, processesRunning, sessions{}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Handler serves the metrics in Prometheus's text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
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
func Turn(stopReason string) { turns.WithLabelValues(value("stop_reason", stopReason)).Inc() }

// ProviderCall counts a model call: its outcome (ok, error, cancelled),
// how long it took, its tokens and its cost (priced: the price is known).
func ProviderCall(provider, model, outcome string, took time.Duration, input, output int64, usd float64, priced bool) {
	p, m := value("provider", provider), value("model", model)
	providerRequests.WithLabelValues(p, m, outcome).Inc()
	providerSeconds.WithLabelValues(p, m).Observe(took.Seconds())
	if input > 0 {
		providerTokens.WithLabelValues(p, m, "input").Add(float64(input))
	}
	if output > 0 {
		providerTokens.WithLabelValues(p, m, "output").Add(float64(output))
	}
	if priced && usd > 0 {
		cost.WithLabelValues(p, m).Add(usd)
	}
}

// ToolCall counts a tool call and what was decided about it.
func ToolCall(tool, decision string) { toolCalls.WithLabelValues(value("tool", tool), decision).Inc() }

// ApprovalReview counts a review by what was done (allow, deny, ask).
func ApprovalReview(decision string) { approvalReviews.WithLabelValues(decision).Inc() }

// ScheduleRun counts a schedule's run by outcome (completed, failed,
// skipped; started is not counted).
func ScheduleRun(outcome string) {
	if outcome != "started" {
		scheduleRuns.WithLabelValues(outcome).Inc()
	}
}

// MCPCall counts a call to an MCP server's tool.
func MCPCall(server, outcome string) {
	mcpCalls.WithLabelValues(value("server", server), outcome).Inc()
}

// Connected counts a connection open on transport until the func it
// returns is called.
func Connected(transport string) (closed func()) {
	g := connections.WithLabelValues(transport)
	g.Inc()
	var once sync.Once
	return func() { once.Do(g.Dec) }
}

// Bytes counts the bytes of one transport's connections.
type Bytes struct{ sent, received prometheus.Counter }

// BytesOf is the byte counters of transport (socket, gateway).
func BytesOf(transport string) Bytes {
	return Bytes{sent: bytesSent.WithLabelValues(transport), received: bytesReceived.WithLabelValues(transport)}
}

// Sent counts n bytes written.
func (b Bytes) Sent(n int) {
	if n > 0 {
		b.sent.Add(float64(n))
	}
}

// Received counts n bytes read.
func (b Bytes) Received(n int) {
	if n > 0 {
		b.received.Add(float64(n))
	}
}

// Counted is c with what is read and written on it counted for
// transport.
func Counted(transport string, c net.Conn) net.Conn {
	return &countedConn{Conn: c, b: BytesOf(transport)}
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
	processes.WithLabelValues("started").Inc()
	processesRunning.Inc()
}

// ProcessEnded counts one that ended: exited, killed, or lost (with a
// daemon before this one: not running here).
func ProcessEnded(how string) {
	switch how {
	case "exited", "killed":
		processesRunning.Dec()
	case "lost":
	default:
		return
	}
	processes.WithLabelValues(how).Inc()
}

// EventsSent counts events written to a client.
func EventsSent(n int) { eventsSent.Add(float64(n)) }

// StoreCommit observes a store commit's duration.
func StoreCommit(took time.Duration) { storeCommit.Observe(took.Seconds()) }

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

// sessions collects zeroclaw_sessions at scrape time.
type sessions struct{}

func (sessions) Describe(ch chan<- *prometheus.Desc) { ch <- sessionsDesc }

func (sessions) Collect(ch chan<- prometheus.Metric) {
	sessionsFn.mu.Lock()
	f := sessionsFn.f
	sessionsFn.mu.Unlock()
	if f == nil {
		return
	}
	live, running, stored := f()
	ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(live), "live")
	ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(running), "running")
	ch <- prometheus.MustNewConstMetric(sessionsDesc, prometheus.GaugeValue, float64(stored), "stored")
}
