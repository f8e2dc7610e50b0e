// Package cut is what a turn a dead daemon cut left, and how its
// transcript is made whole again: which of its calls had started, which
// ended, which waited for an approval no one gave, what the model was
// streaming (Read, from the session's stored events); the results the
// calls that never ended are given, and the note the model reads when
// the turn goes on (Repair, Note). Both the next daemon's continuation
// (internal/continuation) and a session that is not continued
// (internal/session) read a cut attempt this one way.
package cut

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// The results the model reads for the calls a daemon's end cut.
const (
	// Interrupted: the call had started and not ended.
	Interrupted = "interrupted by a daemon restart: the command may or may not have run to the end"
	// Unrun: the call of a cut reply had not started.
	Unrun = "not run: the daemon stopped before this call started, and it was not run after the restart"
	// UnrunAsked: the call waited for an approval, in a turn that is not
	// continued.
	UnrunAsked = "not run: the daemon stopped while it waited for an approval"
	// UnrunHeld: the call waited (for an approval or a sub-agent), in a
	// turn past its attempts.
	UnrunHeld = "not run: the daemon stopped while it waited (for an approval or a sub-agent), and the turn is not continued again"
)

// Call is a tool call of the cut attempt.
type Call struct{ ID, Name string }

// Left is what a cut attempt left in its history.
type Left struct {
	// Partial is the reply the model was streaming when it was cut.
	Partial string
	// Calls are its tool calls that started (a tool_call), in order.
	Calls []Call
	// Ended are those of them that ended (a tool_result).
	Ended map[string]bool
	// Asked are the calls that waited for an approval no one had given.
	Asked map[string]bool
}

// Started are the calls that had started, by id.
func (l Left) Started() map[string]bool {
	out := make(map[string]bool, len(l.Calls))
	for _, c := range l.Calls {
		out[c.ID] = true
	}
	return out
}

// Open are the calls that started and did not end: id → tool name.
func (l Left) Open() map[string]string {
	out := map[string]string{}
	for _, c := range l.Calls {
		if !l.Ended[c.ID] {
			out[c.ID] = c.Name
		}
	}
	return out
}

// Read reads the events of turn turnID's cut attempt, from seq since on,
// of session sessionID. A read that fails returns what was read before
// it, with the error.
func Read(ctx context.Context, st *store.Store, sessionID, turnID string, since int64) (Left, error) {
	l := Left{Ended: map[string]bool{}, Asked: map[string]bool{}}
	if since <= 0 {
		return l, nil
	}
	var partial strings.Builder
	asked := map[string]string{} // requestId → toolCallId
	var rerr error
	for from := since - 1; ; {
		page, err := st.Events(ctx, sessionID, from, 512, 1<<20)
		if err != nil || len(page) == 0 {
			rerr = err
			break
		}
		for _, ev := range page {
			from = ev.Seq
			var e struct {
				TurnID     string `json:"turnId"`
				Text       string `json:"text"`
				RequestID  string `json:"requestId"`
				ToolCallID string `json:"toolCallId"`
				Name       string `json:"name"`
			}
			switch ev.Type {
			case protocol.EventAgentMessageChunk, protocol.EventApprovalRequest, protocol.EventApprovalResolved, protocol.EventToolCall, protocol.EventToolResult:
				if json.Unmarshal(ev.Body, &e) != nil || (e.TurnID != turnID && ev.Type != protocol.EventApprovalResolved) {
					continue
				}
			}
			switch ev.Type {
			case protocol.EventToolCall:
				l.Calls = append(l.Calls, Call{e.ToolCallID, e.Name})
			case protocol.EventToolResult:
				l.Ended[e.ToolCallID] = true
			}
			switch ev.Type {
			case protocol.EventAgentMessageChunk:
				partial.WriteString(e.Text)
			case protocol.EventContextUsage, protocol.EventToolCall, protocol.EventToolResult, protocol.EventUserMessage, protocol.EventTurnResumed:
				// A model call that ended (its reply is in the
				// transcript), or a message after it.
				partial.Reset()
			case protocol.EventApprovalRequest:
				asked[e.RequestID] = e.ToolCallID
			case protocol.EventApprovalResolved:
				delete(asked, e.RequestID)
			}
		}
	}
	l.Partial = partial.String()
	for _, id := range asked {
		l.Asked[id] = true
	}
	return l, rerr
}

// Repaired is what Repair did with the calls it found open: answered
// Interrupted (Cut: they had started), answered Unrun (Unrun: they had
// not), or left open (Held).
type Repaired struct {
	Cut, Unrun, Held []provider.ToolCall
}

// Repair gives every tool call of an interrupted turn a result, so the
// transcript is one a model accepts: results follow their assistant
// message, and a call without one gets an Interrupted result (Cut),
// except in the transcript's last reply: a call that asks holds (one
// that waited for an approval, never run) is left open (Held), for a
// continuation to ask again and answer, and where started says which
// calls had started (non-nil), one that had not gets an Unrun result.
func Repair(h []provider.Message, asks, started map[string]bool) (out []provider.Message, r Repaired) {
	out = make([]provider.Message, 0, len(h))
	for i := 0; i < len(h); i++ {
		m := h[i]
		out = append(out, m)
		if m.Role != provider.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for i+1 < len(h) && h[i+1].Role == provider.RoleTool {
			i++
			out = append(out, h[i])
			answered[h[i].ToolCallID] = true
		}
		last := i == len(h)-1
		for _, tc := range m.ToolCalls {
			switch {
			case answered[tc.ID]:
			case last && asks[tc.ID]:
				r.Held = append(r.Held, tc)
			case last && started != nil && !started[tc.ID]:
				out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Text: Unrun, IsError: true})
				r.Unrun = append(r.Unrun, tc)
			default:
				out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Text: Interrupted, IsError: true})
				r.Cut = append(r.Cut, tc)
			}
		}
	}
	return out, r
}

// Note is what the model reads when its cut turn goes on (attempt); it
// speaks of a running call only when one was running.
func Note(attempt int, running bool) string {
	note := "[The daemon stopped during this turn and was restarted; the turn goes on (attempt " + fmt.Sprint(attempt) + ")."
	if running {
		note += " A tool call that was running then was not run again: its result says so. Check what it did before relying on it."
	}
	return note + "]"
}
