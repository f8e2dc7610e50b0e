// Package spend is what the daemon's model calls used and cost today,
// against the daily limits ([budget] max_cost_usd_per_day): the day's
// usage across all the daemon's sessions, kept in memory (where the
// budget is checked, at no cost per call) and in the store (each
// charge queued in the order the ledger counted it), so that it
// survives a restart. The day is the configured clock's: at its
// midnight the ledger rolls over, reading the new day's spend from the
// store. It is also what status's today says.
package spend

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Store is where the spend is kept (*store.Store): a day's, read, and a
// charge queued to a session's and its day's in one commit.
type Store interface {
	Spent(ctx context.Context, day string) (store.Usage, error)
	Charge(sessionID, day string, u store.Usage, after func(error))
}

// Ledger is the day's spend across the daemon's sessions.
type Ledger struct {
	st  Store
	now func() time.Time
	log *slog.Logger

	mu  sync.Mutex
	day string // YYYY-MM-DD, in now's location; "" before the first use
	// from and until bound the day (midnights): a time between them is
	// still day, told without formatting it (status asks on every
	// call).
	from, until time.Time
	spent       store.Usage
}

// New returns the ledger of the days of now (nil: time.Now), kept in st;
// log says why a day's spend could not be read or a charge stored (nil:
// nowhere).
func New(st Store, now func() time.Time, log *slog.Logger) *Ledger {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Ledger{st: st, now: now, log: log}
}

// today returns the day and its spend so far, reading it from the store
// when the day is new to this daemon (the first use, or midnight).
func (l *Ledger) today() (string, store.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.todayLocked()
}

func (l *Ledger) todayLocked() (string, store.Usage) {
	now := l.now()
	if l.day != "" && !now.Before(l.from) && now.Before(l.until) {
		return l.day, l.spent
	}
	day := now.Format(time.DateOnly)
	y, mo, d := now.Date()
	l.from = time.Date(y, mo, d, 0, 0, 0, 0, now.Location())
	l.until = l.from.AddDate(0, 0, 1)
	if day != l.day {
		u, err := l.st.Spent(context.Background(), day)
		if err != nil {
			// Unreadable: counted from zero, and said.
			l.log.Warn("the day's spend could not be read; counting it from zero", "day", day, "err", err)
		}
		l.day, l.spent = day, u
	}
	return l.day, l.spent
}

// Charge adds u, what a model call of session sessionID used, to the
// day's spend; when write, it is queued to the store too (the session's
// row and the day's, in one commit). The write is queued under the
// ledger's lock, so the store's day row gets the charges in the order
// the ledger counted them; one that cannot be written (the session is
// fenced, or failed until mended) is kept in memory only. A failed write
// is logged: it is bookkeeping, and does not end the session's turn
// (its events' writes say that).
func (l *Ledger) Charge(sessionID string, u store.Usage, write bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	day, _ := l.todayLocked()
	Add(&l.spent, u)
	if write {
		l.st.Charge(sessionID, day, u, func(err error) {
			if err != nil {
				l.log.Warn("a model call's spend could not be stored", "sessionId", sessionID, "err", err)
			}
		})
	}
}

// Over is the day's limit reached, named with its value and what was
// spent; "" when b sets no daily limit or the day is under it.
func (l *Ledger) Over(b config.Budget) string {
	max := b.MaxCostUSDPerDay
	if max <= 0 {
		return ""
	}
	day, u := l.today()
	if u.CostUSD >= max {
		return fmt.Sprintf("today's budget is spent: %s has cost $%.4f, and [budget] max_cost_usd_per_day = %s in config.toml; raise it, or wait for tomorrow (local time)", day, u.CostUSD, Dollars(max))
	}
	return ""
}

// Today is status's today: the day's spend and b's limits.
func (l *Ledger) Today(b config.Budget) protocol.SpendToday {
	day, u := l.today()
	t := protocol.SpendToday{Day: day, MaxCostUSDPerDay: b.MaxCostUSDPerDay, MaxCostUSDPerSession: b.MaxCostUSDPerSession}
	if w := archive.WireUsage(u); w != nil {
		t.Usage = *w
	}
	return t
}

// Add adds u to to: tokens summed, and priced when either is.
func Add(to *store.Usage, u store.Usage) {
	to.InputTokens += u.InputTokens
	to.OutputTokens += u.OutputTokens
	to.CacheReadTokens += u.CacheReadTokens
	to.CacheWriteTokens += u.CacheWriteTokens
	to.CostUSD += u.CostUSD
	to.Priced = to.Priced || u.Priced
}

// Dollars writes an amount as config.toml holds it.
func Dollars(v float64) string { return fmt.Sprintf("%g", v) }
