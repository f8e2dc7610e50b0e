package daemon

import (
	"math"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A priced call: 100,000 input tokens (40,000 of them read from the
// cache) and 10,000 output tokens, at $3 / $15 / $0.30 per million:
// 60,000×3 + 40,000×0.3 + 10,000×15 = $0.342.
const (
	pricedCall = `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":100000,"completion_tokens":10000,"prompt_tokens_details":{"cached_tokens":40000}}}`
	callCost   = 0.342
)

func pricedServer(t *testing.T, replies int) *fakeOpenAI {
	f := &fakeOpenAI{}
	for i := range replies {
		f.scripts = append(f.scripts, []string{content("answer " + string(rune('a'+i))), pricedCall, `[DONE]`})
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeOpenAI) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func pricedConfig(f *fakeOpenAI, budget string) string {
	return `
[providers.fake]
kind = "openai"
base_url = "` + f.url + `/v1"
model = "house-model"
[providers.fake.pricing]
input = 3
output = 15
cache_read = 0.3
[agents.default]
provider = "fake"
[budget]
` + budget + "\n"
}

func near(v any, want float64) bool {
	f, ok := v.(float64)
	return ok && math.Abs(f-want) < 1e-9
}

func TestSessionBudget(t *testing.T) {
	f := pricedServer(t, 3)
	r := startWith(t, pricedConfig(f, "max_cost_usd_per_session = 0.5"))
	a := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")

	// Under the limit: a plain turn, its usage and cost in the result.
	res := result(t, a.call("session/prompt", prompt(sid, "one")))
	u, _ := res["usage"].(map[string]any)
	if res["stopReason"] != "end_turn" || u["inputTokens"] != 100000.0 || u["outputTokens"] != 10000.0 ||
		u["cacheReadTokens"] != 40000.0 || !near(u["costUsd"], callCost) {
		t.Fatalf("first turn %v", res)
	}
	if cu := a.until("context_usage"); cu["cacheReadTokens"] != 40000.0 || !near(cu["sessionCostUsd"], callCost) {
		t.Errorf("context_usage %v", cu)
	}
	a.until("turn_complete")

	// The turn that crosses it ends after its model call, with budget,
	// its answer kept, and a notice naming the limit and its value.
	res = result(t, a.call("session/prompt", prompt(sid, "two")))
	notice, _ := res["notice"].(string)
	if res["stopReason"] != "budget" || res["content"] != "answer b" ||
		!strings.Contains(notice, "max_cost_usd_per_session = 0.5") || !strings.Contains(notice, "$0.6840") {
		t.Fatalf("crossing turn %v", res)
	}
	if tc := a.until("turn_complete"); tc["stopReason"] != "budget" || tc["notice"] != notice || tc["outcome"] != "completed" {
		t.Errorf("turn_complete %v", tc)
	}

	// Past it, a turn ends at once: the model is not called.
	calls := f.requests()
	res = result(t, a.call("session/prompt", prompt(sid, "three")))
	if res["stopReason"] != "budget" || res["notice"] != notice || f.requests() != calls {
		t.Fatalf("turn past the budget %v after %d model calls (was %d)", res, f.requests(), calls)
	}

	// session/get and session/list sum the session; status the day.
	got := result(t, a.call("session/get", `{"sessionId":`+quote(sid)+`}`))
	su, _ := got["usage"].(map[string]any)
	if su["inputTokens"] != 200000.0 || su["cacheReadTokens"] != 80000.0 || !near(su["costUsd"], 2*callCost) {
		t.Errorf("session/get usage %v", got)
	}
	st := result(t, a.call("status", `{}`))
	today, _ := st["today"].(map[string]any)
	tu, _ := today["usage"].(map[string]any)
	if today["day"] != time.Now().Format(time.DateOnly) || !near(tu["costUsd"], 2*callCost) || today["maxCostUsdPerSession"] != 0.5 {
		t.Errorf("status today %v", today)
	}

	// Another session has its own budget.
	other := newSession(t, a, "")
	f.mu.Lock()
	f.scripts = append(f.scripts, []string{content("fresh"), pricedCall, `[DONE]`})
	f.mu.Unlock()
	if res := result(t, a.call("session/prompt", prompt(other, "hi"))); res["stopReason"] != "end_turn" {
		t.Errorf("a new session under its own budget: %v", res)
	}
}

func TestDayBudgetSurvivesARestart(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 9, 23, 0, 0, 0, time.Local)
	clock := func(o *Options) {
		o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	}
	f := pricedServer(t, 3)
	dirs := testDirs(t)
	conf := pricedConfig(f, "max_cost_usd_per_day = 0.6")
	r := startOn(t, dirs, conf, clock)
	a := connect(t, r.dirs.Endpoint, "")
	if res := result(t, a.call("session/prompt", prompt(newSession(t, a, ""), "one"))); res["stopReason"] != "end_turn" {
		t.Fatalf("first session %v", res)
	}
	// A second session's turn crosses the day's limit: budget, the
	// notice names it.
	res := result(t, a.call("session/prompt", prompt(newSession(t, a, ""), "two")))
	notice, _ := res["notice"].(string)
	if res["stopReason"] != "budget" || !strings.Contains(notice, "max_cost_usd_per_day = 0.6") || !strings.Contains(notice, "2026-03-09") {
		t.Fatalf("crossing the day's budget %v", res)
	}
	a.nc.Close()
	r.stop()
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}

	// The day's spend is on disk: after a restart a new session's turn
	// still ends at once, without a model call.
	r = startOn(t, dirs, conf, clock)
	a = connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, a, "")
	calls := f.requests()
	res = result(t, a.call("session/prompt", prompt(sid, "three")))
	if res["stopReason"] != "budget" || f.requests() != calls || !strings.Contains(res["notice"].(string), "$0.6840") {
		t.Fatalf("after a restart %v (%d model calls, was %d)", res, f.requests(), calls)
	}
	st := result(t, a.call("status", `{}`))
	if today := st["today"].(map[string]any); today["day"] != "2026-03-09" || !near(today["usage"].(map[string]any)["costUsd"], 2*callCost) {
		t.Errorf("status today %v", today)
	}

	// The next day starts from nothing.
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	if res := result(t, a.call("session/prompt", prompt(sid, "four"))); res["stopReason"] != "end_turn" || res["content"] != "answer c" {
		t.Errorf("the next day %v", res)
	}
}
