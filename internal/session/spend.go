package session

import (
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/spend"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// What model calls cost and the [budget] that bounds it: each call's
// usage is added to its session's and to the day's (internal/spend, the
// Manager's ledger), in memory (where the budgets are checked, at no
// cost per call) and in the store (in one commit, queued behind the
// session's events), so the day's spend and a session's survive a
// restart.

// Charge implements agent.Host: u is added to the session's and the
// day's spend.
func (s *Session) Charge(u provider.Usage) {
	if u == (provider.Usage{}) {
		return
	}
	su := store.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, CostUSD: u.CostUSD, Priced: u.Priced}
	s.events.InOrder(func(writable bool) { // fenced is the emitter's
		s.m.spend.Charge(s.id, su, writable)
	})
	s.mu.Lock()
	spend.Add(&s.spent, su)
	s.mu.Unlock()
	s.chargeUp(su) // a sub-agent's cost is its ancestors' too
}

// Budget implements agent.Host: the limit reached, if any, named with
// its value and what was spent.
func (s *Session) Budget() string {
	b := s.m.conf().Config().Budget
	if max := b.MaxCostUSDPerSession; max > 0 {
		// A sub-agent's session shares its top ancestor's budget: what
		// the whole tree spent.
		spent := s.rootSpent()
		if spent >= max {
			return fmt.Sprintf("the session's budget is spent: it has cost $%.4f, and [budget] max_cost_usd_per_session = %s in config.toml; raise it, or start a new session", spent, spend.Dollars(max))
		}
	}
	return s.m.spend.Over(b)
}

// spentCost is the session's cost so far, nil when no price is known.
func (s *Session) spentCost() *float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.spent.Priced {
		return nil
	}
	c := s.spent.CostUSD
	return &c
}

// Today is status's today: the day's spend and the limits.
func (m *Manager) Today() protocol.SpendToday { return m.spend.Today(m.conf().Config().Budget) }
