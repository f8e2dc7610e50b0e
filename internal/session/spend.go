package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// What model calls cost and the [budget] that bounds it: each call's
// usage is added to its session's and to the day's, in memory (where the
// budgets are checked, at no cost per call) and in the store (in one
// commit, queued behind the session's events), so the day's spend and a
// session's survive a restart.

// ledger is the day's spend across the daemon's sessions.
type ledger struct {
	mu  sync.Mutex
	day string // YYYY-MM-DD, local time; "" before the first use
	// from and until bound the day (local midnights): a time between
	// them is still day, told without formatting it (status asks on
	// every call).
	from, until time.Time
	spent       store.Usage
}

// today returns the day and its spend so far, reading it from the store
// when the day is new to this daemon (the first use, or midnight).
func (m *Manager) today() (string, store.Usage) {
	m.spend.mu.Lock()
	defer m.spend.mu.Unlock()
	return m.todayLocked()
}

func (m *Manager) todayLocked() (string, store.Usage) {
	now := m.now()
	if m.spend.day != "" && !now.Before(m.spend.from) && now.Before(m.spend.until) {
		return m.spend.day, m.spend.spent
	}
	day := now.Format(time.DateOnly)
	y, mo, d := now.Date()
	m.spend.from = time.Date(y, mo, d, 0, 0, 0, 0, now.Location())
	m.spend.until = m.spend.from.AddDate(0, 0, 1)
	if day != m.spend.day {
		u, err := m.store.Spent(context.Background(), day)
		if err != nil {
			// Unreadable: counted from zero, and said.
			m.log.Warn("the day's spend could not be read; counting it from zero", "day", day, "err", err)
		}
		m.spend.day, m.spend.spent = day, u
	}
	return m.spend.day, m.spend.spent
}

// Charge implements agent.Host: u is added to the session's and the
// day's spend.
func (s *Session) Charge(u provider.Usage) {
	if u == (provider.Usage{}) {
		return
	}
	su := store.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, CostUSD: u.CostUSD, Priced: u.Priced}
	m := s.m
	s.events.InOrder(func(writable bool) { // fenced is the emitter's
		m.spend.mu.Lock()
		day, _ := m.todayLocked()
		add(&m.spend.spent, su)
		// Queued under the ledger's lock: the store's day row gets the
		// charges in the order the ledger did. A session that cannot
		// write (fenced, or failed until mended) keeps it in memory only.
		if writable {
			// Bookkeeping: a failed spend write is logged, and does not
			// end the session's turn (its events' writes say that).
			m.store.Charge(s.id, day, su, func(err error) {
				if err != nil {
					m.log.Warn("a model call's spend could not be stored", "sessionId", s.id, "err", err)
				}
			})
		}
		m.spend.mu.Unlock()
	})
	s.mu.Lock()
	add(&s.spent, su)
	s.mu.Unlock()
	s.chargeUp(su) // a sub-agent's cost is its ancestors' too
}

func add(to *store.Usage, u store.Usage) {
	to.InputTokens += u.InputTokens
	to.OutputTokens += u.OutputTokens
	to.CacheReadTokens += u.CacheReadTokens
	to.CacheWriteTokens += u.CacheWriteTokens
	to.CostUSD += u.CostUSD
	to.Priced = to.Priced || u.Priced
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
			return fmt.Sprintf("the session's budget is spent: it has cost $%.4f, and [budget] max_cost_usd_per_session = %s in config.toml; raise it, or start a new session", spent, dollars(max))
		}
	}
	if max := b.MaxCostUSDPerDay; max > 0 {
		day, u := s.m.today()
		if u.CostUSD >= max {
			return fmt.Sprintf("today's budget is spent: %s has cost $%.4f, and [budget] max_cost_usd_per_day = %s in config.toml; raise it, or wait for tomorrow (local time)", day, u.CostUSD, dollars(max))
		}
	}
	return ""
}

// dollars writes an amount as config.toml holds it.
func dollars(v float64) string { return fmt.Sprintf("%g", v) }

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
func (m *Manager) Today() protocol.SpendToday {
	day, u := m.today()
	b := m.conf().Config().Budget
	t := protocol.SpendToday{Day: day, MaxCostUSDPerDay: b.MaxCostUSDPerDay, MaxCostUSDPerSession: b.MaxCostUSDPerSession}
	if w := archive.WireUsage(u); w != nil {
		t.Usage = *w
	}
	return t
}
