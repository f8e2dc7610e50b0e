// Package continuation goes on, at a daemon's start, with the work a
// dead daemon left: for each session with open inputs, its cut turn
// continued under the same id (another attempt, what the model had
// streamed kept as said, the calls that waited for an approval asked
// again) and then the prompts queued behind it, in order, each once. A
// sub-agent's cut turn goes on with its parent's: the child is its
// parent's again, and a parent's task call that waited for it waits
// again. With [daemon] continue_interrupted off nothing goes on here:
// each session's open inputs end when it is next loaded.
//
// It drives sessions through the session manager's public face (Load,
// OpenInputs, Reopen, Continuing) and reads what the cut attempts left
// from the store.
package continuation

import (
	"context"
	"log/slog"

	"github.com/zeroclaw/zeroclaw/internal/cut"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Run goes on with every session's open inputs (see the package doc).
// It returns once each is queued again; the turns run on.
func Run(ctx context.Context, m *session.Manager, st *store.Store, log *slog.Logger) {
	if !m.Config().Daemon.ContinueInterrupted {
		return // each session's are ended when it is next loaded (resume)
	}
	ids, err := st.OpenInputSessions(ctx)
	if err != nil {
		log.Error("the inputs a dead daemon left could not be read", "err", err)
		return
	}
	loaded := map[string]*session.Session{}
	tried := map[string]bool{}
	revive := func(id string) *session.Session {
		if tried[id] {
			return loaded[id]
		}
		tried[id] = true
		s, err := m.Load(ctx, id)
		if err != nil {
			log.Error("a session with interrupted inputs could not be loaded", "sessionId", id, "err", err)
			return nil
		}
		loaded[id] = s
		return s
	}
	var order []*session.Session
	opens := map[*session.Session][]session.Open{}
	for _, id := range ids {
		s := revive(id)
		if s == nil {
			continue
		}
		open, err := s.OpenInputs(ctx)
		if err != nil {
			log.Error("a session's interrupted inputs could not be read", "sessionId", id, "err", err)
			continue
		}
		for _, o := range open {
			if o.Cut != nil {
				// Read before the transcript's repair (when its turn
				// starts), which leaves the asked calls open.
				if err := ReadCut(ctx, st, id, o.Cut); err != nil {
					log.Warn("what a cut turn left could not be read", "sessionId", id, "turnId", o.Cut.TurnID, "err", err)
				}
			}
		}
		order = append(order, s)
		opens[s] = open
	}
	// Children are their parents' again before any turn starts.
	for _, s := range order {
		open := opens[s]
		lin := s.Lineage()
		if lin.ParentSessionID == "" || len(open) == 0 || open[0].Cut == nil {
			continue
		}
		parent := revive(lin.ParentSessionID)
		if parent == nil {
			continue
		}
		// The parent's cut turn still holds the call that started the
		// child: it waits for it again.
		var waited bool
		if po := opens[parent]; len(po) > 0 && po[0].Cut != nil && po[0].Cut.Calls[lin.ParentToolCallID] != "" {
			waited = true
			if po[0].Cut.Asked == nil {
				po[0].Cut.Asked = map[string]bool{}
			}
			po[0].Cut.Asked[lin.ParentToolCallID] = true
		}
		m.Continuing(parent, s, open[0].Pending, !waited)
	}
	for _, s := range order {
		s.Reopen(opens[s])
	}
}

// ReadCut reads the cut attempt's events (from c.Since on, internal/cut):
// the reply it was streaming (c.Partial), its tool calls that started
// (c.Started) and those of them that did not end (c.Calls), and those
// that waited for an approval no one had given (c.Asked). A read that
// fails leaves what was read before it, and c.Started nil (which calls
// started is not known).
func ReadCut(ctx context.Context, st *store.Store, sessionID string, c *session.Cut) error {
	l, err := cut.Read(ctx, st, sessionID, c.TurnID, c.Since)
	c.Partial, c.Calls, c.Asked, c.Started = l.Partial, l.Open(), l.Asked, nil
	if err == nil && c.Since > 0 {
		c.Started = l.Started()
	}
	return err
}
