package talk

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/mdterm"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Modes: how much the agent may do without asking (the session's risk
// level). /mode shows or switches it; Shift-Tab cycles Ask → Accept
// edits → Plan → Ask (read-only and full only by name).

// modeCycle is what Shift-Tab goes through.
var modeCycle = []string{protocol.RiskSupervised, protocol.RiskEdits, protocol.RiskPlan}

// nextMode is the mode after risk in the cycle (Ask for one outside it).
func nextMode(risk string) string {
	for i, r := range modeCycle {
		if r == risk {
			return modeCycle[(i+1)%len(modeCycle)]
		}
	}
	return protocol.RiskSupervised
}

// modeID reads a mode as typed: its id, its name, or ACP's word for it
// (ask, accept-edits, read-only).
func modeID(s string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	alias := map[string]string{"ask": protocol.RiskSupervised, "accept-edits": protocol.RiskEdits, "accept edits": protocol.RiskEdits,
		"read-only": protocol.RiskReadonly, "full access": protocol.RiskFull}
	if id, ok := alias[s]; ok {
		return id, true
	}
	for _, r := range protocol.RiskLevels {
		if s == r.ID || s == strings.ToLower(r.Name) {
			return r.ID, true
		}
	}
	return "", false
}

// modeName is a mode's name as the chat shows it.
func modeName(risk string) string {
	for _, r := range protocol.RiskLevels {
		if r.ID == risk {
			return r.Name
		}
	}
	return risk
}

// mode shows the session's mode, or switches it (/mode NAME).
func (ch *chat) mode(ctx context.Context, _, arg string) error {
	params := protocol.SessionConfigureParams{SessionID: ch.cv.r.sessionID}
	if arg = strings.TrimSpace(arg); arg != "" {
		id, ok := modeID(arg)
		if !ok {
			var names []string
			for _, r := range protocol.RiskLevels {
				names = append(names, strings.ToLower(r.Name))
			}
			return fmt.Errorf("no mode %q: one of %s", arg, strings.Join(names, ", "))
		}
		params.Risk = &id
	}
	cr, err := ch.cv.c.Configure(ctx, params)
	if err != nil {
		return err
	}
	ch.mu.Lock()
	if ch.ns != nil {
		ch.ns.Risk = cr.Risk
	}
	ch.mu.Unlock()
	for _, r := range protocol.RiskLevels {
		if r.ID == cr.Risk {
			ch.say(fmt.Sprintf("mode: %s (%s)", r.Name, r.Description))
		}
	}
	return nil
}

// configNote says, for a chat that did not make it, how another client
// or the agent changed the session's settings: "(mode → full access, by
// phone (cl_1))". "" for this client's own change (the command that made
// it said so).
func configNote(e protocol.ConfigUpdateEvent, me string) string {
	if e.By == protocol.ConfigByClient && e.ClientID != "" && e.ClientID == me {
		return ""
	}
	var what []string
	for _, c := range e.Changed {
		switch c {
		case "risk":
			what = append(what, "mode → "+strings.ToLower(modeName(e.Risk)))
		case "model":
			what = append(what, "model → "+mdterm.Safe(e.Model))
		case "reasoning":
			what = append(what, "reasoning → "+cmp.Or(e.Reasoning, "the agent's"))
		case "sandbox":
			what = append(what, "sandbox → "+e.Sandbox)
		case "network":
			what = append(what, "network → "+map[bool]string{true: "on", false: "off"}[e.Network])
		default: // a newer daemon's setting
			what = append(what, mdterm.Safe(c)+" changed")
		}
	}
	if len(what) == 0 {
		return ""
	}
	by := "by " + mdterm.Safe(fromWhom(e.ClientID, e.ClientName))
	if e.By == protocol.ConfigByAgent {
		by = "the plan was approved"
	}
	return "  (" + strings.Join(what, ", ") + ", " + by + ")"
}

// configured keeps what the chat shows of the session (the footer) as a
// config_update says it is now.
func (ch *chat) configured(e protocol.ConfigUpdateEvent) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.ns == nil {
		return
	}
	ch.ns.Provider, ch.ns.Model, ch.ns.ProviderURL, ch.ns.Risk = e.Provider, e.Model, e.URL, e.Risk
	ch.ns.ContextWindow, ch.ns.Reasoning = e.ContextWindow, e.Reasoning
}
