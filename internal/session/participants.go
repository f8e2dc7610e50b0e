package session

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/archive"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The turn's seam. What takes part in a session's turns from outside
// the package (internal/goals, internal/subagents, internal/rewind,
// internal/hooks, internal/plan) is a Participant, registered with the
// Manager (Join) and called at the turn's moments in the order
// registered; no file of the package calls one by name. A participant
// drives sessions through the Manager's public face (Lookup, Load,
// StartIfIdle, Publish, Spent; face_*.go) as the scheduler does, and
// keeps what it knows of a session with the session (Keep), so it lives
// and goes with it.

// Participant takes part in every session's turns at their moments. Each
// moment is called with none of the session's locks held, on the
// goroutine of the turn (or of the resume) it concerns; it must not
// wait on a client, a provider or a tool (a hook's command, bounded by
// its timeout, is the one wait: Hook).
type Participant interface {
	// Resumed: a stored session was loaded (rec is its row).
	Resumed(s *Session, rec *store.Session)
	// TurnStarting: the turn of an input of kind is about to run on a
	// (its tools may be added to).
	TurnStarting(s *Session, kind string, a *agent.Agent)
	// Asking: the running turn (of an input of kind) waits for an
	// approval (a.Request), or no longer (a.Resolved).
	Asking(s *Session, kind string, a Ask)
	// Answers is the session (a descendant's) whose approval request
	// requestID, shown in s, an answer given in s goes to (nil: none of
	// the participant's).
	Answers(s *Session, requestID string) *Session
	// TurnEnded: the turn of an input of kind ended with res.
	TurnEnded(s *Session, kind string, res protocol.SessionPromptResult)
	// Idle: no turn runs and no prompt waits (after a turn, or when a
	// participant's own change may start one).
	Idle(s *Session)
	// Describe adds what the participant knows of a live session to
	// what session/get shows (a goal with its spending, the children).
	Describe(s *Session, l *archive.Live)
	// Working adds to w the work the participant runs for the session
	// with no client needed (an active goal): an ephemeral daemon stays
	// for it (Manager.Work). It must be cheap and must not wait.
	Working(s *Session, w *protocol.StayingFor)
	// Emitted: the session's agent emitted e (called for every event
	// of a turn: it must be cheap).
	Emitted(s *Session, e protocol.EventBody)
	// Closing: the session closes (what the participant runs for it
	// ends with it: a child's turn).
	Closing(s *Session)
	// Continuing: child's turn a dead daemon cut goes on (p answers when
	// it ends) with its parent's, whose cut turn waits for it unless
	// background.
	Continuing(parent, child *Session, p *Pending, background bool)
	// RunStarting: the model's part of a turn is about to run (r says
	// which). ended, when not nil, is called once that part ended, on
	// the same goroutine, before the turn's turn_complete is written:
	// a client that sees turn_complete finds what ended kept.
	RunStarting(s *Session, r Run) (ended func())
	// Changing: a tool call of the running turn may change what e
	// says, and is about to run; Changed: it ran.
	Changing(s *Session, e tool.Effect)
	Changed(s *Session, e tool.Effect)
	// Hook: a moment the command hooks are told of (h.Event: a tool
	// call about to be decided, PreToolUse; one that ran, PostToolUse;
	// a turn about to end, Stop; a prompt about to be run,
	// UserPromptSubmit; a session loaded for a client, SessionStart).
	// The turn waits for the verdict (what runs is bounded by its own
	// timeouts); the participants' verdicts are combined (see
	// agent.HookVerdict.With). SessionStart is told on a goroutine of
	// its own, and its verdict is not used.
	Hook(ctx context.Context, s *Session, h HookMoment) agent.HookVerdict
}

// Run is the model's part of a turn, about to run (RunStarting).
type Run struct {
	// Prompt is the turn's prompt (a continued turn's: the one it was
	// cut in).
	Prompt string
	// Seq is the seq of the turn's user_message (a continued turn's:
	// its turn_resumed).
	Seq int64
	// Messages is the transcript's length before it.
	Messages int
	// Gap: a background process of the session ran since the last
	// turn began, so what changed in its directory meanwhile may be
	// the agent's.
	Gap bool
}

// HookMoment is what a hook moment concerns (Participant.Hook).
type HookMoment struct {
	// Event is the hook event: hook.PreToolUse, hook.PostToolUse,
	// hook.Stop, hook.UserPromptSubmit or hook.SessionStart.
	Event string
	// Call is the tool call (PreToolUse, PostToolUse); Result what it
	// gave (PostToolUse).
	Call   *provider.ToolCall
	Result *tool.Result
	// Prompt is the prompt (UserPromptSubmit).
	Prompt string
	// Source is why the session starts (SessionStart): "startup" for a
	// new one, "resume" for a stored one loaded.
	Source string
}

// Ask is an approval a turn asks: Request when it begins to wait,
// Resolved (and Request) once it is answered, withdrawn or timed out.
type Ask struct {
	Request  *protocol.ApprovalRequestEvent
	Resolved *protocol.ApprovalResolvedEvent
}

// Moments is a Participant that does nothing at every moment: a
// participant embeds it and says only the moments it takes part in.
type Moments struct{}

func (Moments) Resumed(*Session, *store.Session)                         {}
func (Moments) TurnStarting(*Session, string, *agent.Agent)              {}
func (Moments) Asking(*Session, string, Ask)                             {}
func (Moments) Answers(*Session, string) *Session                        { return nil }
func (Moments) TurnEnded(*Session, string, protocol.SessionPromptResult) {}
func (Moments) Idle(*Session)                                            {}
func (Moments) Describe(*Session, *archive.Live)                         {}
func (Moments) Working(*Session, *protocol.StayingFor)                   {}
func (Moments) Emitted(*Session, protocol.EventBody)                     {}
func (Moments) Closing(*Session)                                         {}
func (Moments) Continuing(parent, child *Session, p *Pending, bg bool)   {}
func (Moments) RunStarting(*Session, Run) func()                         { return nil }
func (Moments) Changing(*Session, tool.Effect)                           {}
func (Moments) Changed(*Session, tool.Effect)                            {}
func (Moments) Hook(context.Context, *Session, HookMoment) agent.HookVerdict {
	return agent.HookVerdict{}
}

// participants is the list, set before the daemon serves (Join); read
// on every event, so without a lock.
type participants struct {
	mu   sync.Mutex // one Join at a time
	list atomic.Pointer[[]Participant]
}

// Join registers p: from now on it is called at every session's moments.
func (m *Manager) Join(p Participant) {
	m.parts.mu.Lock()
	defer m.parts.mu.Unlock()
	next := append(slices.Clone(m.participants()), p)
	m.parts.list.Store(&next)
}

// participants are the participants, in the order they joined.
func (m *Manager) participants() []Participant {
	if l := m.parts.list.Load(); l != nil {
		return *l
	}
	return nil
}

// each calls f for every participant, in the order they joined.
func (m *Manager) each(f func(Participant)) {
	for _, p := range m.participants() {
		f(p)
	}
}

// running tells the participants that the model's part of the turn
// whose prompt and user_message (or turn_resumed) seq are given is
// about to run; ended tells them it ended.
func (s *Session) running(prompt string, seq int64) (ended func()) {
	s.mu.Lock()
	n := len(s.history.Messages)
	s.mu.Unlock()
	// A background process that ran since the last turn: what changed
	// meanwhile is taken for the agent's.
	s.nmu.Lock()
	gap := s.procsEnded
	s.procsEnded = false
	s.nmu.Unlock()
	r := Run{Prompt: prompt, Seq: seq, Messages: n, Gap: gap || s.runsProcesses()}
	var ends []func()
	s.m.each(func(p Participant) {
		if end := p.RunStarting(s, r); end != nil {
			ends = append(ends, end)
		}
	})
	return func() {
		for _, end := range ends {
			end()
		}
	}
}

// Changing implements agent.Host: the participants are told (the
// checkpoints capture what the call may change).
func (s *Session) Changing(e tool.Effect) { s.m.each(func(p Participant) { p.Changing(s, e) }) }

// Changed implements agent.Host.
func (s *Session) Changed(e tool.Effect) { s.m.each(func(p Participant) { p.Changed(s, e) }) }

// Hook implements agent.Host: the participants' verdicts on the hook
// moment (the command hooks run).
func (s *Session) Hook(ctx context.Context, event string, call *provider.ToolCall, result *tool.Result) agent.HookVerdict {
	return s.hook(ctx, HookMoment{Event: event, Call: call, Result: result})
}

// hook is the participants' verdicts on h, combined in the order they
// joined.
func (s *Session) hook(ctx context.Context, h HookMoment) agent.HookVerdict {
	var v agent.HookVerdict
	s.m.each(func(p Participant) { v = v.With(p.Hook(ctx, s, h)) })
	return v
}

// turnKind is the input kind of the running turn ("": none runs, or a
// borrower's work: a compaction, a rewind).
func (s *Session) turnKind() string {
	j := s.t.Current()
	if j == nil || j.in == nil {
		return ""
	}
	return j.in.kind
}

// Keep returns what a participant keeps with the session under key,
// made by make the first time (a key is the participant's own type).
func (s *Session) Keep(key any, make func() any) any {
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if v, ok := s.kept[key]; ok {
		return v
	}
	if s.kept == nil {
		s.kept = map[any]any{}
	}
	v := make()
	s.kept[key] = v
	return v
}

// Publish writes ev to the session's history and its clients (in the
// running turn's, if one runs).
func (s *Session) Publish(ev protocol.EventBody) { s.emit(ev) }

// Spent is what the session's model calls have used and cost so far.
func (s *Session) Spent() store.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spent
}

// Priced says whether the session's model has a known price (what its
// calls cost is counted).
func (s *Session) Priced() bool {
	s.refreshAgent()
	s.mu.Lock()
	a := *s.agent
	if s.model != "" {
		a.Model = s.model
	}
	s.mu.Unlock()
	return a.Priced()
}

// Busy says whether a turn runs, or is about to (queued, not yet
// begun), or work between turns holds the session.
func (s *Session) Busy() bool { return !s.t.Idle() }

// StartIfIdle runs a turn for prompt (an input of kind) when no turn
// runs, no prompt waits and the session is not closing: started says
// whether it did.
func (s *Session) StartIfIdle(prompt, kind string) (started bool, err error) {
	if !s.t.Idle() || s.t.Queued() || s.t.Shutting() {
		return false, nil
	}
	j := &job{prompt: prompt, done: make(chan protocol.SessionPromptResult, 1),
		in: &input{id: protocol.NewID("in_", 8), kind: kind, ended: make(chan struct{})}}
	if err := s.enqueue(j); err != nil {
		return false, err
	}
	return true, nil
}

// Config is the configuration in force.
func (m *Manager) Config() *config.Config { return m.conf().Config() }

// Lookup is live session id as client c may use it (c nil: the daemon).
func (m *Manager) Lookup(c *Client, id string) (*Session, error) { return m.lookup(c, id) }

// Load is session id, live, or loaded from the store when it is not.
func (m *Manager) Load(ctx context.Context, id string) (*Session, error) {
	m.mu.Lock()
	s := m.live[id]
	m.mu.Unlock()
	if s != nil {
		return s, nil
	}
	rec, err := m.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if s, err = m.resume(ctx, rec); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if other := m.live[id]; other != nil {
		return other, nil
	}
	m.live[id] = s
	return s, nil
}
