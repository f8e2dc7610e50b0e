package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// priced gives the echo model a price: $1,000 per million tokens, so a
// turn (a few thousand tokens of input) costs dollars.
func priced(cfg *config.Config) {
	a := cfg.Agents["default"]
	p := cfg.Providers[a.Provider]
	p.Pricing = &config.Pricing{Input: 1000, Output: 1000}
	cfg.Providers[a.Provider] = p
}

// A budget stops turns: the turn that reaches a session's
// max_cost_usd_per_session ends once its model call is answered (stop
// reason budget, the notice naming the limit and the spend), and the
// session's next prompt is not sent to the model (left out of the
// transcript); a new session may still run until the day's spend reaches
// max_cost_usd_per_day, and then no session does. Each result carries
// its cost.
func TestBudgetsStopTurns(t *testing.T) {
	noon := time.Date(2025, 6, 1, 12, 0, 0, 0, time.Local) // one day throughout
	h := newHarnessWith(t, func(cfg *config.Config) {
		priced(cfg)
		cfg.Budget.MaxCostUSDPerSession = 1
	}, func(o *Options) { o.Now = func() time.Time { return noon } })
	cl, _ := h.client(t, "c1")
	h.open(t, cl, "s")
	first := h.prompt(t, cl, "s", "spend")
	if first.StopReason != protocol.StopBudget || first.Content != "echo: spend" || first.Usage == nil || first.Usage.CostUSD == nil || *first.Usage.CostUSD < 1 {
		t.Fatalf("the first turn: %+v %+v", first, first.Usage)
	}
	over := h.prompt(t, cl, "s", "more")
	if over.StopReason != protocol.StopBudget || over.Content != "" || !strings.Contains(over.Notice, "max_cost_usd_per_session = 1 in config.toml") {
		t.Errorf("past the session's budget: %+v", over)
	}
	raw, _ := h.st.Messages(context.Background(), "s")
	for _, b := range raw {
		if strings.Contains(string(b), `"more"`) {
			t.Error("the prompt the model never answered is in the transcript")
		}
	}
	if today := h.m.Today(); today.Day != "2025-06-01" || today.MaxCostUSDPerSession != 1 || today.Usage.CostUSD == nil || *today.Usage.CostUSD < 1 {
		t.Errorf("today: %+v", today)
	}

	// The day's budget: every session stops once the day has spent it.
	cfg := config.Default(func(string) string { return "" })
	priced(cfg)
	cfg.Budget.MaxCostUSDPerDay = 4
	h.m.Reload(cfg)
	h.open(t, cl, "t")
	// The day had spent about $2.6: t's turn runs, and reaches the limit.
	if r := h.prompt(t, cl, "t", "spend"); r.Content != "echo: spend" || r.StopReason != protocol.StopBudget {
		t.Fatalf("a new session under the day's budget: %+v", r)
	}
	for _, id := range []string{"s", "t"} {
		if r := h.prompt(t, cl, id, "more"); r.StopReason != protocol.StopBudget || !strings.Contains(r.Notice, "today's budget is spent") || !strings.Contains(r.Notice, "max_cost_usd_per_day = 4") {
			t.Errorf("%s past the day's budget: %+v", id, r)
		}
	}
}
