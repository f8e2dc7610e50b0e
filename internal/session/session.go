package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Session is one live session: its transcript, its prompt queue, the
// clients attached to it, and its event stream. Every event gets the next
// seq, is persisted, and only once committed is pushed to every attached
// client, so what a client sees is already on disk.
type Session struct {
	m        *Manager
	id       string
	quotedID []byte
	alias    string
	mode     string
	cwd      string
	owner    string
	agent    *agent.Agent

	emitMu sync.Mutex // orders seq assignment with the store queue
	seq    int64

	subMu     sync.Mutex
	clients   map[*Client]*sub
	delivered int64 // last seq pushed to the clients

	mu         sync.Mutex
	history    []provider.Message
	running    bool
	closed     bool
	cancel     context.CancelFunc
	turnClient *Client
	pending    []*job
	approvals  map[string]*approval
	always     map[string]bool // tool -> allowed for the rest of the session
	never      map[string]bool // tool -> rejected for the rest of the session
	turnDone   chan struct{}   // closed when the running turn ends
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
// members. It returns the event's seq.
func (s *Session) emit(typ string, fields []byte) int64 {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.seq++
	seq := s.seq
	body := encodeEvent(s.quotedID, seq, typ, fields)
	s.m.store.AppendEvent(s.id, store.Event{Seq: seq, Type: typ, Body: body}, func(err error) {
		if err != nil {
			s.m.log.Error("event not persisted", "sessionId", s.id, "seq", seq, "err", err)
		}
		s.deliver(seq, body)
	})
	return seq
}

// deliver runs on the store's writer, in commit order.
func (s *Session) deliver(seq int64, body []byte) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	s.delivered = seq
	for c, sb := range s.clients {
		if sb.lag {
			continue // catching up from the store
		}
		if !c.push(sb, seq, body) {
			sb.lag = true
			c.lag(sb)
		}
	}
}

// resume returns a caught-up subscription to live delivery.
func (s *Session) resume(sb *sub) bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if sb.written < s.delivered {
		return false
	}
	sb.lag = false
	return true
}

// attach adds c; it returns the last seq delivered before c joined, so
// c gets every later event live and the earlier ones from history.
func (s *Session) attach(c *Client) (int64, bool) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if sb, ok := s.clients[c]; ok {
		return sb.written, true
	}
	sb := c.subscribe(s, s.delivered)
	if sb == nil {
		return 0, false
	}
	s.clients[c] = sb
	return s.delivered, true
}

func (s *Session) detach(c *Client) {
	s.subMu.Lock()
	delete(s.clients, c)
	s.subMu.Unlock()
}

func (s *Session) subOf(c *Client) *sub {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return s.clients[c]
}

func (s *Session) detachAll() {
	s.subMu.Lock()
	cs := s.clients
	s.clients = map[*Client]*sub{}
	s.subMu.Unlock()
	for c := range cs {
		c.unsubscribe(s)
	}
}

// enqueue queues a prompt; it fails when the queue is full or the session
// closed.
func (s *Session) enqueue(j *job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrNotFound
	}
	if !s.running {
		s.running = true
		s.turnDone = make(chan struct{})
		go s.run(j)
		return nil
	}
	if len(s.pending) >= s.m.cfg.Daemon.PromptQueue {
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
		if len(s.pending) == 0 || s.closed {
			for _, p := range s.pending {
				p.done <- protocol.SessionPromptResult{SessionID: s.id, StopReason: agent.StopCancelled}
			}
			s.pending = nil
			s.running = false
			j = nil
		} else {
			j = s.pending[0]
			s.pending = s.pending[1:]
			s.turnDone = make(chan struct{})
		}
		s.mu.Unlock()
	}
}

func (s *Session) turn(j *job) protocol.SessionPromptResult {
	ctx, cancel := context.WithCancel(s.m.ctx)
	defer cancel()
	s.mu.Lock()
	s.cancel, s.turnClient = cancel, j.client
	history := s.history
	s.mu.Unlock()
	s.m.store.SetState(s.id, store.StateRunning)
	if len(history) == 0 {
		s.m.store.SetTitle(s.id, title(j.prompt))
	}

	s.emit(protocol.EventUserMessage, textFields(j.prompt))
	out := s.agent.Run(ctx, s, s.cwd, history, j.prompt, j.images...)

	res := protocol.SessionPromptResult{SessionID: s.id, StopReason: out.StopReason, Content: out.Content,
		Usage: &protocol.Usage{InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens}}
	outcome := "completed"
	switch out.StopReason {
	case agent.StopCancelled:
		outcome = "cancelled"
	case agent.StopError:
		outcome = "failed"
		res.Error = &protocol.ErrorInfo{Message: out.Err.Error()}
	}
	fields := map[string]any{"outcome": outcome, "stopReason": out.StopReason, "content": out.Content}
	if res.Error != nil {
		fields["error"] = res.Error
	}
	last := s.emit(protocol.EventTurnComplete, mustJSON(fields))
	s.m.store.SetState(s.id, store.StateIdle)

	s.mu.Lock()
	s.cancel, s.turnClient = nil, nil
	s.mu.Unlock()
	// The prompting client hears turn_complete before the result.
	s.m.store.Sync()
	if j.client != nil {
		fctx, fcancel := context.WithTimeout(context.Background(), StallTimeout)
		j.client.flush(fctx, s.subOf(j.client), last)
		fcancel()
	}
	return res
}

func title(prompt string) string {
	r := []rune(prompt)
	if len(r) > 80 {
		r = append(r[:79], '…')
	}
	return string(r)
}

// cancelTurn cancels the running turn, if any.
func (s *Session) cancelTurn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	s.cancel()
	return true
}

// close cancels the running turn and the queue, detaches every client and
// waits (bounded) for the turn to end.
func (s *Session) close() {
	s.mu.Lock()
	s.closed = true
	if s.cancel != nil {
		s.cancel()
	}
	done := s.turnDone
	running := s.running
	s.mu.Unlock()
	s.detachAll()
	if running && done != nil {
		select {
		case <-done:
		case <-time.After(tool.KillGrace + 5*time.Second):
			s.m.log.Warn("turn did not end after close", "sessionId", s.id)
		}
	}
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
		s.emit(protocol.EventToolCall, mustJSON(struct {
			ToolCallID string          `json:"toolCallId"`
			Name       string          `json:"name"`
			RawInput   json.RawMessage `json:"rawInput"`
		}{e.ID, e.Name, e.Input}))
	case agent.ToolResult:
		s.emit(protocol.EventToolResult, mustJSON(struct {
			ToolCallID string `json:"toolCallId"`
			Name       string `json:"name"`
			RawOutput  string `json:"rawOutput"`
			IsError    bool   `json:"isError"`
		}{e.ID, e.Name, e.Output, e.IsError}))
	case agent.Plan:
		s.emit(protocol.EventPlan, mustJSON(map[string]any{"entries": e.Entries}))
	case agent.ContextUsage:
		s.emit(protocol.EventContextUsage, mustJSON(map[string]int64{"inputTokens": e.InputTokens, "maxContextTokens": e.MaxContextTokens}))
	}
}

// Record implements agent.Host.
func (s *Session) Record(m provider.Message) {
	s.mu.Lock()
	s.history = append(s.history, m)
	idx := int64(len(s.history) - 1)
	s.mu.Unlock()
	s.m.store.AppendMessage(s.id, idx, mustJSON(m))
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
		// tool_call above all): they go out first.
		s.emitMu.Lock()
		seq := s.seq
		s.emitMu.Unlock()
		s.m.store.Sync()
		c.flush(ctx, s.subOf(c), seq)
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

// Approve implements agent.Host: an approval_request to every attached
// client; the first answer wins; no answer within the configured timeout
// is a rejection by "timeout".
func (s *Session) Approve(ctx context.Context, req agent.ApprovalRequest) agent.Decision {
	s.mu.Lock()
	switch {
	case s.always[req.ToolName]:
		s.mu.Unlock()
		return agent.Decision{Allow: true}
	case s.never[req.ToolName]:
		s.mu.Unlock()
		return agent.Decision{Why: "the user rejected " + req.ToolName + " for the rest of this session"}
	}
	id := "apr_" + randomHex(6)
	a := &approval{tool: req.ToolName, ch: make(chan answer, 1)}
	s.approvals[id] = a
	s.mu.Unlock()

	secs := s.m.cfg.Daemon.ApprovalTimeoutSecs
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	s.emit(protocol.EventApprovalRequest, mustJSON(struct {
		RequestID   string          `json:"requestId"`
		ToolCallID  string          `json:"toolCallId"`
		ToolName    string          `json:"toolName"`
		RawInput    json.RawMessage `json:"rawInput"`
		Summary     string          `json:"summary"`
		TimeoutSecs int             `json:"timeoutSecs"`
		Options     []string        `json:"options"`
	}{id, req.ToolCallID, req.ToolName, input, req.Summary, secs, protocol.Decisions}))

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
	s.emit(protocol.EventApprovalResolved, mustJSON(map[string]string{"requestId": id, "decision": ans.decision, "by": by}))

	switch ans.decision {
	case "allow_always":
		s.mu.Lock()
		s.always[req.ToolName] = true
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

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
