package session

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
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
	owner        string
	agent        *agent.Agent
	agentGen     uint64 // the config generation agent was built from

	emitMu sync.Mutex // orders seq assignment with the store queue
	seq    int64      // the last seq given out
	fenced bool       // closed: nothing more may be written

	subMu     sync.Mutex
	clients   map[*Client]*sub
	delivered int64 // last seq committed and handed to the clients
	recent    ring  // committed events some client has not been written yet

	cmu     sync.Mutex
	failed  error         // the write failure that broke the session, until mended
	changed chan struct{} // closed (and replaced) when delivered or failed change

	mu         sync.Mutex
	mcp        *mcptools.Set // the session's own MCP servers (an editor's)
	model      string        // the session's own model and risk ("": the agent's)
	risk       string
	history    provider.Transcript
	running    bool
	cancel     context.CancelCauseFunc
	turnClient *Client
	pending    []*job
	approvals  map[string]*approval
	always     map[string]bool // tool -> allowed for the rest of the session
	never      map[string]bool // tool -> rejected for the rest of the session
	turnDone   chan struct{}   // closed when the running turn ends
	closing    bool
	lastUsed   time.Time
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

type job struct {
	prompt string
	images []provider.Image
	client *Client
	done   chan protocol.SessionPromptResult
}

type approval struct {
	tool string
	ch   chan answer
}

type answer struct{ decision, reason string }

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

// emit records one event; fields is its JSON object beyond the common
// members. It returns the event's seq, or 0 when nothing can be written
// (the session is closed or its writes failed).
func (s *Session) emit(typ string, fields []byte) int64 {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	if s.fenced || s.failure() != nil {
		return 0
	}
	s.seq++
	seq := s.seq
	body := encodeEvent(s.quotedID, seq, typ, fields)
	s.m.store.AppendEvent(s.id, store.Event{Seq: seq, Type: typ, Body: body}, func(err error) {
		if err != nil {
			s.fail(err)
			return
		}
		s.deliver(seq, body)
	})
	return seq
}

// deliver runs on the store's writer, in commit order: the event joins
// the recent ones and every attached client's subscription is queued on
// its connection (once: a queued one just gets further).
func (s *Session) deliver(seq int64, body []byte) {
	s.subMu.Lock()
	s.delivered = seq
	low := seq
	for _, sb := range s.clients {
		low = min(low, sb.written.Load())
	}
	if seq > low { // else every client has it already
		s.recent.push(seq, body)
	}
	s.recent.trim(low)
	for c, sb := range s.clients {
		if !sb.queued {
			sb.queued = true
			if c.conn.Push(sb) != nil {
				sb.queued = false
			}
		}
	}
	s.subMu.Unlock()
	s.cmu.Lock()
	s.signalLocked()
	s.cmu.Unlock()
}

func (s *Session) signalLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// fail records the first write failure of the session and cancels its
// turn with it as the cause.
func (s *Session) fail(err error) {
	s.cmu.Lock()
	first := s.failed == nil
	if first {
		s.failed = err
	}
	s.signalLocked()
	s.cmu.Unlock()
	if first {
		s.m.log.Error("session write failed: its turn ends", "sessionId", s.id, "err", err)
		s.mu.Lock()
		if s.cancel != nil {
			s.cancel(err)
		}
		s.mu.Unlock()
	}
}

func (s *Session) failure() error {
	s.cmu.Lock()
	defer s.cmu.Unlock()
	return s.failed
}

// committed waits until seq has been delivered, or the session's writes
// failed (that error), or ctx ends.
func (s *Session) committed(ctx context.Context, seq int64) error {
	for {
		s.cmu.Lock()
		if s.failed != nil {
			err := s.failed
			s.cmu.Unlock()
			return err
		}
		s.subMu.Lock()
		done := s.delivered >= seq
		s.subMu.Unlock()
		if done {
			s.cmu.Unlock()
			return nil
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.cmu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// mend makes a session whose writes failed writable again, from what the
// store holds: the seq counter goes back to the last committed event (no
// later one was ever delivered) and the transcript to the stored one.
func (s *Session) mend() error {
	if s.failure() == nil {
		return nil
	}
	last, msgs, err := s.m.store.Resume(s.id)
	if err != nil {
		return err
	}
	s.emitMu.Lock()
	s.seq = last
	s.emitMu.Unlock()
	s.mu.Lock()
	s.history.Truncate(int(msgs))
	s.mu.Unlock()
	s.cmu.Lock()
	s.failed = nil
	s.signalLocked()
	s.cmu.Unlock()
	if err := s.repairStored(); err != nil {
		s.fail(err)
		return err
	}
	s.m.log.Info("session writable again", "sessionId", s.id, "lastSeq", last)
	return nil
}

// fence stops every later write of the session: a turn that outlives its
// session's close (a tool that ignores cancellation) writes nothing.
func (s *Session) fence() {
	s.emitMu.Lock()
	s.fenced = true
	s.emitMu.Unlock()
}

// written is the error callback of writes whose failure breaks the session.
func (s *Session) written(err error) {
	if err != nil {
		s.fail(err)
	}
}

// attach adds c; it returns the last seq delivered before c joined, so
// c gets every later event live and the earlier ones from history.
func (s *Session) attach(c *Client) (int64, bool) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if sb, ok := s.clients[c]; ok {
		return sb.written.Load(), true
	}
	sb := c.subscribe(s, s.delivered)
	if sb == nil {
		return 0, false
	}
	s.clients[c] = sb
	s.touch()
	return s.delivered, true
}

func (s *Session) detach(c *Client) {
	s.subMu.Lock()
	if sb := s.clients[c]; sb != nil {
		sb.detached = true
	}
	delete(s.clients, c)
	s.subMu.Unlock()
	s.touch()
}

func (s *Session) detachAll() {
	s.subMu.Lock()
	cs := s.clients
	s.clients = map[*Client]*sub{}
	for _, sb := range cs {
		sb.detached = true
	}
	s.recent = ring{}
	s.subMu.Unlock()
	for c := range cs {
		c.unsubscribe(s)
	}
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

// fromMemory appends the frames of the recent events from seq up to
// target (stopping at max bytes of buf) and records each as written; it
// returns how many it appended: 0 when seq is no longer in memory.
func (s *Session) fromMemory(buf []byte, seq, target int64, max, limit int, written *atomic.Int64) ([]byte, int) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	n := 0
	for ; seq <= target; seq++ {
		body, ok := s.recent.get(seq)
		if !ok {
			break
		}
		buf = appendUpdate(buf, body, limit)
		written.Store(seq)
		n++
		if len(buf) >= max {
			break
		}
	}
	return buf, n
}

// enqueue queues a prompt; it fails when the queue is full or the session
// is closing.
func (s *Session) enqueue(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return ErrNotFound
	}
	s.lastUsed = time.Now()
	if !s.running {
		s.running = true
		s.turnDone = make(chan struct{})
		go s.run(j)
		return nil
	}
	if len(s.pending) >= s.m.conf().cfg.Daemon.PromptQueue {
		return fmt.Errorf("%w: %d prompts already queued", ErrBusy, len(s.pending))
	}
	s.pending = append(s.pending, j)
	return nil
}

// run runs j and then every queued prompt, one turn at a time.
func (s *Session) run(j *job) {
	for j != nil {
		j.done <- s.turn(j)
		s.mu.Lock()
		close(s.turnDone)
		if len(s.pending) == 0 || s.closing {
			for _, p := range s.pending {
				p.done <- protocol.SessionPromptResult{SessionID: s.id, StopReason: agent.StopCancelled}
			}
			s.pending = nil
			s.running = false
			s.lastUsed = time.Now()
			j = nil
		} else {
			j = s.pending[0]
			s.pending = s.pending[1:]
			s.turnDone = make(chan struct{})
		}
		s.mu.Unlock()
	}
	// The list shows a live session's state from memory: idle only now.
	s.m.changed(s.id)
}

// turn runs one prompt. The prompting client is answered only after the
// turn's turn_complete is committed and queued on its connection, ahead
// of the answer: the same road, so the order holds.
func (s *Session) turn(j *job) protocol.SessionPromptResult {
	ctx, cancel := context.WithCancelCause(s.m.ctx)
	defer cancel(nil)
	res := protocol.SessionPromptResult{SessionID: s.id, Usage: &protocol.Usage{}}
	if err := s.mend(); err != nil {
		// Still not writable (the disk is still full): nothing can run.
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
		return res
	}
	if err := s.load(ctx); err != nil {
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
		return res
	}
	s.mu.Lock()
	s.cancel, s.turnClient = cancel, j.client
	fresh := len(s.history.Messages) == 0
	s.mu.Unlock()
	s.m.store.SetState(s.id, store.StateRunning, s.m.changedAfter(s.id, s.written))
	if fresh {
		s.m.store.AutoTitle(s.id, title(j.prompt), s.m.changedAfter(s.id, s.written))
	}

	s.emit(protocol.EventUserMessage, textFields(j.prompt))
	out := s.turnAgent().Run(ctx, s, s.cwd, j.prompt, j.images...)

	res.StopReason, res.Content = out.StopReason, out.Content
	res.Usage = &protocol.Usage{InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens}
	if err := s.failure(); err != nil {
		// A write failed: the turn ends with that cause, whatever the
		// agent made of its cancelled context.
		out.StopReason, out.Err = agent.StopError, err
		res.StopReason = agent.StopError
	}
	outcome := protocol.OutcomeCompleted
	switch out.StopReason {
	case agent.StopCancelled:
		outcome = protocol.OutcomeCancelled
	case agent.StopError:
		outcome = protocol.OutcomeFailed
		res.Error = &protocol.ErrorInfo{Message: out.Err.Error()}
	}
	s.mu.Lock()
	s.cancel, s.turnClient = nil, nil
	s.mu.Unlock()
	// After a failed write, write what comes next (turn_complete, the
	// idle state) if the store takes writes again.
	if err := s.mend(); err != nil {
		return res
	}
	last := s.emit(protocol.EventTurnComplete, mustJSON(protocol.TurnCompleteEvent{Outcome: outcome, StopReason: out.StopReason, Content: out.Content, Error: res.Error}))
	s.m.store.SetState(s.id, store.StateIdle, s.m.changedAfter(s.id, s.written))
	if err := s.committed(context.Background(), last); err != nil && res.Error == nil {
		res.StopReason, res.Error = agent.StopError, &protocol.ErrorInfo{Message: err.Error()}
	}
	return res
}

// mdLink is a Markdown link or image; title keeps its text.
var mdLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// cancelTurn cancels the running turn, if any.
func (s *Session) cancelTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	s.cancel(nil)
	return true
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
	s.mu.Lock()
	s.closing = true
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

// approve answers a pending approval; false when it is unknown or
// already answered.
func (s *Session) approve(requestID, decision, reason string) bool {
	s.mu.Lock()
	a, ok := s.approvals[requestID]
	delete(s.approvals, requestID)
	s.mu.Unlock()
	if ok {
		a.ch <- answer{decision, reason}
	}
	return ok
}

// Emit implements agent.Host.
func (s *Session) Emit(e agent.Event) {
	switch e := e.(type) {
	case agent.MessageChunk:
		s.emit(protocol.EventAgentMessageChunk, textFields(e.Text))
	case agent.ThoughtChunk:
		s.emit(protocol.EventAgentThoughtChunk, textFields(e.Text))
	case agent.ToolCall:
		s.emit(protocol.EventToolCall, mustJSON(protocol.ToolCallEvent{ToolCallID: e.ID, Name: e.Name, Title: e.Title, Kind: e.Kind,
			NeedsApproval: e.NeedsApproval, RawInput: e.Input}))
	case agent.ToolResult:
		s.emit(protocol.EventToolResult, mustJSON(protocol.ToolResultEvent{ToolCallID: e.ID, Name: e.Name, RawOutput: e.Output, IsError: e.IsError}))
	case agent.Plan:
		s.emit(protocol.EventPlan, mustJSON(planEvent(e.Entries)))
	case agent.HistoryTrimmed:
		s.emit(protocol.EventHistoryTrimmed, mustJSON(protocol.HistoryTrimmedEvent{DroppedMessages: e.DroppedMessages, KeptTurns: e.KeptTurns, Reason: e.Reason}))
	case agent.ContextUsage:
		s.emit(protocol.EventContextUsage, mustJSON(protocol.ContextUsageEvent{InputTokens: e.InputTokens, MaxContextTokens: e.MaxContextTokens}))
	}
}

// Record implements agent.Host: the transcript grows in place (appended
// to, never copied: only the turn's goroutine writes it) and the model is
// sent it as it is.
func (s *Session) Record(m provider.Message) provider.Transcript {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	s.history.Append(m)
	h := s.history
	s.mu.Unlock()
	if !s.fenced && s.failure() == nil { // else mend brings it back to the stored one
		s.m.store.AppendMessage(s.id, int64(len(h.Messages)-1), mustJSON(m), s.written)
	}
	return h
}

// turnAgent is the session's agent with its own settings: a copy per
// turn, so session/configure never changes a running turn.
func (s *Session) turnAgent() *agent.Agent {
	s.refreshAgent()
	s.mu.Lock()
	a := *s.agent
	if own := s.mcp; own != nil {
		shared := a.Extra
		a.Extra = func(ctx context.Context) []tool.Tool {
			var ts []tool.Tool
			if shared != nil {
				ts = shared(ctx)
			}
			return append(ts, own.Tools(ctx)...)
		}
	}
	if s.model != "" {
		a.Model = s.model
	}
	if s.risk != "" {
		a.Risk = s.risk
	}
	s.mu.Unlock()
	return &a
}

// refreshAgent builds the session's agent again after a config reload
// (the next turn uses the new config). An agent the new config no longer
// has keeps running as it was.
func (s *Session) refreshAgent() {
	l := s.m.conf()
	s.mu.Lock()
	stale := s.agentGen != l.gen
	s.mu.Unlock()
	if !stale {
		return
	}
	a, files, err := s.m.buildAgent(s.alias, s.mode, s.cwd)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agentGen = l.gen
	if err != nil {
		s.m.log.Warn("session keeps its agent: the reloaded config cannot build it", "sessionId", s.id, "err", err)
		return
	}
	s.agent, s.instructions = a, files
}

// addMCP gives the session its own MCP servers, once (a session attached
// again keeps the ones it has).
func (s *Session) addMCP(servers map[string]config.MCPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil && !s.closing {
		s.mcp = mcptools.NewSet(servers, s.m.conf().environ, s.m.log.With("sessionId", s.id))
	}
}

// configResult says what the session runs on.
func (s *Session) configResult() *protocol.SessionConfigureResult {
	a := s.turnAgent()
	info := a.Provider.Info()
	model := a.Model
	if model == "" {
		model = info.Model
	}
	return &protocol.SessionConfigureResult{SessionID: s.id, Provider: info.Name, ProviderKind: info.Kind, Model: model,
		URL: info.URL, Risk: a.Risk, ContextWindow: a.Provider.ContextWindow(a.Model)}
}

// Trimmed implements agent.Host: the model's view of the transcript
// starts later from now on; the transcript (and the store) keep all.
func (s *Session) Trimmed(t provider.Transcript, dropped int, reason string) {
	s.mu.Lock()
	if t.Cut <= len(s.history.Messages) {
		s.history.Cut, s.history.CutTokens, s.history.Summary = t.Cut, t.CutTokens, t.Summary
	}
	s.mu.Unlock()
	s.m.log.Info("model view trimmed", "sessionId", s.id, "dropped", dropped, "reason", reason)
}

// Compact leaves all but the last turn out of the model's view
// (session/compact), between turns.
func (s *Session) Compact(ctx context.Context) (int, error) {
	if err := s.load(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	for s.running { // after the running turn (and those queued behind it)
		done := s.turnDone
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		s.mu.Lock()
	}
	if s.closing {
		s.mu.Unlock()
		return 0, ErrNotFound
	}
	s.running = true // no turn starts meanwhile; others wait on done
	done := make(chan struct{})
	s.turnDone = done
	h := s.history
	s.mu.Unlock()
	defer func() {
		// A prompt that came meanwhile was queued: run it now.
		s.mu.Lock()
		close(done)
		if len(s.pending) > 0 && !s.closing {
			j := s.pending[0]
			s.pending = s.pending[1:]
			s.turnDone = make(chan struct{})
			go s.run(j)
		} else {
			s.running = false
		}
		s.mu.Unlock()
	}()
	after := s.turnAgent().Compact(ctx, s, h)
	return after.Cut - h.Cut, nil
}

// Elicitor implements agent.Host: questions go to the client that sent
// the prompt, if it advertised elicitation.
func (s *Session) Elicitor() func(context.Context, tool.Elicitation) (tool.Answer, error) {
	s.mu.Lock()
	c := s.turnClient
	s.mu.Unlock()
	if c == nil || !c.elicits() {
		return nil
	}
	return func(ctx context.Context, e tool.Elicitation) (tool.Answer, error) {
		// The question must not overtake the events before it (its
		// tool_call above all): once they are committed they are queued
		// on the connection, and the question is queued behind them.
		if err := s.caughtUp(ctx); err != nil {
			return tool.Answer{}, err
		}
		var res protocol.ElicitationResult
		err := c.conn.Call(ctx, protocol.MethodElicitationCreate, protocol.ElicitationParams{
			SessionID: s.id, Mode: "form", Message: e.Message, RequestedSchema: e.Schema}, &res)
		if err != nil {
			return tool.Answer{}, err
		}
		if res.Action == "" {
			res.Action = "decline" // "result": null
		}
		return tool.Answer{Action: res.Action, Content: res.Content}, nil
	}
}

// caughtUp waits until every event emitted so far is committed, and so
// queued on the connections: a request to a client (a question, a file,
// a command) must not overtake the events before it (its tool_call).
func (s *Session) caughtUp(ctx context.Context) error {
	s.emitMu.Lock()
	seq := s.seq
	s.emitMu.Unlock()
	return s.committed(ctx, seq)
}

// ClientFS implements agent.Host: the file tools read and write through
// the client that sent the prompt, if it said it would (an editor shows
// the writes as diffs and reads its unsaved buffers). Like a question,
// a request waits for the events before it (its tool_call).
func (s *Session) ClientFS() *tool.ClientFS {
	s.mu.Lock()
	c := s.turnClient
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	read, write := c.fs()
	if !read && !write {
		return nil
	}
	fs := &tool.ClientFS{}
	if read {
		fs.Read = func(ctx context.Context, path string) (string, error) {
			if err := s.caughtUp(ctx); err != nil {
				return "", err
			}
			var r protocol.FSReadResult
			err := c.conn.Call(ctx, protocol.MethodFSReadTextFile, protocol.FSReadParams{SessionID: s.id, Path: path}, &r)
			return r.Content, err
		}
	}
	if write {
		fs.Write = func(ctx context.Context, path, content string) error {
			if err := s.caughtUp(ctx); err != nil {
				return err
			}
			return c.conn.Call(ctx, protocol.MethodFSWriteTextFile, protocol.FSWriteParams{SessionID: s.id, Path: path, Content: content}, nil)
		}
	}
	return fs
}

// ClientTerminal implements agent.Host: shell commands run in the
// terminal of the client that sent the prompt, if it said it would; a
// cancelled turn tells it to stop the command (terminal/cancel).
func (s *Session) ClientTerminal() func(context.Context, tool.TerminalRun) (tool.TerminalOutcome, error) {
	s.mu.Lock()
	c := s.turnClient
	s.mu.Unlock()
	if c == nil || !c.runs() {
		return nil
	}
	return func(ctx context.Context, r tool.TerminalRun) (tool.TerminalOutcome, error) {
		if err := s.caughtUp(ctx); err != nil {
			return tool.TerminalOutcome{}, err
		}
		id := protocol.NewID("run_", 6)
		var res protocol.TerminalRunResult
		// The client enforces the timeout; a little more here, so a
		// client that never answers does not hold the turn.
		cctx, cancel := context.WithTimeout(ctx, time.Duration(r.Timeout+10)*time.Second)
		defer cancel()
		err := c.conn.Call(cctx, protocol.MethodTerminalRun, protocol.TerminalRunParams{SessionID: s.id, RunID: id,
			Program: r.Program, Command: r.Command, Cwd: r.Cwd, TimeoutSecs: r.Timeout, OutputByteLimit: r.OutputLimit}, &res)
		if cctx.Err() != nil {
			c.notify(protocol.MethodTerminalCancel, protocol.TerminalCancelParams{SessionID: s.id, RunID: id})
		}
		if err != nil && ctx.Err() == nil && cctx.Err() != nil {
			return tool.TerminalOutcome{Output: res.Output, TimedOut: true}, nil
		}
		return tool.TerminalOutcome{Output: res.Output, Truncated: res.Truncated, ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut}, err
	}
}

// Standing implements agent.Host: an "always" answer given earlier in
// the session for this tool (or this tool with this very input).
func (s *Session) Standing(toolName string, input json.RawMessage) (agent.Decision, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.always[toolName], s.always[toolName+"\x00"+string(protocol.CompactJSON(input))]:
		return agent.Decision{Allow: true}, true
	case s.never[toolName]:
		return agent.Decision{Why: "the user rejected " + toolName + " for the rest of this session"}, true
	}
	return agent.Decision{}, false
}

// Approve implements agent.Host: an approval_request to every attached
// client; the first answer wins; no answer within the configured timeout
// is a rejection by "timeout".
func (s *Session) Approve(ctx context.Context, req agent.ApprovalRequest) agent.Decision {
	if d, ok := s.Standing(req.ToolName, req.Input); ok {
		return d
	}
	sameInput := req.ToolName + "\x00" + string(protocol.CompactJSON(req.Input))
	s.mu.Lock()
	id := protocol.NewID("apr_", 6)
	a := &approval{tool: req.ToolName, ch: make(chan answer, 1)}
	s.approvals[id] = a
	s.mu.Unlock()

	secs := s.m.conf().cfg.Daemon.ApprovalTimeoutSecs
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	s.emit(protocol.EventApprovalRequest, mustJSON(protocol.ApprovalRequestEvent{RequestID: id, ToolCallID: req.ToolCallID, ToolName: req.ToolName, Kind: req.Kind,
		RawInput: input, Summary: req.Summary, TimeoutSecs: secs, Options: protocol.Decisions}))

	var expired <-chan time.Time
	if secs > 0 {
		t := time.NewTimer(time.Duration(secs) * time.Second)
		defer t.Stop()
		expired = t.C
	}
	var ans answer
	by := "client"
	select {
	case ans = <-a.ch:
	case <-expired:
		ans, by = s.withdraw(id, a, answer{decision: "reject_once"}, "timeout")
	case <-ctx.Done():
		ans, by = s.withdraw(id, a, answer{decision: "reject_once"}, "cancel")
	}
	s.emit(protocol.EventApprovalResolved, mustJSON(protocol.ApprovalResolvedEvent{RequestID: id, Decision: ans.decision, By: by}))

	switch ans.decision {
	case "allow_always":
		s.mu.Lock()
		s.always[req.ToolName] = true
		s.mu.Unlock()
		return agent.Decision{Allow: true}
	case "allow_always_input":
		s.mu.Lock()
		s.always[sameInput] = true
		s.mu.Unlock()
		return agent.Decision{Allow: true}
	case "allow_once":
		return agent.Decision{Allow: true}
	case "reject_always":
		s.mu.Lock()
		s.never[req.ToolName] = true
		s.mu.Unlock()
	}
	switch by {
	case "timeout":
		return agent.Decision{Why: "no approval within " + strconv.Itoa(secs) + " s"}
	case "cancel":
		return agent.Decision{Why: "the turn was cancelled"}
	}
	why := "rejected by the user"
	if ans.reason != "" {
		why += ": " + ans.reason
	}
	return agent.Decision{Why: why}
}

// withdraw removes a pending approval unless a client answered first, in
// which case that answer wins.
func (s *Session) withdraw(id string, a *approval, def answer, by string) (answer, string) {
	s.mu.Lock()
	_, pending := s.approvals[id]
	delete(s.approvals, id)
	s.mu.Unlock()
	if pending {
		return def, by
	}
	return <-a.ch, "client"
}
