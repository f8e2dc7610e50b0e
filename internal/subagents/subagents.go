// Package subagents runs the sessions' sub-agents: a task is a session
// of its own, a child of the session whose model started it (the task
// tools, tool.Tasks). It runs in the same directory, with the parent's
// rights or fewer (session.NewChild); its history is its own (any
// client can attach to it), and the parent's says each child's start
// and end (subagent_update) and, while it works, what it does
// (tool_progress of the task call). A foreground task's call waits for
// the child's answer; a background one's answer reaches the parent's
// model as a notice, as a background process's end does. Limits: per
// session ([subagents] max_concurrent), in depth (max_depth) and per
// daemon (MaxRunning).
//
// It takes part in the sessions' turns as a session.Participant: it
// gives a turn its task host, stops a closing session's children, says
// its children in session/get, reports the children a dead daemon cut,
// tells a parent what its child does, and takes back a child whose cut
// turn goes on with its parent's.
package subagents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// MaxRunning bounds the sub-agents running in one daemon.
const MaxRunning = 16

// Subagents runs the sub-agents of one daemon's sessions.
type Subagents struct {
	session.Moments
	m     *session.Manager
	store *store.Store
	log   *slog.Logger
	// running counts the sub-agents running in this daemon (at most
	// MaxRunning).
	running atomic.Int64
}

// New makes the sub-agents of m's sessions and joins them to every
// session's turns.
func New(m *session.Manager, st *store.Store, log *slog.Logger) *Subagents {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sa := &Subagents{m: m, store: st, log: log}
	m.Join(sa)
	return sa
}

// Running is how many sub-agents run in the daemon now.
func (sa *Subagents) Running() int { return int(sa.running.Load()) }

// child is one sub-agent of a session.
type child struct {
	s  *session.Session
	mu sync.Mutex
	// steps counts its tool calls; told is when its parent last heard
	// what it does (Emitted).
	steps int
	told  time.Time
	info  protocol.SubagentInfo
	// answer is the last turn's answer; done is closed when the turn
	// running ends (replaced by each turn task_send starts).
	answer string
	done   chan struct{}
	turn   *session.Pending // the turn running (or about to)
	// cancelled: a cancel came while the turn was being submitted (no
	// turn to withdraw yet): it is withdrawn once it is.
	cancelled bool
	// held (guarded by its family's mu): its parent's cut task call
	// waits for it again (Continuing), once; a later call with the same
	// id (after a rewind) starts a child of its own.
	held bool
}

// cancel cancels the child's turn: the one running, or the one about to
// start (it then ends at once, cancelled), or the one being submitted.
func (c *child) cancel() {
	c.mu.Lock()
	p := c.turn
	if p == nil {
		c.cancelled = true
	}
	c.mu.Unlock()
	if p != nil {
		p.Withdraw()
	}
}

func (c *child) status() tool.TaskStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tool.TaskStatus{SubagentInfo: c.info, Answer: c.answer}
}

// family is what a parent keeps of its children (session.Keep): its
// lock is taken before any of the session's, never with another
// family's but a child's (a child's mu after its parent's family mu).
type family struct {
	mu       sync.Mutex
	children map[string]*child
	// starting counts the children being started (counted as running
	// by the max_concurrent check until they are in children).
	starting int
	// shown are the project agent files the user let this session's
	// tasks run, by path and content (trust).
	shown map[string]bool
	// forwards are the approvals of descendants shown in this session:
	// requestId to the session that asks (Answers).
	forwards map[string]*session.Session
	// shownIn are the ancestors this session's approval requests are
	// shown in, by requestId (their resolution is told there too).
	shownIn map[string][]*session.Session
}

type familyKey struct{}

func familyOf(s *session.Session) *family {
	return s.Keep(familyKey{}, func() any { return &family{children: map[string]*child{}} }).(*family)
}

func (f *family) get(id string) *child {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.children[id]
}

func (f *family) all() []*child {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*child, 0, len(f.children))
	for _, c := range f.children {
		out = append(out, c)
	}
	return out
}

// TurnStarting implements session.Participant: a turn gets its task
// host, unless the session is as deep as sub-agents nest (then it has
// no task tools: the session strips the tools no host serves).
func (sa *Subagents) TurnStarting(s *session.Session, _ string, a *agent.Agent) {
	if s.Lineage().Depth >= sa.m.Config().Subagents.MaxDepth {
		return
	}
	a.Tasks = host{sa, s}
}

// host is a session's tool.Tasks.
type host struct {
	sa *Subagents
	s  *session.Session
}

// Agents are the config's agents with a description, then the
// project's (its agent files), by name.
func (h host) Agents() []tool.TaskAgent {
	cfg := h.sa.m.Config()
	var out []tool.TaskAgent
	for _, alias := range cfg.AgentAliases() {
		out = append(out, tool.TaskAgent{Name: alias, Description: cfg.Agents[alias].Description})
	}
	pas, _ := config.ProjectAgents(h.s.Cwd())
	for _, pa := range pas {
		if _, dup := cfg.Agents[pa.Name]; !dup {
			out = append(out, tool.TaskAgent{Name: pa.Name, Description: pa.Agent.Description})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (h host) Start(ctx context.Context, t tool.TaskStart) (tool.TaskStatus, error) {
	s, sa := h.s, h.sa
	cfg := sa.m.Config()
	f := familyOf(s)
	f.mu.Lock()
	for _, c := range f.children {
		if c.held && c.info.ToolCallID == t.ToolCallID {
			// The call a dead daemon cut, held for its child that goes
			// on (Continuing): it waits for it again.
			c.held = false
			f.mu.Unlock()
			return h.wait(ctx, c)
		}
	}
	f.mu.Unlock()
	// An agent a project's file defines (a cloned repository's) runs
	// only once the user has seen what it is.
	alias := cmp.Or(t.Agent, s.Alias())
	if err := h.trust(ctx, cfg, alias, t.ToolCallID); err != nil {
		return tool.TaskStatus{}, err
	}
	f.mu.Lock()
	if s.Lineage().Depth >= cfg.Subagents.MaxDepth {
		f.mu.Unlock()
		return tool.TaskStatus{}, fmt.Errorf("sub-agents nest at most %d deep ([subagents] max_depth): this session may start none", cfg.Subagents.MaxDepth)
	}
	// Counted and reserved at once: several task calls of one reply
	// start together.
	running := f.starting
	for _, c := range f.children {
		if c.status().State == protocol.SubagentRunning {
			running++
		}
	}
	if running >= cfg.Subagents.MaxConcurrent {
		f.mu.Unlock()
		return tool.TaskStatus{}, fmt.Errorf("this session already runs %d sub-agents, its limit ([subagents] max_concurrent): wait for one (task_status) or cancel one (task_cancel)", running)
	}
	f.starting++
	f.mu.Unlock()
	started := func() {
		f.mu.Lock()
		f.starting--
		f.mu.Unlock()
	}
	if sa.running.Add(1) > MaxRunning {
		sa.running.Add(-1)
		started()
		return tool.TaskStatus{}, fmt.Errorf("the daemon already runs %d sub-agents, its limit", MaxRunning)
	}
	c, err := sa.start(s, alias, t)
	started()
	if err != nil {
		sa.running.Add(-1)
		return tool.TaskStatus{}, err
	}
	if t.Background {
		return c.status(), nil
	}
	return h.wait(ctx, c)
}

// Asking implements session.Participant: a sub-agent's approval request
// is shown in each live ancestor too, labelled with the child, and is
// answered in whichever of them answers first (Answers); its resolution
// is told where it was shown.
func (sa *Subagents) Asking(s *session.Session, _ string, a session.Ask) {
	f := familyOf(s)
	if a.Resolved != nil {
		f.mu.Lock()
		in := f.shownIn[a.Request.RequestID]
		delete(f.shownIn, a.Request.RequestID)
		f.mu.Unlock()
		for _, p := range in {
			p.Publish(*a.Resolved)
			pf := familyOf(p)
			pf.mu.Lock()
			delete(pf.forwards, a.Request.RequestID)
			pf.mu.Unlock()
		}
		return
	}
	ev := *a.Request
	ev.Subagent = &protocol.SubagentRef{SessionID: s.ID(), Description: s.Description()}
	var in []*session.Session
	for p := s.Parent(); p != nil; p = p.Parent() {
		pf := familyOf(p)
		pf.mu.Lock()
		if pf.forwards == nil {
			pf.forwards = map[string]*session.Session{}
		}
		pf.forwards[ev.RequestID] = s
		pf.mu.Unlock()
		p.Publish(ev)
		in = append(in, p)
	}
	if len(in) > 0 {
		f.mu.Lock()
		if f.shownIn == nil {
			f.shownIn = map[string][]*session.Session{}
		}
		f.shownIn[ev.RequestID] = in
		f.mu.Unlock()
	}
}

// Answers implements session.Participant: the descendant whose approval
// request, shown in s, requestID names.
func (sa *Subagents) Answers(s *session.Session, requestID string) *session.Session {
	f := familyOf(s)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forwards[requestID]
}

// trust asks the user, the first time in this session, before a task
// runs an agent that a file of the project defines (not the config):
// its model, tools and instructions come from the directory, which may
// be anyone's. The request shows them; the answer holds for the file as
// it is (a changed file is shown again).
func (h host) trust(ctx context.Context, cfg *config.Config, alias, callID string) error {
	if _, ok := cfg.Agents[alias]; ok {
		return nil
	}
	pas, _ := config.ProjectAgents(h.s.Cwd())
	var pa *config.ProjectAgent
	for i := range pas {
		if pas[i].Name == alias {
			pa = &pas[i]
		}
	}
	if pa == nil {
		return nil // no such agent: the start says so
	}
	b, _ := os.ReadFile(pa.Path)
	key := pa.Path + "\x00" + string(b)
	f := familyOf(h.s)
	f.mu.Lock()
	seen := f.shown[key]
	f.mu.Unlock()
	if seen {
		return nil
	}
	tools := "every tool the session has"
	if len(pa.Agent.Tools) > 0 {
		tools = strings.Join(pa.Agent.Tools, ", ")
	}
	instr := pa.Agent.SystemPrompt
	if len(instr) > 600 {
		instr = instr[:600] + "…"
	}
	input, _ := json.Marshal(map[string]string{"agent": alias, "file": pa.Path, "model": cmp.Or(pa.Agent.Model, "the session's"), "tools": tools, "instructions": pa.Agent.SystemPrompt})
	d := h.s.Approve(ctx, agent.ApprovalRequest{ToolCallID: callID, ToolName: "task", Input: input, Kind: protocol.KindOther,
		Summary: fmt.Sprintf("Run the project's agent %q (%s)? model: %s; tools: %s; instructions: %s", alias, pa.Path, cmp.Or(pa.Agent.Model, "the session's"), tools, instr),
		Rule:    "an agent defined by a file of the project is shown before it first runs",
		Options: []string{protocol.DecisionAllowOnce, protocol.DecisionRejectOnce}})
	if !d.Allow || d.Choice != protocol.DecisionAllowOnce {
		why := "the user did not allow it"
		if !d.Allow && d.Why != "" {
			why = d.Why
		}
		return fmt.Errorf("the project's agent %q (%s) was not run: %s", alias, pa.Path, why)
	}
	f.mu.Lock()
	if f.shown == nil {
		f.shown = map[string]bool{}
	}
	f.shown[key] = true
	f.mu.Unlock()
	return nil
}

// wait waits for c's turn to end; ctx's end (the parent's turn
// cancelled) cancels it.
func (h host) wait(ctx context.Context, c *child) (tool.TaskStatus, error) {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		c.cancel()
		<-done
	}
	return c.status(), nil
}

func (h host) child(id string) (*child, error) {
	if c := familyOf(h.s).get(id); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no sub-agent %q of this session", id)
}

func (h host) Status(id string) (tool.TaskStatus, error) {
	c, err := h.child(id)
	if err != nil {
		return tool.TaskStatus{}, err
	}
	return c.status(), nil
}

func (h host) Send(ctx context.Context, id, prompt string) (tool.TaskStatus, error) {
	c, err := h.child(id)
	if err != nil {
		return tool.TaskStatus{}, err
	}
	// The gate: a child never takes work wider than its parent's mode
	// now (a mode switched since it started binds it too).
	if v := h.sa.m.Decide(gate.Request{Actor: h.s.Actor(), Mode: h.s.Mode(), Action: gate.Action{Kind: gate.TaskMessage, Name: "task_send", ChildMode: c.s.Mode()}}); v.Decision == gate.Deny {
		return tool.TaskStatus{}, errors.New(v.Why)
	}
	if c.status().State == protocol.SubagentRunning {
		if turn := c.s.SteerRunning(prompt); turn != "" {
			return c.status(), nil // it reads it at its next model call
		}
	}
	if h.sa.running.Add(1) > MaxRunning {
		h.sa.running.Add(-1)
		return tool.TaskStatus{}, fmt.Errorf("the daemon already runs %d sub-agents, its limit", MaxRunning)
	}
	if err := h.sa.run(h.s, c, prompt); err != nil {
		h.sa.running.Add(-1)
		return tool.TaskStatus{}, err
	}
	return h.wait(ctx, c)
}

func (h host) Cancel(id string) (tool.TaskStatus, error) {
	c, err := h.child(id)
	if err != nil {
		return tool.TaskStatus{}, err
	}
	c.cancel()
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	<-done
	return c.status(), nil
}

// start makes parent's child session for t (agent alias) and runs t's
// prompt in it.
func (sa *Subagents) start(parent *session.Session, alias string, t tool.TaskStart) (*child, error) {
	s, err := sa.m.NewChild(parent, session.Child{Alias: alias, ToolCallID: t.ToolCallID, Description: t.Description})
	if err != nil {
		return nil, err
	}
	c := &child{s: s, info: protocol.SubagentInfo{SessionID: s.ID(), ToolCallID: t.ToolCallID, Description: t.Description, Agent: alias, Background: t.Background}}
	f := familyOf(parent)
	f.mu.Lock()
	f.children[s.ID()] = c
	f.mu.Unlock()
	sa.log.Info("sub-agent started", "sessionId", s.ID(), "parentSessionId", parent.ID(), "agent", alias, "background", t.Background)
	if err := sa.run(parent, c, t.Prompt); err != nil {
		return nil, err
	}
	return c, nil
}

// run runs prompt as a turn of c; its end is told to the parent
// (subagent_update, and to its model when c runs in the background).
func (sa *Subagents) run(parent *session.Session, c *child, prompt string) error {
	done := make(chan struct{})
	c.mu.Lock()
	c.info.State, c.info.Summary, c.answer, c.done, c.turn, c.cancelled = protocol.SubagentRunning, "", "", done, nil, false
	info := c.info
	c.mu.Unlock()
	// Said before the child's turn can start: what it does (its
	// tool_progress in the parent) comes after it.
	parent.Publish(protocol.SubagentUpdateEvent{Subagent: info})
	p, err := sa.m.Submit(nil, c.s.ID(), session.Input{Text: prompt})
	if err != nil {
		c.mu.Lock()
		c.info.State, c.info.Summary = protocol.SubagentFailed, err.Error()
		info := c.info
		c.mu.Unlock()
		parent.Publish(protocol.SubagentUpdateEvent{Subagent: info})
		close(done)
		return err
	}
	c.mu.Lock()
	c.turn = p
	cancelled := c.cancelled
	c.mu.Unlock()
	if cancelled {
		p.Withdraw() // its parent closed, or its task was cancelled, meanwhile
	}
	go sa.watch(parent, c, p, done)
	return nil
}

// watch waits for the end of c's turn p, keeps its answer and tells
// parent (subagent_update; a notice to its model when c runs in the
// background), then closes done.
func (sa *Subagents) watch(parent *session.Session, c *child, p *session.Pending, done chan struct{}) {
	res := <-p.Done
	sa.running.Add(-1)
	c.mu.Lock()
	c.answer = res.Content
	switch {
	case res.Error != nil:
		c.info.State, c.info.Summary = protocol.SubagentFailed, res.Error.Message
	case res.StopReason == agent.StopCancelled:
		c.info.State = protocol.SubagentCancelled
	case res.StopReason == agent.StopBudget || res.StopReason == protocol.StopBlocked:
		c.info.State, c.info.Summary = protocol.SubagentFailed, res.Notice
	default:
		c.info.State, c.info.Summary = protocol.SubagentCompleted, cut(res.Content, 2048)
	}
	if u := archive.WireUsage(c.s.Spent()); u != nil {
		c.info.Usage = u
	}
	info := c.info
	answer := c.answer
	c.mu.Unlock()
	sa.store.TaskEnded(c.s.ID(), info.State, info.Summary)
	parent.Publish(protocol.SubagentUpdateEvent{Subagent: info})
	if info.Background {
		text := fmt.Sprintf("[sub-agent %s (%s) %s", info.SessionID, info.Description, info.State)
		if answer != "" {
			text += "; its answer:\n" + answer + "\n"
		} else if info.Summary != "" {
			text += ": " + info.Summary
		}
		parent.Tell(text + "]")
	}
	close(done)
}

// Continuing implements session.Participant: a child a dead daemon's
// turn cut is its parent's again as its turn goes on (p): running, its
// end told as run's is. background: no task call waits for it (its end
// reaches the parent's model as a notice).
func (sa *Subagents) Continuing(parent, s *session.Session, p *session.Pending, background bool) {
	sa.running.Add(1)
	s.Adopt(parent)
	done := make(chan struct{})
	lin := s.Lineage()
	c := &child{s: s, done: done, turn: p, info: protocol.SubagentInfo{SessionID: s.ID(), ToolCallID: lin.ParentToolCallID,
		Description: s.Description(), Agent: s.Alias(), Background: background, State: protocol.SubagentRunning}}
	f := familyOf(parent)
	f.mu.Lock()
	c.held = !background
	f.children[s.ID()] = c
	f.mu.Unlock()
	parent.Publish(protocol.SubagentUpdateEvent{Subagent: c.info})
	sa.log.Info("sub-agent goes on with its parent", "sessionId", s.ID(), "parentSessionId", parent.ID(), "background", background)
	go sa.watch(parent, c, p, done)
}

// cut is s cut to at most n bytes, at a rune's start.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Closing implements session.Participant: the children's running turns
// end with their parent's session, and they are forgotten as its.
func (sa *Subagents) Closing(s *session.Session) {
	for _, c := range familyOf(s).all() {
		c.s.Orphan()
		c.cancel()
	}
}

// Describe implements session.Participant: session/get lists the
// session's children.
func (sa *Subagents) Describe(s *session.Session, l *archive.Live) {
	var out []protocol.SubagentInfo
	for _, c := range familyOf(s).all() {
		out = append(out, c.status().SubagentInfo)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	l.Children = out
}

// Resumed implements session.Participant: as a session is loaded, it
// says which of its children a dying daemon cut (foreground or
// background), once per cut: never a task that silently vanished (a
// foreground task call itself gets its "interrupted" result when the
// transcript is repaired).
func (sa *Subagents) Resumed(s *session.Session, _ *store.Session) {
	ctx := context.Background()
	kids, err := sa.store.ListChildren(ctx, s.ID())
	if err != nil {
		return
	}
	for _, k := range kids {
		if k.State != store.StateInterrupted || k.InterruptTold {
			continue
		}
		if sa.m.Config().Daemon.ContinueInterrupted {
			if open, _ := sa.store.OpenInputs(ctx, k.ID); len(open) > 0 {
				continue // its cut turn goes on (Continuing)
			}
		}
		sa.store.InterruptTold(k.ID)
		s.Publish(protocol.SubagentUpdateEvent{Subagent: protocol.SubagentInfo{SessionID: k.ID, ToolCallID: k.ParentToolCallID,
			Description: k.Description, Agent: k.AgentAlias, State: protocol.SubagentInterrupted, Summary: "the daemon stopped while it ran"}})
	}
}

// Emitted implements session.Participant: as a child works, its parent
// hears what it does now: a tool_progress of its task call (chat shows
// it as the child's live line, the dashboard in the call's card, ACP as
// the call's content while the call runs): each tool call it starts (the
// line names what it runs for as long as it runs), what it says or
// thinks at most five a second. A background child's progress goes on
// after its task call answered, until its subagent_update says it ended.
func (sa *Subagents) Emitted(s *session.Session, e protocol.EventBody) {
	var what string
	switch ev := e.(type) {
	case protocol.ToolCallEvent:
		what = ev.Title
	case protocol.AgentMessageChunkEvent:
		what = "answering"
	case protocol.AgentThoughtChunkEvent:
		what = "thinking"
	default:
		return
	}
	p := s.Parent()
	if p == nil {
		return
	}
	c := familyOf(p).get(s.ID())
	if c == nil {
		return
	}
	c.mu.Lock()
	_, call := e.(protocol.ToolCallEvent)
	if call {
		c.steps++
	}
	now := time.Now()
	if c.info.State != protocol.SubagentRunning || c.info.ToolCallID == "" || (!call && now.Sub(c.told) < 200*time.Millisecond) {
		c.mu.Unlock()
		return
	}
	c.told = now
	ev := protocol.ToolProgressEvent{ToolCallID: c.info.ToolCallID, Progress: float64(c.steps), Message: cut(what, 200)}
	c.mu.Unlock()
	p.Publish(ev)
}
