package session

import (
	"context"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func full(cfg *config.Config) {
	a := cfg.Agents["default"]
	a.Risk = "full"
	cfg.Agents["default"] = a
}

// The queue as its owner keeps it: prompts wait in order behind the
// running turn, one is removed by id, one moved into the turn as a steer
// (its caller gets the turn's answer), the rest cleared (answered
// cancelled); a withdrawn prompt never runs; closing answers what waits.
func TestQueueEdits(t *testing.T) {
	h := newHarness(t, nil)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "q")
	running, err := h.m.Prompt(cl, "q", "/delay 20\n/chunks 100000")
	if err != nil {
		t.Fatal(err)
	}
	waitFor[protocol.AgentMessageChunkEvent](t, c, 0)
	var waiting []*Pending
	for _, text := range []string{"one", "two", "three", "four"} {
		p, err := h.m.Submit(cl, "q", Input{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, p)
	}
	q, err := h.m.Queue(cl, "q")
	if err != nil || len(q.Items) != 4 || q.Items[0].Text != "one" || q.Items[0].ClientID != "c1" {
		t.Fatalf("queue: %+v %v", q, err)
	}
	if _, err := h.m.QueueRemove(cl, "q", "q_none"); err == nil {
		t.Error("removed a prompt that is not queued")
	}
	if r, err := h.m.QueueRemove(cl, "q", q.Items[0].ID); err != nil || r.Removed != 1 || len(r.Items) != 3 {
		t.Errorf("remove one: %+v %v", r, err)
	}
	if r := <-waiting[0].Done; r.StopReason != protocol.StopCancelled {
		t.Errorf("the removed prompt: %+v", r)
	}
	if st, err := h.m.QueueSteer(context.Background(), cl, "q", q.Items[1].ID, ""); err != nil || st.Outcome != protocol.SteerInjected {
		t.Errorf("queue/steer: %+v %v", st, err)
	}
	waiting[2].Withdraw()
	if r := <-waiting[2].Done; r.StopReason != protocol.StopCancelled {
		t.Errorf("the withdrawn prompt: %+v", r)
	}
	if r, err := h.m.QueueRemove(cl, "q", ""); err != nil || r.Removed != 1 || len(r.Items) != 0 {
		t.Errorf("clear: %+v %v", r, err)
	}
	h.m.Cancel(cl, "q")
	res := <-running
	if moved := <-waiting[1].Done; moved.TurnID != res.TurnID {
		t.Errorf("the prompt moved into the turn got %+v, the turn %+v", moved, res)
	}
	for _, ev := range c.events(t) {
		if u, ok := ev.Event.(protocol.UserMessageEvent); ok && (u.Text == "three" || u.Text == "four" || u.Text == "one") && !u.Steered {
			t.Errorf("a prompt taken out of the queue ran: %q", u.Text)
		}
	}

	// Closing answers what still waits, cancelled.
	running, _ = h.m.Prompt(cl, "q", "/delay 20\n/chunks 100000")
	waitFor[protocol.AgentMessageChunkEvent](t, c, len(c.events(t)))
	last, err := h.m.Submit(cl, "q", Input{Text: "never"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.m.Close(cl, "q"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-last.Done:
		if r.StopReason != protocol.StopCancelled {
			t.Errorf("a prompt queued at the close: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a prompt queued at the close was never answered")
	}
	<-running
}

// A reload puts the new config in force for the next turn; the config's
// permission rules are listed, and only stored answers may be revoked.
func TestReloadAndPermissions(t *testing.T) {
	h := newHarness(t, func(cfg *config.Config) {
		cfg.Permissions = []config.Permission{{Tool: "shell", Pattern: "git status", Decision: "allow"}}
	})
	cl, _ := h.client(t, "c1")
	h.open(t, cl, "r")
	if rules := h.m.Permissions(""); len(rules) != 1 || rules[0].Tool != "shell" {
		t.Errorf("rules: %+v", rules)
	}
	if ok, err := h.m.Revoke("ans_none"); ok || err != nil {
		t.Errorf("revoke with no store: %v %v", ok, err)
	}
	cfg := config.Default(func(string) string { return "" })
	a := cfg.Agents["default"]
	a.Model = "echo-2"
	cfg.Agents["default"] = a
	h.m.Reload(cfg)
	cr, err := h.m.Configure(context.Background(), cl, protocol.SessionConfigureParams{SessionID: "r"})
	if err != nil || cr.Model != "echo-2" {
		t.Errorf("after the reload: %+v %v", cr, err)
	}
	if info, err := h.m.AgentInfo("default"); err != nil || info.Model != "echo-2" {
		t.Errorf("agent info: %+v %v", info, err)
	}
	if _, err := h.m.AgentInfo("nobody"); err == nil {
		t.Error("the info of no agent")
	}
	if st := h.m.SandboxStatus(); st.Mode == "" {
		t.Errorf("sandbox status: %+v", st)
	}
}
