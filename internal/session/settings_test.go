package session

import (
	"context"
	"slices"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// A change of a session's settings is told to every attached client at
// once: client a switches the session to full and b is told (the mode,
// what changed, by whom, not as a turn's event); a change that changes
// nothing is not told; the plan mode's end (SetMode) is told as the
// agent's.
func TestConfigChangeToldToEveryClient(t *testing.T) {
	h := newHarness(t, supervised)
	ctx := context.Background()
	a, ac := h.client(t, "a")
	b, bc := h.client(t, "b")
	a.SetIdentity("a", "editor", false, 0)
	h.open(t, a, "s")
	h.open(t, b, "s")
	skip, skipA := len(bc.events(t)), len(ac.events(t))

	full := protocol.RiskFull
	cr, err := h.m.Configure(ctx, a, protocol.SessionConfigureParams{SessionID: "s", Risk: &full})
	if err != nil || cr.Risk != full {
		t.Fatalf("configure: %+v %v", cr, err)
	}
	got := waitFor[protocol.ConfigUpdateEvent](t, bc, skip)
	want := protocol.ConfigUpdateEvent{Provider: cr.Provider, Model: cr.Model, URL: cr.URL, Risk: full, ContextWindow: cr.ContextWindow,
		Reasoning: cr.Reasoning, Sandbox: cr.Sandbox, Network: cr.Network, Changed: []string{"risk"}, By: protocol.ConfigByClient,
		ClientID: "a", ClientName: "editor"}
	if !slices.Equal(got.Changed, want.Changed) || got.Risk != want.Risk || got.By != want.By || got.ClientID != want.ClientID ||
		got.ClientName != want.ClientName || got.Model != want.Model || got.Sandbox != want.Sandbox || got.Network != want.Network {
		t.Errorf("b was told\n%+v\nwant\n%+v", got, want)
	}
	evs := bc.events(t)
	last := evs[len(evs)-1]
	if last.TurnID != "" {
		t.Errorf("a client's change is told as turn %s's", last.TurnID)
	}
	if mine := waitFor[protocol.ConfigUpdateEvent](t, ac, skipA); mine.ClientID != "a" { // its own, too
		t.Errorf("a was told %+v", mine)
	}

	// Nothing changes: the same mode again, no settings at all, the
	// agent's model named as the session's own. (Events come in order:
	// the next change's is the next config_update b sees.)
	model := cr.Model
	for _, p := range []protocol.SessionConfigureParams{{SessionID: "s", Risk: &full}, {SessionID: "s"}, {SessionID: "s", Model: &model}} {
		if _, err := h.m.Configure(ctx, b, p); err != nil {
			t.Fatal(err)
		}
	}

	// The plan mode's end switches the mode as the agent's.
	s, err := h.m.Lookup(b, "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(protocol.RiskEdits); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMode(protocol.RiskEdits); err != nil { // told once
		t.Fatal(err)
	}
	// Several at once, in their order.
	off, low := false, "low"
	if _, err := h.m.Configure(ctx, a, protocol.SessionConfigureParams{SessionID: "s", Network: &off, Reasoning: &low, Risk: &full}); err != nil {
		t.Fatal(err)
	}
	for {
		if evs := bc.events(t); countConfig(evs) >= 3 {
			break
		}
		<-bc.pending
	}
	var told []protocol.ConfigUpdateEvent
	for _, e := range bc.events(t) {
		if c, ok := e.Event.(protocol.ConfigUpdateEvent); ok {
			told = append(told, c)
		}
	}
	if len(told) != 3 {
		t.Fatalf("%d config_updates, want 3 (changes that changed nothing are not told): %+v", len(told), told)
	}
	if got := told[1]; got.Risk != protocol.RiskEdits || got.By != protocol.ConfigByAgent || got.ClientID != "" || !slices.Equal(got.Changed, []string{"risk"}) {
		t.Errorf("the plan's switch: %+v", got)
	}
	if got := told[2]; got.Network || got.Reasoning != "low" || got.Risk != full || !slices.Equal(got.Changed, []string{"risk", "reasoning", "network"}) {
		t.Errorf("several at once: %+v", got)
	}
}

func countConfig(evs []protocol.SessionUpdate) int {
	n := 0
	for _, e := range evs {
		if _, ok := e.Event.(protocol.ConfigUpdateEvent); ok {
			n++
		}
	}
	return n
}
