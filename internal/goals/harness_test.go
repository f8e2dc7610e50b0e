package goals_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// conn is a client's connection as the sessions see it (sessiontest).
type conn = sessiontest.Conn

// goalUntil waits for the session's goal_update whose goal is in state,
// and returns that goal.
func goalUntil(t *testing.T, c *conn, sid, state string) protocol.Goal {
	t.Helper()
	u := c.Until(t, "goal_update "+state, func(u protocol.SessionUpdate) bool {
		g, ok := u.Event.(protocol.GoalUpdateEvent)
		return ok && u.SessionID == sid && g.Goal.State == state
	})
	return u.Event.(protocol.GoalUpdateEvent).Goal
}

// goalWith waits for the session's goal_update whose goal ok accepts.
func goalWith(t *testing.T, c *conn, sid string, ok func(protocol.Goal) bool) protocol.Goal {
	t.Helper()
	return of(t, c, sid, func(e protocol.GoalUpdateEvent) bool { return ok(e.Goal) }).Goal
}

// of waits for the session's next event of type E that ok accepts.
func of[E protocol.EventBody](t *testing.T, c *conn, sid string, ok func(E) bool) E {
	t.Helper()
	return sessiontest.Of(t, c, sid, ok)
}

// goalPrompts are the session's goal turns' prompts the client was sent
// (their user_messages), in order.
func goalPrompts(t *testing.T, c *conn, sid string) []string {
	t.Helper()
	var out []string
	for _, u := range c.All(t) {
		if m, ok := u.Event.(protocol.UserMessageEvent); ok && u.SessionID == sid && strings.HasPrefix(m.Text, "[Goal, turn ") {
			out = append(out, m.Text)
		}
	}
	return out
}

// daemon is one Manager over a store, with the goals joined as the
// daemon joins them.
type daemon struct {
	*sessiontest.Daemon
	gs *goals.Goals
}

// harness is a store in a temporary directory and the daemons started
// on it, one at a time.
type harness struct{ *sessiontest.Harness }

// newHarness opens a store and the configuration: the echo provider as
// the default agent (tune changes it), commands unconfined.
func newHarness(t *testing.T, tune func(*config.Config)) *harness {
	t.Helper()
	return &harness{sessiontest.New(t, tune)}
}

// start starts a daemon's Manager on the store, its goals joined.
func (h *harness) start(t *testing.T) *daemon {
	t.Helper()
	var gs *goals.Goals
	d := h.Start(t, func(m *session.Manager) { gs = goals.New(m, h.Store, nil) })
	return &daemon{d, gs}
}

// client is a connected client of identity id.
var client = sessiontest.Client

// get is session/get's goal.
func (d *daemon) goal(t *testing.T, sid string) *protocol.Goal {
	t.Helper()
	info, err := d.M.Archive().Get(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return info.Goal
}

// paramsField is the field a ParamsError names ("" when err is none).
func paramsField(err error) string {
	var pe *protocol.ParamsError
	if errors.As(err, &pe) {
		return pe.Field
	}
	return ""
}
