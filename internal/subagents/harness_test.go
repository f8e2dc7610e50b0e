package subagents_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
	"github.com/zeroclaw/zeroclaw/internal/subagents"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// conn is a client's connection as the sessions see it (sessiontest).
type conn = sessiontest.Conn

// of waits for the session's next event of type E that ok accepts.
func of[E protocol.EventBody](t *testing.T, c *conn, sid string, ok func(E) bool) E {
	t.Helper()
	return sessiontest.Of(t, c, sid, ok)
}

// daemon is one Manager over a store, with the sub-agents joined as
// the daemon joins them.
type daemon struct {
	*sessiontest.Daemon
	sa *subagents.Subagents
}

// harness is a store in a temporary directory and the daemons started
// on it, one at a time.
type harness struct{ *sessiontest.Harness }

// newHarness opens a store and the configuration: the echo provider as
// the default agent, in the full mode (tune changes it), commands
// unconfined.
func newHarness(t *testing.T, tune func(*config.Config)) *harness {
	t.Helper()
	return &harness{sessiontest.New(t, func(cfg *config.Config) {
		a := cfg.Agents["default"]
		a.Risk = protocol.RiskFull
		cfg.Agents["default"] = a
		if tune != nil {
			tune(cfg)
		}
	})}
}

// start starts a daemon's Manager on the store, its sub-agents joined.
func (h *harness) start(t *testing.T) *daemon {
	t.Helper()
	var sa *subagents.Subagents
	d := h.Start(t, func(m *session.Manager) { sa = subagents.New(m, h.Store, nil) })
	return &daemon{d, sa}
}

// client is a connected client of identity id.
var client = sessiontest.Client

// info is session/get's.
func (d *daemon) info(t *testing.T, sid string) *protocol.SessionInfo {
	t.Helper()
	info, err := d.M.Archive().Get(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// call runs line (a tool call of the echo model's, without its /tool) as
// a turn of its own and returns the call's tool_result.
func (d *daemon) call(t *testing.T, cl *session.Client, c *conn, sid, line string) protocol.ToolResultEvent {
	t.Helper()
	d.Prompt(t, cl, sid, "/tool "+line)
	evs := c.All(t)
	for i := len(evs) - 1; i >= 0; i-- {
		if r, ok := evs[i].Event.(protocol.ToolResultEvent); ok && evs[i].SessionID == sid {
			return r
		}
	}
	t.Fatalf("no tool_result for %s", line)
	return protocol.ToolResultEvent{}
}

// subagent is the sub-agent a task tool's result tells of.
func subagent(t *testing.T, r protocol.ToolResultEvent) protocol.SubagentInfo {
	t.Helper()
	var d struct {
		Subagent protocol.SubagentInfo `json:"subagent"`
	}
	if err := json.Unmarshal(r.Details, &d); err != nil || d.Subagent.SessionID == "" {
		t.Fatalf("the result's sub-agent: %s (%v) in %+v", r.Details, err, r)
	}
	return d.Subagent
}

// updates are the session's subagent_update events the client was sent.
func updates(t *testing.T, c *conn, sid string) []protocol.SubagentInfo {
	t.Helper()
	var out []protocol.SubagentInfo
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.SubagentUpdateEvent); ok && u.SessionID == sid {
			out = append(out, e.Subagent)
		}
	}
	return out
}

// ended waits for the subagent_update in sid that says child ended.
func ended(t *testing.T, c *conn, sid, child string) protocol.SubagentInfo {
	t.Helper()
	return of(t, c, sid, func(e protocol.SubagentUpdateEvent) bool {
		return e.Subagent.SessionID == child && e.Subagent.State != protocol.SubagentRunning
	}).Subagent
}

// callAnswering is call for a task that runs a project's agent: the
// request that shows it is answered decision (the first one of the
// turn: the agent's file), and returns the request with the result.
func (d *daemon) callAnswering(t *testing.T, cl *session.Client, c *conn, sid, line, decision string) (protocol.ApprovalRequestEvent, protocol.ToolResultEvent) {
	t.Helper()
	done, err := d.M.Prompt(cl, sid, "/tool "+line)
	if err != nil {
		t.Fatal(err)
	}
	ask := of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return e.ToolName == "task" })
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: ask.RequestID, Decision: decision}); !ok || err != nil {
		t.Fatalf("answering %s: %v %v", ask.RequestID, ok, err)
	}
	<-done
	evs := c.All(t)
	for i := len(evs) - 1; i >= 0; i-- {
		if r, ok := evs[i].Event.(protocol.ToolResultEvent); ok && evs[i].SessionID == sid {
			return ask, r
		}
	}
	t.Fatalf("no tool_result for %s", line)
	return ask, protocol.ToolResultEvent{}
}
