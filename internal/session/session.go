package session

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/answers"
	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/eventlog"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
	"github.com/zeroclaw/zeroclaw/internal/turnslot"
)

// Session is one live session: its transcript, its prompt queue, the
// clients attached to it, and its event stream. Every event gets the next
// seq and is persisted; only once its own write has committed is it
// delivered to the attached clients, so what a client sees is on disk. A
// write that fails ends the turn with the cause, and the session goes on
// from what is stored: no seq a client saw is ever used again.
//
// Its ideas live in files of their own: the event log (internal/eventlog,
// driven from eventlog.go), the prompt queue and turns (queue.go),
// approvals (approvals.go), the agent's host (host.go), the agent it
// runs (agents.go; the kit in force, internal/agentkit, builds it),
// resuming a stored one (resume.go); the registry of live sessions is
// the Manager (manager.go), the stored ones are read through
// internal/archive, the list's watchers are internal/sessionlist (the
// Manager's list; Watch in watch.go), and the day's spend is
// internal/spend (the Manager's ledger; Charge and the budgets in
// spend.go).
//
// Lock order. Every mutex of the package, of the session's event log
// (internal/eventlog), of its turn slot (internal/turnslot), of the
// day's spend (internal/spend) and of the list's followers
// (internal/sessionlist), in the one order a goroutine that holds more
// than one takes them (never the other way):
//
//	Session.setMu → Manager.mu → Session.qmu → Log.emitMu → Ledger.mu →
//	Session.mu → Log.cmu → Log.subMu → Slot.mu → Client.mu → List.mu →
//	agentkit.Kit.mu
//
// setMu makes one change of the session's settings at a time (Configure,
// SetMode), held until it is told (config_update); it is taken with no
// other lock held, and it is the one lock of a session held while
// another session's is taken: what the change is told to be reads its
// ancestors' sandboxes, child to root, one mu at a time (nobody waits
// for a setMu holding a lock). Manager.mu guards the live, closing and
// opening ids (a session is built outside it, then inserted); qmu makes
// one queue_update at a time, and a queued input's place in the queue
// and its queued row one step (enqueue); emitMu, cmu and subMu are the event log's
// (eventlog.Log, s.events): emitMu orders seq assignment with the store's queue (emit, fence,
// mend, and Record and Charge through Log.InOrder), cmu guards the
// failure and the "something changed" signal, subMu the attached
// clients' subscriptions and the recent events; Ledger.mu
// (spend.Ledger, the Manager's spend) the day's spend, the store's
// charge queued under it; mu the session's settings and its transcript;
// Slot.mu (turnslot.Slot, the session's t) the turn slot, the queue,
// the running turn and its approvals; a Client's mu its subscriptions;
// List.mu (sessionlist.List, the Manager's list) the list's followers
// and the changes not yet told them; the kit's mu (internal/agentkit) its
// providers; nothing is taken while either of the last two is held.
// kmu, imu, nmu and the held answers' lock (internal/answers) are
// taken alone, never with another.
//
// Across sessions: no lock of one session is held while a lock of
// another is taken, except setMu (above). The tree's walks (a child's
// cost charged to its ancestors, its approval shown in them, the budget
// of the whole tree) take each ancestor's lock in turn, child to root,
// one at a time.
//
// The participants' locks (internal/goals: a goal's box.mu;
// internal/subagents: a parent's family.mu, then a child's mu;
// internal/rewind: a session's checkpoint box.mu, under which no other
// is taken) come before all of these: a participant is called with none
// of the session's locks held, and may emit or queue a turn while it
// holds its own; it never takes its own while holding a session's, nor
// one session's participant lock while holding another's (the
// sub-agents read a child's status under its parent's family lock, and
// that is the one nesting). None is held while waiting on a client, a
// provider or a tool; emitMu is held around the store's enqueue, which
// waits only while the store's queue is full (the disk's pace), never
// for a commit. TestLockOrderUnderStress runs every operation that
// takes two of them at once, concurrently, under the race detector, and
// TestLockOrderUnderStressWithEveryFeature the same with the real
// participants joined (goals, sub-agents, plan, checkpoints, hooks) and their
// operations too.
type Session struct {
	m     *Manager
	id    string
	alias string
	mode  string
	// instructions are the project instruction files in the agent's
	// system prompt.
	instructions []string
	cwd          string
	project      string // where the session's stored answers hold (permission.ProjectDir)
	owner        string
	agent        *agent.Agent
	agentGen     uint64 // the config generation agent was built from

	qmu sync.Mutex // one queue_update at a time; a queued input's place and its row taken together
	// setMu makes one change of the session's settings at a time, each
	// told (config_update) before the next is made (settings.go).
	setMu sync.Mutex

	// events is the session's event log (internal/eventlog): its seqs,
	// its writes, its failure, the attached clients' subscriptions.
	events *eventlog.Log

	// t owns the turn slot, the queue, the running turn and its
	// approvals (internal/turnslot).
	t turns

	// parent is the live parent of a session a task started (nil once
	// it is gone; tree.go); read on every event (Emitted): no lock.
	parent atomic.Pointer[Session]
	// tools are the names of the tools its model was last offered (what
	// its children may have at most: grant); read by its children's
	// calls.
	tools atomic.Pointer[map[string]bool]
	// resumed is how many times the running turn was continued (its
	// attempt - 1; 0 between turns).
	resumed atomic.Int32

	// kmu guards kept: what participants keep with the session (Keep),
	// by their key; taken alone.
	kmu  sync.Mutex
	kept map[any]any
	// imu guards inputs (the named inputs still queued or running, by
	// clientMessageId) and their fields; taken alone.
	imu    sync.Mutex
	inputs map[string]*input
	// nmu guards procsEnded and notices (never held with another lock:
	// a process's end is told at once, whatever else holds mu).
	nmu sync.Mutex
	// procsEnded: one of them ended since the last turn began.
	procsEnded bool
	notices    []notice // for the model's next call (Notices)

	// mu guards the rest, and only the rest: the session's settings
	// (model, risk, reasoning, sandbox), its tree (lineage,
	// description), its transcript (history, unloaded, storedMessages,
	// cutCalls, asked, started, unrun, held), what it spent, and what it opened on
	// first use (mcp, procs).
	mu    sync.Mutex
	mcp   *mcptools.Set     // the session's own MCP servers (an editor's)
	procs *background.Table // its background processes, once one started
	// The tree (tree.go): the lineage of a session a task started.
	lineage     protocol.Lineage
	description string
	// cutCalls are the tool calls the transcript's repair answered
	// interrupted (a continued turn's clients are told).
	cutCalls []provider.ToolCall
	// asked are the calls a cut turn left waiting for an approval (by
	// tool call id), set before its transcript is loaded: the repair
	// leaves them open (held) for the continuation to ask again.
	asked map[string]bool
	// started are the calls the cut turn had started (by tool call id;
	// nil: not known), set with asked: the repair answers a call of the
	// cut reply that had not started "not run" (unrun), not interrupted.
	started   map[string]bool
	unrun     []provider.ToolCall
	held      []provider.ToolCall
	model     string // the session's own model and risk ("": the agent's)
	risk      string
	reasoning string // the session's own reasoning level ("": the agent's)
	// sbMode and noNetwork tighten the config's sandbox for this session.
	sbMode    string
	noNetwork bool
	history   provider.Transcript
	spent     store.Usage // what the session's model calls used and cost
	// answers are the "always" answers for the rest of the session
	// (internal/answers; their own lock, taken alone).
	answers answers.Held
	// unloaded: a resumed session whose transcript is still only in the
	// store (storedMessages long); load reads it before the first turn.
	unloaded       bool
	storedMessages int64
}

// messageCount is the transcript's length, loaded or not.
func (s *Session) messageCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unloaded {
		return s.storedMessages
	}
	return int64(len(s.history.Messages))
}

// job is a prompt for a turn of its own, as the turn slot queues it
// (a turnslot.Job: face_turnslot.go).
type job struct {
	// slot is the turn slot's part of it: its place in the queue, and
	// whether its caller gave it up (internal/turnslot).
	slot   turnslot.Ticket
	prompt string
	images []provider.Image
	// resources are MCP resources to read into the prompt when its turn
	// starts (never before it is queued: the queue takes prompts at once).
	resources []protocol.ResourceRef
	client    *Client
	done      chan protocol.SessionPromptResult
	// in is the input it is (its id, its clientMessageId).
	in *input
	// cont, when set: the turn a daemon's end cut, to go on (its id,
	// this run's attempt).
	cont *Cut
	// noAsk: its turn asks no approval; what would ask is refused (a
	// scheduled run with approve: rules).
	noAsk bool
	// listed is closed once the job was said queued (or ran at once):
	// what takes it from the queue waits for it (enqueue).
	listed chan struct{}
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

func (s *Session) summary() protocol.SessionSummary {
	state := store.StateIdle
	if !s.t.Idle() {
		state = store.StateRunning
	}
	n := s.events.Attached()
	return protocol.SessionSummary{SessionID: s.id, AgentAlias: s.alias, Mode: s.mode, State: state, Clients: n}
}

// idle: no turn runs, none is queued, and no background process runs
// (a session is not closed to make room while its dev server runs).
func (s *Session) idle() bool { return s.t.Idle() && !s.runsProcesses() }

// runsProcesses says whether a background process of the session runs.
func (s *Session) runsProcesses() bool {
	s.mu.Lock()
	t := s.procs
	s.mu.Unlock()
	return t != nil && t.Running() > 0
}

func (s *Session) touch() { s.t.Touch() }

// unloadable reports whether the session may be unloaded to make room:
// no turn, nothing queued, no client attached.
func (s *Session) unloadable() bool {
	n := s.events.Attached()
	// A live parent's child stays (its parent drives it).
	return n == 0 && s.idle() && !s.t.Shutting() && s.Parent() == nil
}

// drain starts closing the session: no prompt is queued any more, and
// the queue is answered, not kept: each caller hears cancelled, and the
// history says the queue emptied.
func (s *Session) drain() {
	queued := s.t.Drain()
	for _, j := range queued {
		s.neverRan(j, protocol.InputDiscarded, "the session closed")
	}
	if len(queued) > 0 {
		s.queueChanged()
	}
}

// closeWait bounds how long closing a session waits for its turn to end
// before fencing it off anyway.
var closeWait = tool.KillGrace + 3*time.Second

// close ends the session: it cancels the running turn and the queue,
// detaches every client, waits (bounded) for the turn to end, then fences
// off every later write and waits for the writes already queued. When it
// returns, nothing of this session object can reach the store any more,
// so the id may be loaded again. With keep, its background processes
// that still run are left running (the manager keeps them for the
// session's next load); else they end.
func (s *Session) close(keep bool) {
	// What the participants hold of it ends with it (its children's
	// turns).
	for _, p := range s.m.participants() {
		p.Closing(s)
	}
	s.drain()
	s.t.CancelTurn(nil)
	running, done := s.t.State()
	s.detachAll()
	if running && done != nil {
		t := time.NewTimer(closeWait)
		select {
		case <-done:
		case <-t.C:
			s.m.log.Warn("turn did not end after close; its later writes are dropped", "sessionId", s.id)
		}
		t.Stop()
	}
	s.events.Fence()
	s.mu.Lock()
	own, procs := s.mcp, s.procs
	s.mcp = nil
	s.mu.Unlock()
	if own != nil {
		own.Close()
	}
	switch {
	case procs != nil && keep && procs.Running() > 0:
		procs.Detach()
		s.m.mu.Lock()
		if s.m.kept == nil {
			s.m.kept = map[string]*background.Table{}
		}
		s.m.kept[s.id] = procs
		s.m.mu.Unlock()
	case procs != nil:
		// Its background processes end with it: TERM, then KILL after
		// the shell tool's grace.
		procs.Close(syscall.SIGTERM, tool.KillGrace)
	}
	s.m.store.Sync()
}
