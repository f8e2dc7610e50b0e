// Package agent runs one agent turn: the loop model → tool calls → results
// → model, until the model stops asking for tools or the turn runs out of
// model calls. It reports every step as an Event to its Host and knows
// nothing of sessions, clients or the wire.
package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"

	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// ApprovalRequest asks the Host whether a call may run.
type ApprovalRequest struct {
	ToolCallID, ToolName string
	Input                json.RawMessage
	Summary              string
	Kind                 string // the tool's kind (protocol.KindRead, ...)
	// Rule says why it is asked: the rule that says ask, else the risk
	// level.
	Rule string
	// Options are the answers it takes (nil: protocol.Decisions).
	Options []string
}

// Decision is the Host's answer to an ApprovalRequest, or a standing
// one (Host.Standing).
type Decision struct {
	Allow bool
	// Ask (a standing decision): ask before the call, whatever the risk
	// level (a permission rule says so).
	Ask bool
	// Why explains a refusal to the model ("rejected by the user", "no
	// answer within 120 s").
	Why string
	// Choice is the option chosen (of a request with Options), and
	// Feedback what the user said with it.
	Choice, Feedback string
}

// Host is what a turn runs in: where its events go, who approves calls,
// who answers questions, and where the transcript is kept.
type Host interface {
	// Emit reports a step of the turn as the event clients see:
	// agent_message_chunk, agent_thought_chunk, tool_call, tool_result,
	// tool_progress, plan, context_usage (the host adds the session's
	// cost) and history_trimmed.
	Emit(protocol.EventBody)
	// Standing is a decision already taken for such a call (an "always"
	// answer earlier in the session), if any: then no approval is asked.
	Standing(toolName string, input json.RawMessage) (Decision, bool)
	Approve(ctx context.Context, req ApprovalRequest) Decision
	// Elicit asks the user; nil when nobody can answer.
	Elicitor() func(ctx context.Context, e tool.Elicitation) (tool.Answer, error)
	// ClientFS is the prompting client's file access (an editor's), nil
	// when the file tools use the disk.
	ClientFS() *tool.ClientFS
	// ClientTerminal runs shell commands in the prompting client's
	// terminal, nil when they run here.
	ClientTerminal() func(ctx context.Context, r tool.TerminalRun) (tool.TerminalOutcome, error)
	// Record appends a message to the session's transcript and returns
	// the transcript so far, which is what the model is sent: one copy of
	// it, kept by the host with its running token estimate, so a turn
	// costs the same in a session of 10,000 turns as in a fresh one. The
	// agent only reads it.
	Record(provider.Message) provider.Transcript
	// Changing is told, before a tool call runs, what it may change on
	// disk (the session's checkpoints capture it); Changed after it ran.
	Changing(tool.Effect)
	Changed(tool.Effect)
	// Hook runs the command hooks of an event (PreToolUse and
	// PostToolUse with the call, and its result; Stop) and says what
	// they decided.
	Hook(ctx context.Context, event string, call *provider.ToolCall, result *tool.Result) HookVerdict
	// Steers are the user's messages sent to the running turn
	// (session/steer), taken once each: they join the model's view
	// before its next call. final: the turn would end now; with none
	// waiting it takes no more.
	Steers(final bool) []provider.Message
	// Notices are what the model must hear before its next call (a
	// background process that ended), taken once each.
	Notices() []provider.Message
	// Budget says, when a spending limit is reached, which one and its
	// value ("" while none is): then no model call starts.
	Budget() string
	// Charge adds a model call's usage and cost to what the session and
	// the day have spent.
	Charge(provider.Usage)
	// Trimmed keeps t's view (Cut, CutTokens, Summary) as the session's:
	// dropped older messages were left out of what the model is sent,
	// for reason; the transcript itself keeps them.
	Trimmed(t provider.Transcript, dropped int, reason string)
}

// HookVerdict is what an event's hooks decided: to block it (with the
// reason), and for PreToolUse a permission (allow, deny, ask; "": none).
type HookVerdict struct {
	Block      bool
	Reason     string
	Permission string
}

// With is v combined with w, a verdict given after it on the same
// event: it blocks when either blocks (with the first reason) and takes
// the stricter permission (deny, ask, allow), a deny's reason when none
// was given yet.
func (v HookVerdict) With(w HookVerdict) HookVerdict {
	if w.Block && !v.Block {
		v.Block, v.Reason = true, w.Reason
	}
	if strictness[w.Permission] > strictness[v.Permission] {
		v.Permission = w.Permission
		if w.Permission == "deny" && v.Reason == "" {
			v.Reason = w.Reason
		}
	}
	return v
}

// strictness ranks the hooks' permissions.
var strictness = map[string]int{"": 0, "allow": 1, "ask": 2, "deny": 3}

// Hook events the agent runs.
const (
	HookPreToolUse  = "PreToolUse"
	HookPostToolUse = "PostToolUse"
	HookStop        = "Stop"
)

// Context management: before a model call whose input would pass
// CompactAt of the model's context window, older turns are left out of
// the view (summarised) until it is within CompactTo of it.
const (
	CompactAt = 0.8
	CompactTo = 0.5
	// summaryMax bounds a summary, in bytes.
	summaryMax = 4096
)

// Risk levels: the protocol's, one copy.
const (
	RiskReadonly   = protocol.RiskReadonly
	RiskPlan       = protocol.RiskPlan
	RiskSupervised = protocol.RiskSupervised
	RiskEdits      = protocol.RiskEdits
	RiskFull       = protocol.RiskFull
)

// Stop reasons of a turn: the wire's (protocol), one copy.
const (
	StopEndTurn         = protocol.StopEndTurn
	StopCancelled       = protocol.StopCancelled
	StopMaxTurnRequests = protocol.StopMaxTurnRequests
	StopError           = protocol.StopError
	StopMaxTokens       = protocol.StopMaxTokens
	StopRefusal         = protocol.StopRefusal
	StopBudget          = protocol.StopBudget
)

// Agent is a configured agent: the model, its instructions and tools.
type Agent struct {
	Provider provider.Provider
	// Model overrides the provider's configured model ("": that one).
	Model  string
	System string
	Tools  []tool.Tool
	// Extra, when set, gives more tools at the start of each turn (the
	// MCP servers'; it may start them).
	Extra func(ctx context.Context) []tool.Tool
	// Offered, when set, is told the names of the tools the turn offers
	// its model (its Tools and Extra's), once they are known.
	Offered func(names map[string]bool)
	// Tasks, when set, starts and drives the session's sub-agents (the
	// task tools).
	Tasks tool.Tasks
	// Goal is the session's active goal (its tools reach it; nil: none).
	Goal tool.Goal
	// RiskNow, when set, is the session's risk level now (a mode switched
	// mid-turn applies from the next tool call); else Risk.
	RiskNow func() string
	// PlanExit leaves the plan mode with a plan (exit_plan; nil: not in
	// plan mode).
	PlanExit tool.PlanExit
	// Note, when set, says what the model should know about its tools
	// now (the MCP servers not available); added to each request's
	// system prompt when not "".
	Note func() string
	// Withheld are tools left out of this turn on purpose, by name: why
	// (a call of one is refused with the reason, not "unknown tool").
	Withheld    map[string]string
	Risk        string
	MaxRequests int
	// MaxTokens and Reasoning override the provider's (0, "": its own);
	// Where names the config table that set MaxTokens, for the notice.
	MaxTokens int
	Reasoning string
	Where     string
	// Commands is what the tools' commands run with.
	Commands tool.Commands
	// Price is what a model of the provider costs (nil or false:
	// unknown, so its calls cost nothing that is counted).
	Price func(model string) (provider.Price, bool)
	// Bound, when set, says when a limit of the turn's own is reached
	// (a goal's budget: its time or cost), asked with the host's Budget
	// before each model call and each tool call ("": none is): then the
	// turn ends there (budget), saying why.
	Bound func() string
	// MaxStopContinues bounds how often a Stop hook may send the turn
	// on.
	MaxStopContinues int
	// Gate decides what the turn's tool calls may do (nil: gate.Decide;
	// a test counts what reaches it). Actor is who calls them ("": the
	// session's model), Grant what its parent holds now, asked at each
	// call (nil, or nil returned: no parent).
	Gate  gate.Func
	Actor gate.Actor
	Grant func() *gate.Grant
}

// Outcome is how a turn ended.
type Outcome struct {
	StopReason string
	// Content is the text of the turn's last model call (partial when
	// cancelled).
	Content string
	Usage   provider.Usage
	Err     error // set when StopReason is error
	// Notice says why a turn ended short of end_turn when the person
	// can act on it (max_tokens: the limit and the key that raises it).
	Notice string
}

// Run runs one turn for prompt and its images, in directory cwd, on the
// host's transcript (see Host.Record).
func (a *Agent) Run(ctx context.Context, h Host, cwd string, prompt string, images ...provider.Image) Outcome {
	return a.run(ctx, h, cwd, provider.Message{Role: provider.RoleUser, Text: prompt, Images: images})
}

// Continue goes on with a turn a daemon's end cut: the conversation as
// recorded, then held (the cut reply's calls that had not run: each
// waited for an approval, which is asked again) run and answered, then
// note (what happened, for the model), then the model is called again.
func (a *Agent) Continue(ctx context.Context, h Host, cwd string, note string, held []provider.ToolCall) Outcome {
	return a.run(ctx, h, cwd, provider.Message{Role: provider.RoleUser, Text: note}, held...)
}

// Priced says whether the turn's model has a known price (its calls'
// cost is counted).
func (a *Agent) Priced() bool {
	if a.Price == nil {
		return false
	}
	_, ok := a.Price(a.Model)
	return ok
}

// over is the limit reached, if any: the host's (the [budget]), then the
// turn's own (Bound).
func (a *Agent) over(h Host) string {
	if o := h.Budget(); o != "" {
		return o
	}
	if a.Bound != nil {
		return a.Bound()
	}
	return ""
}

func (a *Agent) run(ctx context.Context, h Host, cwd string, first provider.Message, held ...provider.ToolCall) Outcome {
	if over := a.over(h); over != "" {
		// Past a limit: the model is not called, and the prompt does
		// not enter the transcript it never answered (held calls are
		// answered unrun, so the transcript stays valid).
		for _, call := range held {
			h.Record(provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Text: "not run: " + over, IsError: true})
		}
		return Outcome{StopReason: StopBudget, Notice: over}
	}
	// What happened while the session was idle (a background process
	// that ended) comes before the prompt, as it did.
	for _, m := range h.Notices() {
		h.Record(m)
	}
	env := &tool.Env{Cwd: cwd, Confine: a.Risk != RiskFull, Elicit: h.Elicitor(),
		Commands: a.Commands, FS: h.ClientFS(), Terminal: h.ClientTerminal(), Tasks: a.Tasks, Goal: a.Goal, PlanExit: a.PlanExit,
		Plan: func(e []protocol.PlanEntry) { h.Emit(protocol.PlanEvent{Entries: e}) }}
	byName := map[string]tool.Tool{}
	var specs []provider.ToolSpec
	tools := a.Tools
	if a.Extra != nil {
		tools = append(tools[:len(tools):len(tools)], a.Extra(ctx)...)
	}
	for _, t := range tools {
		s := t.Spec()
		if d, ok := t.(tool.SpecFor); ok {
			s = d.SpecFor(env)
		}
		byName[s.Name] = t
		specs = append(specs, provider.ToolSpec{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	if a.Offered != nil {
		names := make(map[string]bool, len(byName))
		for n := range byName {
			names[n] = true
		}
		a.Offered(names)
	}
	if len(held) > 0 {
		if _, over := a.runCalls(ctx, h, env, byName, held); over != "" {
			return Outcome{StopReason: StopBudget, Notice: over}
		}
	}
	view := h.Record(first)
	fixed := provider.EstimateRequest(a.System, specs)
	var out Outcome
	stops := 0 // times a Stop hook sent the turn on
	max := max(a.MaxRequests, 1)
	for call := range max {
		if call > 0 {
			if over := a.over(h); over != "" {
				// A limit reached while the last calls ran: no more
				// model calls.
				out.StopReason, out.Notice = StopBudget, over
				return out
			}
			for _, m := range h.Steers(false) {
				view = h.Record(m)
			}
		}
		for _, m := range h.Notices() {
			view = h.Record(m)
		}
		if w := a.Provider.ContextWindow(a.Model); w > 0 && float64(fixed+view.ViewTokens()) > CompactAt*float64(w) {
			view = a.compact(ctx, h, view, int64(CompactTo*float64(w))-fixed, "context_window")
		}
		system := withSummary(a.System, view.Summary)
		if n := modeNote(a.risk(), a.PlanExit != nil); n != "" {
			system += "\n\n" + n
		}
		if a.Note != nil {
			if n := a.Note(); n != "" {
				system += "\n\n" + n
			}
		}
		req := provider.Request{System: system, Messages: view.View(), Tools: specs,
			Estimate: fixed + view.ViewTokens(), Model: a.Model, MaxTokens: a.MaxTokens, Reasoning: a.Reasoning}
		resp, used, err := a.stream(ctx, h, req, func(d provider.Delta) {
			if d.Thought != "" {
				h.Emit(protocol.AgentThoughtChunkEvent{Text: d.Thought})
			}
			if d.Text != "" {
				h.Emit(protocol.AgentMessageChunkEvent{Text: d.Text})
			}
		})
		if resp != nil {
			out.Content = resp.Text
			out.Usage.Add(used)
		}
		if err != nil {
			if resp != nil && resp.Text != "" {
				h.Record(provider.Message{Role: provider.RoleAssistant, Text: resp.Text})
			}
			if ctx.Err() != nil {
				out.StopReason = StopCancelled
				return out
			}
			out.StopReason, out.Err = StopError, err
			return out
		}
		h.Emit(protocol.ContextUsageEvent{InputTokens: resp.Usage.InputTokens, CacheReadTokens: resp.Usage.CacheReadTokens,
			CacheWriteTokens: resp.Usage.CacheWriteTokens, MaxContextTokens: a.Provider.ContextWindow(a.Model)})
		view = h.Record(provider.Message{Role: provider.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Reasoning: resp.Reasoning})
		if over := a.over(h); over != "" {
			// This call crossed a limit: the turn ends here, its calls
			// answered unrun so the transcript stays valid.
			for _, call := range resp.ToolCalls {
				h.Record(provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name,
					Text: "not run: " + over, IsError: true})
			}
			out.StopReason, out.Notice = StopBudget, over
			return out
		}
		if len(resp.ToolCalls) == 0 && resp.StopReason != provider.StopMaxTokens && resp.StopReason != provider.StopRefusal && stops < a.MaxStopContinues {
			// A Stop hook may send the agent on, its reason the next
			// instruction.
			if v := h.Hook(ctx, HookStop, nil, nil); v.Block && ctx.Err() == nil {
				stops++
				view = h.Record(provider.Message{Role: provider.RoleUser, Text: v.Reason})
				continue
			}
		}
		if len(resp.ToolCalls) == 0 {
			// A turn ends only when the model has seen every steer.
			if steers := h.Steers(true); len(steers) > 0 {
				for _, m := range steers {
					view = h.Record(m)
				}
				continue
			}
			switch resp.StopReason {
			case provider.StopMaxTokens:
				out.StopReason = StopMaxTokens
				out.Notice = a.maxTokensNotice()
				if resp.CutCall != "" {
					out.Notice += fmt.Sprintf(" (it was cut off inside the arguments of a call to %s, which was not run)", resp.CutCall)
				}
			case provider.StopRefusal:
				out.StopReason = StopRefusal
			default:
				out.StopReason = StopEndTurn
			}
			return out
		}
		var over string
		view, over = a.runCalls(ctx, h, env, byName, resp.ToolCalls)
		if over != "" {
			out.StopReason, out.Notice = StopBudget, over
			return out
		}
		if ctx.Err() != nil {
			out.StopReason = StopCancelled
			return out
		}
	}
	out.StopReason = StopMaxTurnRequests
	return out
}

// runCalls runs a reply's tool calls, each through its gate (rules,
// hooks, an approval asked), records their results in call order and
// returns the view after the last. A limit reached before a call (over,
// see Agent.over) leaves it and the rest unrun, each answered so.
func (a *Agent) runCalls(ctx context.Context, h Host, env *tool.Env, byName map[string]tool.Tool, calls []provider.ToolCall) (view provider.Transcript, over string) {
	for len(calls) > 0 {
		if over = a.over(h); over != "" {
			for _, call := range calls {
				view = h.Record(provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name,
					Text: "not run: " + over, IsError: true})
			}
			return view, over
		}
		// Calls of a tool that runs beside others (task: each a
		// sub-agent) run at once when they come together; the rest
		// one after the other. Results are recorded in call order.
		n := 1
		for n < len(calls) && concurrent(byName, calls[0]) && concurrent(byName, calls[n]) {
			n++
		}
		group := calls[:n]
		calls = calls[n:]
		results := make([]tool.Result, len(group))
		ran := make([]bool, len(group))
		var wg sync.WaitGroup
		for i, call := range group {
			if ctx.Err() != nil {
				continue
			}
			g := a.gate(h, env, byName, call)
			h.Emit(protocol.ToolCallEvent{ToolCallID: call.ID, Name: call.Name, RawInput: call.Input, Title: tool.Title(call.Name, call.Input),
				Kind: g.kind, NeedsApproval: g.v.Decision == gate.Ask})
			ran[i] = true
			run := func() {
				r, decision := a.call(ctx, h, env, g, call)
				metrics.ToolCall(toolLabel(byName, call.Name), decision)
				results[i] = r
			}
			if len(group) == 1 {
				run()
			} else {
				wg.Go(run)
			}
		}
		wg.Wait()
		for i, call := range group {
			r := results[i]
			if !ran[i] {
				// Every call gets a result, so the transcript stays valid.
				r = tool.Result{Output: "cancelled before it ran", IsError: true}
				metrics.ToolCall(toolLabel(byName, call.Name), "cancelled")
			} else {
				h.Emit(protocol.ToolResultEvent{ToolCallID: call.ID, Name: call.Name, RawOutput: r.Output, IsError: r.IsError, Details: r.Details})
			}
			m := provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Name: call.Name, Text: r.Output, IsError: r.IsError}
			for _, im := range r.Images {
				m.Images = append(m.Images, provider.Image{MimeType: im.MimeType, Data: im.Data})
			}
			view = h.Record(m)
		}
	}
	return view, ""
}

// charge prices a model call's usage (unless its server did), charges it
// to the host and returns it.
// stream makes one model call, charged to the session and counted
// (metrics): its outcome, latency, tokens and cost.
func (a *Agent) stream(ctx context.Context, h Host, req provider.Request, onDelta func(provider.Delta)) (*provider.Response, provider.Usage, error) {
	t0 := time.Now()
	resp, err := a.Provider.Stream(ctx, req, onDelta)
	var u provider.Usage
	if resp != nil {
		u = a.charge(h, resp.Usage)
	}
	outcome := "ok"
	switch {
	case err != nil && ctx.Err() != nil:
		outcome = "cancelled"
	case err != nil:
		outcome = "error"
	}
	info := a.Provider.Info()
	metrics.ProviderCall(info.Name, cmp.Or(req.Model, info.Model), outcome, time.Since(t0), u.InputTokens, u.OutputTokens, u.CostUSD, u.Priced)
	return resp, u, err
}

func (a *Agent) charge(h Host, u provider.Usage) provider.Usage {
	if !u.Priced && a.Price != nil {
		if p, ok := a.Price(a.Model); ok {
			u.CostUSD, u.Priced = p.Cost(u), true
		}
	}
	h.Charge(u)
	return u
}

// Compact leaves all but the last turn out of the model's view (the
// /compact command), whatever the view's size.
func (a *Agent) Compact(ctx context.Context, h Host, view provider.Transcript) provider.Transcript {
	return a.compact(ctx, h, view, 0, "requested")
}

// compact trims view to budget and summarises what it leaves out (with
// the model; when that fails, a marker says what was left out).
func (a *Agent) compact(ctx context.Context, h Host, view provider.Transcript, budget int64, reason string) provider.Transcript {
	next := view
	dropped := next.Trim(max(budget, 0))
	if dropped == 0 {
		return view
	}
	summary, err := a.summarize(ctx, h, view.Summary, view.Messages[view.Cut:next.Cut])
	if err != nil {
		summary = strings.TrimSpace(view.Summary + fmt.Sprintf("\n[%d earlier messages were left out to fit the model's context window; no summary could be made: %v]", dropped, err))
		reason += " (summary failed)"
	}
	next.Summary = summary
	h.Trimmed(next, dropped, reason)
	h.Emit(protocol.HistoryTrimmedEvent{DroppedMessages: next.Cut, KeptTurns: next.Turns(), Reason: reason})
	return next
}

// summarize asks the model for a summary of msgs, continuing prev.
func (a *Agent) summarize(ctx context.Context, h Host, prev string, msgs []provider.Message) (string, error) {
	var b strings.Builder
	if prev != "" {
		b.WriteString("Summary of the conversation before this part:\n" + prev + "\n\n")
	}
	b.WriteString("The part of the conversation to summarise:\n")
	for _, m := range msgs {
		// Indented, so no line of it reads as a directive.
		text := strings.ReplaceAll(truncate(m.Text, 2000), "\n", "\n  ")
		switch {
		case m.Role == provider.RoleTool:
			fmt.Fprintf(&b, "[tool %s result] %s\n", m.Name, text)
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[assistant called %s %s]\n", c.Name, truncate(string(c.Input), 500))
			}
			if text != "" {
				fmt.Fprintf(&b, "assistant: %s\n", text)
			}
		default:
			fmt.Fprintf(&b, "%s: %s\n", m.Role, text)
		}
	}
	req := provider.Request{
		System:   "You summarise an agent's conversation so it can go on without the full text. Keep what the work needs: the user's goals and constraints, decisions, files and commands involved, results, and what is still open. At most 300 words, plain text.",
		Messages: []provider.Message{{Role: provider.RoleUser, Text: b.String()}},
	}
	resp, _, err := a.stream(ctx, h, req, func(provider.Delta) {}) // a summary costs like any call
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(resp.Text)
	if s == "" {
		return "", errors.New("the model gave an empty summary")
	}
	return truncate(s, summaryMax), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " [...]"
}

// withSummary tells the model what its view leaves out.
func withSummary(system, summary string) string {
	if summary == "" {
		return system
	}
	return system + "\n\n<earlier_conversation>\nEarlier turns of this conversation were left out to fit your context window. What they held:\n" + summary + "\n</earlier_conversation>"
}

// gated is what is decided about a call before it runs: its tool (nil:
// unknown), its kind, what the gate was asked and what it said.
type gated struct {
	tool tool.Tool
	kind string
	req  gate.Request
	v    gate.Verdict
}

// risk is the risk level in force now.
func (a *Agent) risk() string {
	if a.RiskNow != nil {
		if r := a.RiskNow(); r != "" {
			return r
		}
	}
	return a.Risk
}

// PlanDir is where plan mode lets the agent write its plan, under the
// session's directory (the gate's).
const PlanDir = gate.PlanDir

// decide asks the gate (the one function that decides what an actor
// may do; a test may count what reaches it).
func (a *Agent) decide(r gate.Request) gate.Verdict {
	if a.Gate != nil {
		return a.Gate(r)
	}
	return gate.Decide(r)
}

// gate decides, once, whether a call may run and whether it asks: the
// gate is told who calls (the model, a sub-agent's, a scheduled run's),
// what the tool declares it may change, the mode in force now, the
// standing decision (an "always" answer, a permission rule), the
// sandbox and the parent's grant.
func (a *Agent) gate(h Host, env *tool.Env, byName map[string]tool.Tool, call provider.ToolCall) gated {
	t := byName[call.Name]
	g := gated{tool: t, kind: protocol.KindOther}
	g.req = gate.Request{Actor: cmp.Or(a.Actor, gate.Model), Action: tool.Action(t, env, call.Name, call.Input),
		Mode: a.risk(), Sandbox: env.Sandbox != nil}
	if a.Grant != nil {
		g.req.Grant = a.Grant()
	}
	if t != nil {
		g.kind = t.Kind()
		if d, ok := h.Standing(call.Name, call.Input); ok {
			g.req.Rule = standingRule(d)
		}
	}
	g.v = a.decide(g.req)
	return g
}

// standingRule is a standing decision as the gate's rule.
func standingRule(d Decision) gate.Rule {
	switch {
	case d.Ask:
		return gate.Rule{Decision: gate.Ask, Why: d.Why}
	case d.Allow:
		return gate.Rule{Decision: gate.Allow, Why: d.Why}
	}
	return gate.Rule{Decision: gate.Deny, Why: d.Why}
}

// hookDecision is what a PreToolUse hook said, as the gate's ("": it
// said nothing that decides).
func hookDecision(v HookVerdict) gate.Decision {
	switch {
	case v.Block || v.Permission == "deny":
		return gate.Deny
	case v.Permission == "allow":
		return gate.Allow
	case v.Permission == "ask":
		return gate.Ask
	}
	return ""
}

// sample makes a model call a tool asked for (an MCP server's sampling),
// on the session's provider and model: the user approves it first (an
// approval_request of kind sampling, the messages shown) unless the
// asker is trusted; its usage and cost are the session's.
func (a *Agent) sample(ctx context.Context, h Host, call provider.ToolCall, sr tool.SampleRequest) (tool.SampleResult, error) {
	var msgs []provider.Message
	var shown strings.Builder
	for _, m := range sr.Messages {
		role := provider.RoleUser
		if m.Role == "assistant" {
			role = provider.RoleAssistant
		}
		msgs = append(msgs, provider.Message{Role: role, Text: m.Text})
		fmt.Fprintf(&shown, "%s: %s\n", m.Role, m.Text)
	}
	if len(msgs) == 0 {
		return tool.SampleResult{}, errors.New("no messages to send")
	}
	// Asked as its own "tool", so an "always" answer covers this asker's
	// model calls only, never the tool that asked.
	asker := "sampling: " + sr.From
	if d, standing := h.Standing(asker, nil); standing && !d.Ask {
		if !d.Allow {
			return tool.SampleResult{}, fmt.Errorf("the model call was refused: %s", d.Why)
		}
		sr.Trusted = true
	}
	if !sr.Trusted {
		input, _ := json.Marshal(map[string]any{"from": sr.From, "systemPrompt": sr.System, "messages": sr.Messages, "maxTokens": sr.MaxTokens})
		summary := fmt.Sprintf("%s asks the model (a call you pay for): %s", sr.From, strings.TrimSpace(shown.String()))
		if len(summary) > 400 {
			summary = summary[:400] + "…"
		}
		d := h.Approve(ctx, ApprovalRequest{ToolCallID: call.ID, ToolName: asker, Input: input, Summary: summary, Kind: protocol.KindSampling,
			Rule: "a tool's request to call the model asks, unless its MCP server is trusted"})
		if !d.Allow {
			return tool.SampleResult{}, fmt.Errorf("the user declined the model call: %s", d.Why)
		}
	}
	maxTokens := a.MaxTokens
	if sr.MaxTokens > 0 && (maxTokens == 0 || sr.MaxTokens < maxTokens) {
		maxTokens = sr.MaxTokens
	}
	resp, _, err := a.stream(ctx, h, provider.Request{System: sr.System, Messages: msgs, Model: a.Model, MaxTokens: maxTokens}, func(provider.Delta) {})
	if err != nil {
		return tool.SampleResult{}, err
	}
	stop := "endTurn"
	if resp.StopReason == provider.StopMaxTokens {
		stop = "maxTokens"
	}
	return tool.SampleResult{Text: resp.Text, Model: cmp.Or(a.Model, a.Provider.Info().Model), StopReason: stop}, nil
}

// toolLabel names a call's tool for the metrics: an unknown name (the
// model's to make up) is "unknown".
func toolLabel(byName map[string]tool.Tool, name string) string {
	if _, ok := byName[name]; ok {
		return name
	}
	return "unknown"
}

// call runs a gated call; decision says what let it run or not: auto (no
// one was asked), allowed or rejected (by the user), refused (a rule, a
// hook, the risk level), unknown (no such tool).
func (a *Agent) call(ctx context.Context, h Host, env *tool.Env, g gated, call provider.ToolCall) (tool.Result, string) {
	t := g.tool
	if why := a.Withheld[call.Name]; t == nil && why != "" {
		return tool.Result{Output: fmt.Sprintf("%s was not run: %s", call.Name, why), IsError: true}, "refused"
	}
	if t == nil {
		out := fmt.Sprintf("unknown tool %q: this agent has no such tool", call.Name)
		// An MCP server's tool may be missing because its server is not
		// ready: say why (a login to run, a start that failed).
		if a.Note != nil && strings.HasPrefix(call.Name, "mcp__") {
			if n := a.Note(); n != "" {
				out += "; " + n
			}
		}
		return tool.Result{Output: out, IsError: true}, "unknown"
	}
	if g.v.Decision == gate.Deny {
		return tool.Result{Output: fmt.Sprintf("%s was not run: %s", call.Name, g.v.Why), IsError: true}, "refused"
	}
	// The hooks run after everything that refuses; what they decide
	// goes back through the gate with the rest.
	if pre := h.Hook(ctx, HookPreToolUse, &call, nil); hookDecision(pre) != "" {
		g.req.Hook, g.req.HookWhy = hookDecision(pre), pre.Reason
		if g.v = a.decide(g.req); g.v.Decision == gate.Deny {
			return tool.Result{Output: fmt.Sprintf("%s was not run: %s", call.Name, g.v.Why), IsError: true}, "refused"
		}
	}
	decision := "auto"
	if g.v.Decision == gate.Ask {
		d := h.Approve(ctx, ApprovalRequest{ToolCallID: call.ID, ToolName: call.Name, Input: call.Input, Summary: t.Summary(call.Input), Kind: g.kind, Rule: g.v.Why})
		if !d.Allow {
			return tool.Result{Output: fmt.Sprintf("%s was not run: %s", call.Name, d.Why), IsError: true}, "rejected"
		}
		decision = "allowed"
	}
	// This call's own env: its progress is said as the call's; the mode
	// it was gated under confines it.
	ce := *env
	ce.CallID = call.ID
	ce.Confine = g.req.Mode != RiskFull
	if g.v.ReadOnly && ce.Sandbox != nil {
		sb := *ce.Sandbox
		sb.ReadOnly = true
		ce.Sandbox = &sb
	}
	var last time.Time
	var pmu sync.Mutex
	ce.Progress = func(progress, total float64, message string) {
		// A server that floods progress costs at most five events a
		// second (each is stored); reaching the total always shows.
		pmu.Lock()
		defer pmu.Unlock()
		if now := time.Now(); now.Sub(last) >= 200*time.Millisecond || (total > 0 && progress >= total) {
			last = now
			ev := protocol.ToolProgressEvent{ToolCallID: call.ID, Progress: progress, Message: message}
			if total > 0 {
				ev.Total = &total
			}
			h.Emit(ev)
		}
	}
	ce.Sample = func(ctx context.Context, sr tool.SampleRequest) (tool.SampleResult, error) {
		return a.sample(ctx, h, call, sr)
	}
	env = &ce
	eff := tool.EffectOf(t, env, call.Input)
	var r tool.Result
	if len(eff.Paths) == 0 && !eff.Anything {
		r = t.Run(ctx, env, call.Input)
	} else {
		h.Changing(eff)
		r = t.Run(ctx, env, call.Input)
		h.Changed(eff)
	}
	if post := h.Hook(ctx, HookPostToolUse, &call, &r); post.Block {
		r.Output += "\n[a PostToolUse hook: " + post.Reason + "]"
	}
	return r, decision
}

// concurrent says whether call's tool runs beside other calls of such
// tools (tool.Concurrent).
func concurrent(byName map[string]tool.Tool, call provider.ToolCall) bool {
	c, ok := byName[call.Name].(tool.Concurrent)
	return ok && c.Concurrent()
}

// maxTokensNotice names the output limit a reply reached and the config
// key that raises it.
func (a *Agent) maxTokensNotice() string {
	info := a.Provider.Info()
	if a.MaxTokens > 0 && a.Where != "" {
		return fmt.Sprintf("the reply reached its output limit, max_tokens = %d: raise max_tokens under [%s] in config.toml", a.MaxTokens, a.Where)
	}
	if info.MaxTokens > 0 {
		return fmt.Sprintf("the reply reached its output limit, max_tokens = %d: raise max_tokens under [providers.%s] in config.toml", info.MaxTokens, info.Name)
	}
	return fmt.Sprintf("the reply reached the server's output limit: set max_tokens under [providers.%s] in config.toml to ask for more", info.Name)
}

// modeNote tells the model the session's mode (its risk level) when it
// is not the default (supervised), read at each model call (a mode may
// switch mid-turn): the model knows it is in plan mode before a refusal
// says so. planExit: the turn has exit_plan.
func modeNote(risk string, planExit bool) string {
	if risk == "" || risk == RiskSupervised {
		return ""
	}
	for _, l := range protocol.RiskLevels {
		if l.ID != risk {
			continue
		}
		n := fmt.Sprintf("The session is in the %s mode (%s): %s.", l.Name, l.ID, l.Description)
		if risk == protocol.RiskPlan && planExit {
			n += " When the plan is ready, call exit_plan with it: the user decides whether to leave the plan mode."
		}
		return n
	}
	return ""
}
