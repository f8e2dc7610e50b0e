package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Off, a count is nothing and /metrics says so; on, the exposition is
// Prometheus's text format: help and type, labels in name order and
// escaped, a histogram's buckets cumulative with +Inf, _sum and _count,
// the free labels bounded, and the runtime's and process's series.
func TestExposition(t *testing.T) {
	Turn("end_turn")
	if rec := scrape(); rec.Code != 404 {
		t.Fatalf("/metrics before Enable: %d %s", rec.Code, rec.Body)
	}
	if c := Counted("socket", nil); c != nil {
		t.Fatalf("a connection is wrapped while the metrics are off")
	}
	Enable()
	Turn("end_turn")
	Turn("end_turn")
	ProviderCall("echo", `we"ird\model`, "ok", 70*time.Millisecond, 10, 5, 0, false)
	ProviderCall("echo", `we"ird\model`, "ok", 30*time.Second, 0, 0, 0, false)
	for i := range maxValues + 5 {
		ToolCall("tool"+strings.Repeat("x", i), "auto")
	}
	done := Connected("socket")
	Connected("gateway")
	done()
	done()
	CountSessions(func() (int, int, int) { return 2, 1, 7 })
	rec := scrape()
	body := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("scrape: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{
		"# HELP zeroclaw_turns_total Turns ended, by stop reason.\n# TYPE zeroclaw_turns_total counter\n" +
			`zeroclaw_turns_total{stop_reason="end_turn"} 2` + "\n",
		`zeroclaw_provider_requests_total{model="we\"ird\\model",outcome="ok",provider="echo"} 2`,
		`zeroclaw_provider_request_seconds_bucket{model="we\"ird\\model",provider="echo",le="0.05"} 0`,
		`zeroclaw_provider_request_seconds_bucket{model="we\"ird\\model",provider="echo",le="0.1"} 1`,
		`zeroclaw_provider_request_seconds_bucket{model="we\"ird\\model",provider="echo",le="25.6"} 1`,
		`zeroclaw_provider_request_seconds_bucket{model="we\"ird\\model",provider="echo",le="51.2"} 2`,
		`zeroclaw_provider_request_seconds_bucket{model="we\"ird\\model",provider="echo",le="+Inf"} 2`,
		`zeroclaw_provider_request_seconds_sum{model="we\"ird\\model",provider="echo"} 30.07`,
		`zeroclaw_provider_request_seconds_count{model="we\"ird\\model",provider="echo"} 2`,
		`zeroclaw_provider_tokens_total{direction="input",model="we\"ird\\model",provider="echo"} 10`,
		`zeroclaw_tool_calls_total{decision="auto",tool="other"} 5`,
		`zeroclaw_connections{transport="socket"} 0`,
		`zeroclaw_connections{transport="gateway"} 1`,
		`zeroclaw_sessions{state="stored"} 7`,
		"# TYPE go_goroutines gauge\ngo_goroutines ",
		"go_memstats_heap_alloc_bytes ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the exposition lacks %q:\n%s", want, body)
		}
	}
	// A family with no series yet is left out.
	if strings.Contains(body, "zeroclaw_mcp_calls_total") {
		t.Errorf("an empty family is written")
	}
	if strings.Count(body, `zeroclaw_tool_calls_total{`) != maxValues+1 {
		t.Errorf("the tool label is not bounded at %d values and other", maxValues)
	}
}

func scrape() *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec
}
