package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Sub-agents: a task is a session of its own, a child of the session
// whose model started it (tool.Tasks). It runs in the same directory,
// with the parent's rights or fewer; its history is its own (any client
// can attach to it), and the parent's says each child's start and end
// (subagent_update). A foreground task's call waits for the child's
// answer; a background one's answer reaches the parent's model as a
// notice, as a background process's end does.

// MaxRunningChildren bounds the sub-agents running in the daemon.
const MaxRunningChildren = 16

// child is one sub-agent of a session.
type child struct {
	s  *Session
	mu sync.Mutex
	// steps counts its tool calls; told is when its parent last heard
	// what it does (tellParent).
	steps int
	told  time.Time
	info  protocol.SubagentInfo
	// answer is the last turn's answer; done is closed when the turn
	// running ends (replaced by each turn task_send starts).
	answer string
	done   chan struct{}
	job    *job // the turn running (or about to)
}

// cancel cancels the child's turn: the one running, or the one about to
// start (it then ends at once, cancelled).
func (c *child) cancel() {
	c.mu.Lock()
	j := c.job
	c.mu.Unlock()
	if j == nil {
		return
	}
	if c.s.t.withdraw(j) {
		c.s.neverRan(j, protocol.InputCancelled, "") // still queued: answered here
		c.s.queueChanged()
	}
}

func (c *child) status() tool.TaskStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return tool.TaskStatus{SubagentInfo: c.info, Answer: c.answer}
}

// liveParent is the session's parent while it is live.
func (s *Session) liveParent() *Session { return s.parent.Load() }

// taskHost is the session's tool.Tasks, nil where it may start none
// (its depth is [subagents] max_depth).
func (s *Session) taskHost() tool.Tasks {
	s.mu.Lock()
	depth := s.lineage.Depth
	s.mu.Unlock()
	if depth >= s.m.conf().cfg.Subagents.MaxDepth {
		return nil
	}
	return taskHost{s}
}

type taskHost struct{ s *Session }

// Agents are the config's agents with a description, then the
// project's (its agent files), by name.
func (h taskHost) Agents() []tool.TaskAgent {
	cfg := h.s.m.conf().cfg
	var out []tool.TaskAgent
	for _, alias := range cfg.AgentAliases() {
		out = append(out, tool.TaskAgent{Name: alias, Description: cfg.Agents[alias].Description})
	}
	pas, _ := config.ProjectAgents(h.s.cwd)
	for _, pa := range pas {
		if _, dup := cfg.Agents[pa.Name]; !dup {
			out = append(out, tool.TaskAgent{Name: pa.Name, Description: pa.Agent.Description})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (h taskHost) Start(ctx context.Context, t tool.TaskStart) (tool.TaskStatus, error) {
	s := h.s
	m := s.m
	cfg := m.conf().cfg
	s.mu.Lock()
	for _, c := range s.children {
		if c.info.ToolCallID == t.ToolCallID && !c.info.Background {
			// The call a dead daemon cut, held for its child that goes
			// on (adopt): it waits for it again.
			s.mu.Unlock()
			return h.wait(ctx, c)
		}
	}
	if s.lineage.Depth >= cfg.Subagents.MaxDepth {
		s.mu.Unlock()
		return tool.TaskStatus{}, fmt.Errorf("sub-agents nest at most %d deep ([subagents] max_depth): this session may start none", cfg.Subagents.MaxDepth)
	}
	// Counted and reserved at once: several task calls of one reply
	// start together.
	running := s.starting
	for _, c := range s.children {
		if c.status().State == protocol.SubagentRunning {
			running++
		}
	}
	if running >= cfg.Subagents.MaxConcurrent {
		s.mu.Unlock()
		return tool.TaskStatus{}, fmt.Errorf("this session already runs %d sub-agents, its limit ([subagents] max_concurrent): wait for one (task_status) or cancel one (task_cancel)", running)
	}
	s.starting++
	s.mu.Unlock()
	started := func() {
		s.mu.Lock()
		s.starting--
		s.mu.Unlock()
	}
	if m.runningChildren.Add(1) > MaxRunningChildren {
		m.runningChildren.Add(-1)
		started()
		return tool.TaskStatus{}, fmt.Errorf("the daemon already runs %d sub-agents, its limit", MaxRunningChildren)
	}
	alias := cmp.Or(t.Agent, s.alias)
	c, err := m.startChild(s, alias, t)
	started()
	if err != nil {
		m.runningChildren.Add(-1)
		return tool.TaskStatus{}, err
	}
	if t.Background {
		return c.status(), nil
	}
	return h.wait(ctx, c)
}

// wait waits for c's turn to end; ctx's end (the parent's turn
// cancelled) cancels it.
func (h taskHost) wait(ctx context.Context, c *child) (tool.TaskStatus, error) {
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

func (h taskHost) child(id string) (*child, error) {
	h.s.mu.Lock()
	c := h.s.children[id]
	h.s.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("no sub-agent %q of this session", id)
	}
	return c, nil
}

func (h taskHost) Status(id string) (tool.TaskStatus, error) {
	c, err := h.child(id)
	if err != nil {
		return tool.TaskStatus{}, err
	}
	return c.status(), nil
}

func (h taskHost) Send(ctx context.Context, id, prompt string) (tool.TaskStatus, error) {
	c, err := h.child(id)
	if err != nil {
		return tool.TaskStatus{}, err
	}
	// The gate: a child never takes work wider than its parent's mode
	// now (a mode switched since it started binds it too).
	if v := h.s.m.Decide(gate.Request{Actor: h.s.actor(), Mode: h.s.riskNow(), Action: gate.Action{Kind: gate.TaskMessage, Name: "task_send", ChildMode: c.s.riskNow()}}); v.Decision == gate.Deny {
		return tool.TaskStatus{}, errors.New(v.Why)
	}
	if c.status().State == protocol.SubagentRunning {
		if turn, _ := c.s.t.steer(steer{text: prompt}, ""); turn != "" {
			return c.status(), nil // it reads it at its next model call
		}
	}
	if h.s.m.runningChildren.Add(1) > MaxRunningChildren {
		h.s.m.runningChildren.Add(-1)
		return tool.TaskStatus{}, fmt.Errorf("the daemon already runs %d sub-agents, its limit", MaxRunningChildren)
	}
	if err := h.s.m.runChild(h.s, c, prompt); err != nil {
		h.s.m.runningChildren.Add(-1)
		return tool.TaskStatus{}, err
	}
	return h.wait(ctx, c)
}

func (h taskHost) Cancel(id string) (tool.TaskStatus, error) {
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

// startChild makes parent's child session for t (agent alias) and runs
// t's prompt in it.
func (m *Manager) startChild(parent *Session, alias string, t tool.TaskStart) (*child, error) {
	parent.mu.Lock()
	lin := protocol.Lineage{ParentSessionID: parent.id, ParentToolCallID: t.ToolCallID, Depth: parent.lineage.Depth + 1}
	sbMode, noNet := parent.sbMode, parent.noNetwork
	parentRisk := cmp.Or(parent.risk, parent.agent.Risk)
	parent.mu.Unlock()
	id := protocol.NewID("ses_", 8)
	s, err := m.newSession(id, alias, parent.mode, parent.cwd, parent.owner)
	if err != nil {
		var pe *protocol.ParamsError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("agent %q: %s", alias, pe.Reason)
		}
		return nil, err
	}
	// Never more rights than the parent: the narrower risk, the
	// parent's sandbox.
	s.risk = gate.Narrower(parentRisk, s.agent.Risk)
	s.sbMode, s.noNetwork = sbMode, noNet
	s.lineage, s.description = lin, t.Description
	s.parent.Store(parent)
	rec := &store.Session{ID: id, AgentAlias: alias, Mode: parent.mode, Cwd: parent.cwd, Owner: parent.owner, Title: t.Description,
		Risk: s.risk, Sandbox: sbMode, NoNetwork: noNet, ParentID: lin.ParentSessionID, ParentToolCallID: lin.ParentToolCallID, Depth: lin.Depth, Description: t.Description}
	if err := m.store.CreateSession(rec); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if parent.t.shutting() || m.live[parent.id] != parent {
		m.mu.Unlock()
		return nil, errors.New("the session is closing: no sub-agent starts")
	}
	m.live[id] = s
	m.mu.Unlock()
	m.changed(id)
	c := &child{s: s, info: protocol.SubagentInfo{SessionID: id, ToolCallID: t.ToolCallID, Description: t.Description, Agent: alias, Background: t.Background}}
	parent.mu.Lock()
	if parent.children == nil {
		parent.children = map[string]*child{}
	}
	parent.children[id] = c
	parent.mu.Unlock()
	m.log.Info("sub-agent started", "sessionId", id, "parentSessionId", parent.id, "agent", alias, "background", t.Background)
	if err := m.runChild(parent, c, t.Prompt); err != nil {
		return nil, err
	}
	return c, nil
}

// runChild runs prompt as a turn of c; its end is told to the parent
// (subagent_update, and to its model when c runs in the background).
func (m *Manager) runChild(parent *Session, c *child, prompt string) error {
	j := &job{id: protocol.NewID("q_", 6), prompt: prompt, queued: time.Now(), done: make(chan protocol.SessionPromptResult, 1)}
	done := make(chan struct{})
	c.mu.Lock()
	c.info.State, c.info.Summary, c.answer, c.done, c.job = protocol.SubagentRunning, "", "", done, j
	info := c.info
	c.mu.Unlock()
	// Said before the child's turn can start: what it does (its
	// tool_progress in the parent) comes after it.
	parent.emit(protocol.SubagentUpdateEvent{Subagent: info})
	if err := c.s.enqueue(j); err != nil {
		c.mu.Lock()
		c.info.State, c.info.Summary = protocol.SubagentFailed, err.Error()
		info := c.info
		c.mu.Unlock()
		parent.emit(protocol.SubagentUpdateEvent{Subagent: info})
		close(done)
		return err
	}
	go m.watchChild(parent, c, j, done)
	return nil
}

// watchChild waits for the end of c's turn j, keeps its answer and tells
// parent (subagent_update; a notice to its model when c runs in the
// background), then closes done.
func (m *Manager) watchChild(parent *Session, c *child, j *job, done chan struct{}) {
	res := <-j.done
	m.runningChildren.Add(-1)
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
	if u := c.s.spentUsage(); u != nil {
		c.info.Usage = u
	}
	info := c.info
	c.mu.Unlock()
	m.store.TaskEnded(c.s.id, info.State, info.Summary)
	parent.emit(protocol.SubagentUpdateEvent{Subagent: info})
	if info.Background {
		// What it changed after its call is the parent's next turn's
		// (as a background process's).
		parent.nmu.Lock()
		parent.procsEnded = true
		parent.nmu.Unlock()
		text := fmt.Sprintf("[sub-agent %s (%s) %s", info.SessionID, info.Description, info.State)
		if c.answer != "" {
			text += "; its answer:\n" + c.answer + "\n"
		} else if info.Summary != "" {
			text += ": " + info.Summary
		}
		parent.addNotice(notice{text: text + "]"})
	}
	close(done)
}

// adopt makes a child a dead daemon's turn cut its parent's again as the
// turn goes on (j): running, its end told as runChild's is. background:
// no task call waits for it (its end reaches the parent's model as a
// notice).
func (m *Manager) adopt(parent, s *Session, j *job, background bool) {
	m.runningChildren.Add(1)
	s.parent.Store(parent)
	done := make(chan struct{})
	c := &child{s: s, done: done, job: j, info: protocol.SubagentInfo{SessionID: s.id, ToolCallID: s.lineage.ParentToolCallID,
		Description: s.description, Agent: s.alias, Background: background, State: protocol.SubagentRunning}}
	parent.mu.Lock()
	if parent.children == nil {
		parent.children = map[string]*child{}
	}
	parent.children[s.id] = c
	parent.mu.Unlock()
	parent.emit(protocol.SubagentUpdateEvent{Subagent: c.info})
	m.log.Info("sub-agent goes on with its parent", "sessionId", s.id, "parentSessionId", parent.id, "background", background)
	go m.watchChild(parent, c, j, done)
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

// spentUsage is the session's usage as the wire says it (nil: none).
func (s *Session) spentUsage() *protocol.Usage {
	s.mu.Lock()
	u := s.spent
	s.mu.Unlock()
	return archive.WireUsage(u)
}

// chargeUp adds a child's usage to each ancestor's (their session
// usage; the day's is the child's own charge).
func (s *Session) chargeUp(su store.Usage) {
	for p := s.liveParent(); p != nil; p = p.liveParent() {
		p.mu.Lock()
		add(&p.spent, su)
		p.mu.Unlock()
		p.m.store.ChargeSession(p.id, su, nil)
	}
}

// rootSpent is what the session's top ancestor has spent (its own and
// all its descendants'): a session budget bounds the whole tree.
func (s *Session) rootSpent() float64 {
	r := s
	for p := s.liveParent(); p != nil; p = p.liveParent() {
		r = p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spent.CostUSD
}

// stopChildren cancels the running turns of the session's children
// (its close or delete) and forgets them.
func (s *Session) stopChildren() []*Session {
	s.mu.Lock()
	var kids []*child
	for _, c := range s.children {
		kids = append(kids, c)
	}
	s.mu.Unlock()
	var out []*Session
	for _, c := range kids {
		c.s.parent.Store(nil)
		c.cancel()
		out = append(out, c.s)
	}
	return out
}

// childInfos are the session's children as session/get says them.
func (s *Session) childInfos() []protocol.SubagentInfo {
	s.mu.Lock()
	var cs []*child
	for _, c := range s.children {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	var out []protocol.SubagentInfo
	for _, c := range cs {
		out = append(out, c.status().SubagentInfo)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	return out
}

// projectAgent finds an agent a project file defines, on the default
// agent's provider and settings.
func projectAgent(cfg *config.Config, cwd, alias string) (config.Agent, bool) {
	pas, _ := config.ProjectAgents(cwd)
	for _, pa := range pas {
		if pa.Name != alias {
			continue
		}
		a := cfg.Agents["default"]
		a.Description, a.SystemPrompt = pa.Agent.Description, pa.Agent.SystemPrompt
		if pa.Agent.Model != "" {
			a.Model = pa.Agent.Model
		}
		if pa.Agent.Tools != nil {
			a.Tools = pa.Agent.Tools
		}
		return a, true
	}
	return config.Agent{}, false
}

// reportInterruptedChildren says, as a session is loaded, which of its
// children a dying daemon cut (foreground or background), once per cut:
// never a task that silently vanished (a foreground task call itself
// gets its "interrupted" result when the transcript is repaired).
func (s *Session) reportInterruptedChildren(ctx context.Context) {
	kids, err := s.m.store.ListChildren(ctx, s.id)
	if err != nil {
		return
	}
	for _, k := range kids {
		if k.State != store.StateInterrupted || k.InterruptTold {
			continue
		}
		if s.m.conf().cfg.Daemon.ContinueInterrupted {
			if open, _ := s.m.store.OpenInputs(ctx, k.ID); len(open) > 0 {
				continue // its cut turn goes on (ContinueInterrupted)
			}
		}
		s.m.store.InterruptTold(k.ID)
		s.emit(protocol.SubagentUpdateEvent{Subagent: protocol.SubagentInfo{SessionID: k.ID, ToolCallID: k.ParentToolCallID,
			Description: k.Description, Agent: k.AgentAlias, State: protocol.SubagentInterrupted, Summary: "the daemon stopped while it ran"}})
	}
}

// tellParent says, as a child works, what it does now: a tool_progress
// of its parent's task call (chat shows it as the child's live line, the
// dashboard in the call's card, ACP as the call's content while the call
// runs), at most five a second. A background child's progress goes on
// after its task call answered, until its subagent_update says it ended.
func (s *Session) tellParent(e protocol.EventBody) {
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
	p := s.liveParent()
	if p == nil {
		return
	}
	p.mu.Lock()
	c := p.children[s.id]
	p.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	if _, call := e.(protocol.ToolCallEvent); call {
		c.steps++
	}
	now := time.Now()
	if c.info.State != protocol.SubagentRunning || c.info.ToolCallID == "" || now.Sub(c.told) < 200*time.Millisecond {
		c.mu.Unlock()
		return
	}
	c.told = now
	ev := protocol.ToolProgressEvent{ToolCallID: c.info.ToolCallID, Progress: float64(c.steps), Message: cut(what, 200)}
	c.mu.Unlock()
	p.emit(ev)
}
