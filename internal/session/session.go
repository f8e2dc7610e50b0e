package session

import (
	"context"
	"github.com/zeroclaw/zeroclaw/internal/checkpoint"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Session is one live session: its transcript, its prompt queue, the
// clients attached to it, and its event stream. Every event gets the next
// seq and is persisted; only once its own write has committed is it
// delivered to the attached clients, so what a client sees is on disk. A
// write that fails ends the turn with the cause, and the session goes on
// from what is stored: no seq a client saw is ever used again.
//
// Its ideas live in files of their own: the event log (eventlog.go), the
// prompt queue and turns (queue.go), approvals (approvals.go), the
// agent's host (host.go), the agent it runs (agents.go, build.go),
// resuming a stored one (resume.go); the registry of live sessions is the
// Manager (manager.go), the stored ones are read in stored.go, and the
// list's watchers are in watch.go.
//
// Lock order. A goroutine that holds more than one of these takes them in
// this order, and never the other way:
//
//	Manager.mu → emitMu → mu → subMu → Client.mu
//	             emitMu → cmu → subMu
//
// emitMu orders seq assignment with the store's queue (emit, Record,
// fence, mend); mu guards the transcript, the queue and the approvals;
// cmu guards the failure and the "something changed" signal; subMu
// guards the attached clients and the recent events; a Client's mu is
// taken last (subscribe, under subMu). mu and cmu are never held
// together. None is held while waiting on a client or a provider; emitMu
// is held around the store's enqueue, which waits only while the store's
// queue is full (the disk's pace), never for a commit.
type Session struct {
	m        *Manager
	id       string
	quotedID []byte
	alias    string
	mode     string
	// instructions are the project instruction files in the agent's
	// system prompt.
	instructions []string
	cwd          string
	project      string // where the session's stored answers hold (permission.ProjectDir)
	owner        string
	agent        *agent.Agent
	agentGen     uint64 // the config generation agent was built from

	emitMu   sync.Mutex // orders seq assignment with the store queue
	qmu      sync.Mutex // one queue_update at a time
	seq      int64      // the last seq given out
	fenced   bool       // closed: nothing more may be written
	emitTurn string     // the turn whose events are emitted now ("": none)

	subMu     sync.Mutex
	clients   map[*Client]*sub
	delivered int64 // last seq committed and handed to the clients
	recent    ring  // committed events some client has not been written yet

	cmu     sync.Mutex
	failed  error         // the write failure that broke the session, until mended
	changed chan struct{} // closed (and replaced) when delivered or failed change

	mu        sync.Mutex
	mcp       *mcptools.Set // the session's own MCP servers (an editor's)
	model     string        // the session's own model and risk ("": the agent's)
	risk      string
	reasoning string // the session's own reasoning level ("": the agent's)
	// sbMode and noNetwork tighten the config's sandbox for this session.
	sbMode     string
	noNetwork  bool
	history    provider.Transcript
	spent      store.Usage       // what the session's model calls used and cost
	cp         *checkpoint.Store // its turns' checkpoints, once opened
	running    bool
	cancel     context.CancelCauseFunc
	current    *job // the prompt whose turn runs
	turnClient *Client
	pending    []*job
	approvals  map[string]*approval
	always     map[string]bool // tool -> allowed for the rest of the session
	never      map[string]bool // tool -> rejected for the rest of the session
	turnDone   chan struct{}   // closed when the running turn ends
	// turnID names the running turn ("" between turns); steers wait for
	// its next model call; steerClosed: it takes no more (it is ending).
	turnID      string
	steers      []steer
	steerClosed bool
	// waiters are the callers of queued prompts moved into the running
	// turn (session/queue/steer): they get its answer.
	waiters  []chan protocol.SessionPromptResult
	closing  bool
	lastUsed time.Time
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

// steer is text (and images) for the running turn, from a client.
type steer struct {
	text   string
	images []provider.Image
	client *Client
}

type job struct {
	id     string // q_<hex>: its place in the queue, for session/queue
	prompt string
	images []provider.Image
	// resources are MCP resources to read into the prompt when its turn
	// starts (never before it is queued: the queue takes prompts at once).
	resources []protocol.ResourceRef
	client    *Client
	queued    time.Time
	done      chan protocol.SessionPromptResult
	// withdrawn: its caller gave up on it (a cancelled request): its
	// turn is cancelled as soon as it runs; s.mu guards it.
	withdrawn bool
}

type approval struct {
	tool string
	ch   chan answer
}

type answer struct {
	decision, reason string
	by               *Client // the client that answered (nil: the daemon)
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

func (s *Session) summary() protocol.SessionSummary {
	s.mu.Lock()
	state := store.StateIdle
	if s.running {
		state = store.StateRunning
	}
	s.mu.Unlock()
	s.subMu.Lock()
	n := len(s.clients)
	s.subMu.Unlock()
	return protocol.SessionSummary{SessionID: s.id, AgentAlias: s.alias, Mode: s.mode, State: state, Clients: n}
}

func (s *Session) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.running
}

func (s *Session) touch() {
	s.mu.Lock()
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// unloadable reports whether the session may be unloaded to make room:
// no turn, nothing queued, no client attached.
func (s *Session) unloadable() bool {
	s.subMu.Lock()
	n := len(s.clients)
	s.subMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return n == 0 && !s.running && !s.closing
}

// drain starts closing the session: no prompt is queued any more, and
// the queue is answered, not kept: each caller hears cancelled, and the
// history says the queue emptied.
func (s *Session) drain() {
	s.mu.Lock()
	s.closing = true
	queued := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, j := range queued {
		j.done <- protocol.SessionPromptResult{SessionID: s.id, StopReason: agent.StopCancelled}
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
// so the id may be loaded again.
func (s *Session) close() {
	s.drain()
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel(nil)
	}
	done := s.turnDone
	running := s.running
	s.mu.Unlock()
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
	s.fence()
	s.mu.Lock()
	own := s.mcp
	s.mcp = nil
	s.mu.Unlock()
	if own != nil {
		own.Close()
	}
	s.m.store.Sync()
}
