// Package archive reads stored sessions without a live one: the list,
// one session, its history and events, a document of it (export), a copy
// of it (fork).
package archive

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Archive reads the stored sessions as clients read them, with no live
// session needed: the list, one session, its history and its events, a
// document of it (export), a copy of it (fork). The live state of those
// loaded comes from Live.
type Archive struct {
	Store *store.Store
	// CheckpointDir is where each session's checkpoints live ("":
	// nowhere): a turn's start time (export), where its transcript was
	// cut (fork).
	CheckpointDir string
	// Live describes a loaded session (false: not loaded).
	Live func(id string) (Live, bool)
	// Changed is told when a session's row changed (a fork made one).
	Changed func(id string)
	// AgentRisk is the risk level of the config's agent of that alias
	// ("": none such), for a stored session with no risk of its own.
	AgentRisk func(alias string) string
	Log       *slog.Logger
}

// Live is what a loaded session adds to its stored row.
type Live struct {
	State         string
	RunningTurnID string
	// Risk is the session's risk level now (its own, else its agent's).
	Risk string
	// ResumedAttempts: times the running turn was continued.
	ResumedAttempts int
	Attached        []protocol.AttachedClient
	Processes       []protocol.ProcessInfo
	Children        []protocol.SubagentInfo
	// Goal is the session's goal with its spending now (nil: none).
	Goal *protocol.Goal
}

// ErrNotFound: no session (or event) of that id is stored.
var ErrNotFound = errors.New("session not found")

// listPageBytes bounds a page of session/list (its sessions as JSON):
// a page holds fewer sessions than its limit rather than more than any
// client's frame.
var listPageBytes = 2 << 20

// maxListedTitle bounds a title as a session is told (session.MaxTitle:
// a sub-agent's, its task's description, may have been stored longer).
const maxListedTitle = 200

// maxListedCommand bounds a running process's command as a session is
// told (as process/list does).
const maxListedCommand = 4096

// List pages through persisted sessions, newest first: from cursor (a
// page's nextCursor) by keyset, else from offset (and then with the
// total); a page stops short of its limit at listPageBytes.
func (m *Archive) List(ctx context.Context, p protocol.SessionListParams) (*protocol.SessionListResult, error) {
	limit := p.Limit
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	res := &protocol.SessionListResult{Sessions: []protocol.SessionInfo{}}
	var recs []*store.Session
	var err error
	if p.ParentSessionID != "" {
		// A session's children: all of them, the oldest first.
		if recs, err = m.Store.ListChildren(ctx, p.ParentSessionID); err != nil {
			return nil, err
		}
		for _, r := range recs {
			res.Sessions = append(res.Sessions, m.Info(r))
		}
		return res, nil
	}
	if p.Cursor != "" || p.Offset <= 0 {
		var after int64
		var id string
		if p.Cursor != "" {
			ms, rest, ok := strings.Cut(p.Cursor, ":")
			n, perr := strconv.ParseInt(ms, 10, 64)
			if !ok || perr != nil || rest == "" {
				return nil, &protocol.ParamsError{Field: "cursor", Reason: fmt.Sprintf("%q: not a cursor this daemon gave", p.Cursor)}
			}
			after, id = n, rest
		}
		// One more than asked: whether a next page exists.
		if p.Query != "" {
			recs, err = m.Store.ListMatching(ctx, p.Query, after, id, limit+1)
		} else {
			recs, err = m.Store.ListAfter(ctx, after, id, limit+1)
		}
		if err != nil {
			return nil, err
		}
		if p.Cursor == "" && p.Query == "" {
			n, err := m.Store.CountSessions(ctx)
			if err != nil {
				return nil, err
			}
			res.Total = &n
		}
	} else {
		if p.Query != "" {
			return nil, &protocol.ParamsError{Field: "offset", Reason: "a query pages with cursor, not offset"}
		}
		var n int
		if recs, n, err = m.Store.ListSessions(ctx, p.Offset, limit+1); err != nil {
			return nil, err
		}
		res.Total = &n
	}
	more := len(recs) > limit
	if more {
		recs = recs[:limit]
	}
	size := 0
	for i, r := range recs {
		info := m.Info(r)
		b, _ := json.Marshal(info)
		if i > 0 && size+len(b) > listPageBytes {
			// The page is full: the rest come with the next one.
			recs, more = recs[:i], true
			break
		}
		size += len(b) + 1
		res.Sessions = append(res.Sessions, info)
	}
	if more {
		last := recs[len(recs)-1]
		c := strconv.FormatInt(last.UpdatedMs, 10) + ":" + last.ID
		res.NextCursor = &c
		if p.Cursor == "" && p.Query == "" {
			next := max(p.Offset, 0) + len(recs)
			res.NextOffset = &next
		}
	}
	return res, nil
}

// Info describes a stored session, with its live state.
func (m *Archive) Info(r *store.Session) protocol.SessionInfo {
	title := r.Title
	if t := []rune(title); len(t) > maxListedTitle {
		title = string(t[:maxListedTitle-1]) + "…"
	}
	info := protocol.SessionInfo{SessionID: r.ID, AgentAlias: r.AgentAlias, Mode: r.Mode, Cwd: r.Cwd, Title: title,
		State: r.State, CreatedMs: r.CreatedMs, UpdatedMs: r.UpdatedMs, LastSeq: r.LastSeq, MessageCount: r.MessageCount,
		Usage: WireUsage(r.Usage)}
	if r.ForkedFrom != "" {
		info.ForkedFrom = &protocol.ForkRef{SessionID: r.ForkedFrom, Seq: r.ForkedSeq}
	}
	info.Lineage = protocol.Lineage{ParentSessionID: r.ParentID, ParentToolCallID: r.ParentToolCallID, Depth: r.Depth}
	info.Risk = r.Risk
	if info.Risk == "" && m.AgentRisk != nil {
		info.Risk = m.AgentRisk(r.AgentAlias)
	}
	if len(r.Goal) > 0 {
		// As stored (its spending then); a live session's is now's.
		var g protocol.Goal
		if json.Unmarshal(r.Goal, &g) == nil {
			info.Goal = &g
		}
	}
	if l, live := m.Live(r.ID); live {
		info.Live = true
		info.State, info.RunningTurnID, info.Attached = l.State, l.RunningTurnID, l.Attached
		info.Risk = cmp.Or(l.Risk, info.Risk)
		if l.RunningTurnID != "" {
			info.ResumedAttempts = l.ResumedAttempts
		}
		info.Children = l.Children
		info.Goal = l.Goal
		for _, p := range l.Processes {
			if p.State == "running" {
				if len(p.Command) > maxListedCommand {
					n := maxListedCommand
					for n > 0 && !utf8.RuneStart(p.Command[n]) {
						n--
					}
					p.Command, p.CommandTruncated = p.Command[:n], true
				}
				info.Processes = append(info.Processes, p)
			}
		}
	}
	return info
}

// Get describes one session, as session/list would.
func (m *Archive) Get(ctx context.Context, id string) (*protocol.SessionInfo, error) {
	rec, err := m.Store.GetSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	info := m.Info(rec)
	if info.Children, err = m.children(ctx, id, info.Children); err != nil {
		return nil, err
	}
	return &info, nil
}

// children are a session's sub-agents, the oldest first, as the store
// has them (how each one's last task ended), a loaded parent's own
// account (live) taking precedence: a parent loaded again after a
// restart, or not loaded at all, still shows every child.
func (m *Archive) children(ctx context.Context, id string, live []protocol.SubagentInfo) ([]protocol.SubagentInfo, error) {
	recs, err := m.Store.ListChildren(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []protocol.SubagentInfo
	for _, r := range recs {
		if i := slices.IndexFunc(live, func(c protocol.SubagentInfo) bool { return c.SessionID == r.ID }); i >= 0 {
			out = append(out, live[i])
			continue
		}
		c := protocol.SubagentInfo{SessionID: r.ID, ToolCallID: r.ParentToolCallID, Description: r.Description, Agent: r.AgentAlias,
			State: r.TaskState, Summary: r.TaskSummary, Usage: WireUsage(r.Usage)}
		switch l, loaded := m.Live(r.ID); {
		case loaded && l.State == store.StateRunning:
			c.State, c.Summary = protocol.SubagentRunning, ""
		case r.State == store.StateInterrupted || c.State == "":
			// Its turn was cut by a daemon's death (or it never ended).
			c.State = protocol.SubagentInterrupted
		}
		out = append(out, c)
	}
	return out, nil
}

// History returns persisted events of a session after sinceSeq: a page
// of at most limit events and at most half of maxFrame bytes (the
// client's frame limit), so the answer always fits; an event bigger than
// that on its own is cut (protocol.Cut) and session/event reads it whole.
func (m *Archive) History(ctx context.Context, p protocol.SessionHistoryParams, maxFrame int) (*protocol.SessionHistoryResult, error) {
	rec, err := m.Store.GetSession(ctx, p.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, p.SessionID)
	}
	if err != nil {
		return nil, err
	}
	limit := p.Limit
	if limit <= 0 || limit > 10000 {
		limit = 1000
	}
	// Bodies within half the frame, less room for the page's own JSON.
	budget := maxFrame/2 - 4096
	evs, err := m.Store.Events(ctx, p.SessionID, p.SinceSeq, limit, budget)
	if err != nil {
		return nil, err
	}
	res := &protocol.SessionHistoryResult{SessionID: p.SessionID, Events: make([]json.RawMessage, 0, len(evs)), LastSeq: rec.LastSeq}
	for _, e := range evs {
		res.Events = append(res.Events, protocol.Cut(e.Body, budget))
	}
	if len(evs) > 0 {
		res.More = evs[len(evs)-1].Seq < rec.LastSeq
	}
	return res, nil
}

// Event returns part of one stored event's params, whole as stored:
// bytes from offset, at most what fits in half of maxFrame once base64
// encoded. A client reads a cut event whole with it.
func (m *Archive) Event(ctx context.Context, p protocol.SessionEventParams, maxFrame int) (*protocol.SessionEventResult, error) {
	ev, err := m.Store.Event(ctx, p.SessionID, p.Seq)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: session %s has no event %d", ErrNotFound, p.SessionID, p.Seq)
	}
	if err != nil {
		return nil, err
	}
	if p.Offset < 0 || p.Offset > int64(len(ev.Body)) {
		return nil, &protocol.ParamsError{Field: "offset", Reason: fmt.Sprintf("%d: must be between 0 and %d", p.Offset, len(ev.Body))}
	}
	chunk := int64(maxFrame / 2 / 4 * 3)
	end := min(p.Offset+chunk, int64(len(ev.Body)))
	return &protocol.SessionEventResult{SessionID: p.SessionID, Seq: p.Seq, Offset: p.Offset, TotalBytes: int64(len(ev.Body)),
		DataB64: base64.StdEncoding.EncodeToString(ev.Body[p.Offset:end]), More: end < int64(len(ev.Body))}, nil
}

// WireUsage is u on the wire; nil when u is empty.
func WireUsage(u store.Usage) *protocol.Usage {
	if u == (store.Usage{}) {
		return nil
	}
	w := &protocol.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
	if u.Priced {
		c := u.CostUSD
		w.CostUSD = &c
	}
	return w
}
