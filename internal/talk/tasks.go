package talk

import (
	"context"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// tasks serves /tasks: the session's sub-agents, each with how it stands
// and how to follow it.
func (ch *chat) tasks(ctx context.Context, _, _ string) error {
	sid := ch.cv.r.sessionID
	var l protocol.SessionListResult
	if err := ch.cv.c.Call(ctx, protocol.MethodSessionList, protocol.SessionListParams{ParentSessionID: sid}, &l); err != nil {
		return err
	}
	if len(l.Sessions) == 0 {
		ch.say("no sub-agents in this session")
		return nil
	}
	var g protocol.SessionInfo
	ch.cv.c.Call(ctx, protocol.MethodSessionGet, protocol.SessionRef{SessionID: sid}, &g)
	states := map[string]protocol.SubagentInfo{}
	for _, c := range g.Children {
		states[c.SessionID] = c
	}
	for _, s := range l.Sessions {
		state, agent := s.State, s.AgentAlias
		if c, ok := states[s.SessionID]; ok {
			state = c.State
			if c.Background {
				state += " (background)"
			}
		}
		ch.say(fmt.Sprintf("%s  %-24s %-10s %s", s.SessionID, state, agent, s.Title))
	}
	ch.note("zeroclaw chat --session ID follows one")
	return nil
}
