package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

type host struct {
	mu      sync.Mutex
	events  []protocol.EventBody
	record  []provider.Message
	approve func(ApprovalRequest) Decision
	asked   []ApprovalRequest
	// standing answers Standing (nil: no standing decision).
	standing func(name string) (Decision, bool)
	onChunk  func()
	view     provider.Transcript // the kept view (Cut, CutTokens, Summary)
	// charged are the calls' usages; limit (0: none) is the budget on
	// their summed cost.
	charged []provider.Usage
	limit   float64
	effects []string // what Changing and Changed were told
	hook    func(event string, call *provider.ToolCall, r *tool.Result) HookVerdict
	steer   func(final bool) []provider.Message
}

func (h *host) Charge(u provider.Usage)     { h.charged = append(h.charged, u) }
func (h *host) Notices() []provider.Message { return nil }

func (h *host) Steers(final bool) []provider.Message {
	if h.steer == nil {
		return nil
	}
	return h.steer(final)
}
func (h *host) Hook(ctx context.Context, event string, call *provider.ToolCall, r *tool.Result) HookVerdict {
	if h.hook == nil {
		return HookVerdict{}
	}
	return h.hook(event, call, r)
}
func (h *host) Changing(e tool.Effect) { h.effects = append(h.effects, "changing:"+effectString(e)) }
func (h *host) Changed(e tool.Effect)  { h.effects = append(h.effects, "changed:"+effectString(e)) }

func effectString(e tool.Effect) string {
	if e.Anything {
		return "anything"
	}
	var names []string
	for _, p := range e.Paths {
		names = append(names, filepath.Base(p))
	}
	return strings.Join(names, ",")
}
func (h *host) Budget() string {
	var spent float64
	for _, u := range h.charged {
		spent += u.CostUSD
	}
	if h.limit > 0 && spent >= h.limit {
		return fmt.Sprintf("spent %g of %g", spent, h.limit)
	}
	return ""
}

func (h *host) Emit(e protocol.EventBody) {
	h.mu.Lock()
	h.events = append(h.events, e)
	f := h.onChunk
	h.mu.Unlock()
	if _, ok := e.(protocol.AgentMessageChunkEvent); ok && f != nil {
		f()
	}
}
func (h *host) Approve(ctx context.Context, r ApprovalRequest) Decision {
	h.asked = append(h.asked, r)
	if h.approve == nil {
		return Decision{Allow: true}
	}
	return h.approve(r)
}
func (h *host) Standing(name string, _ json.RawMessage) (Decision, bool) {
	if h.standing == nil {
		return Decision{}, false
	}
	return h.standing(name)
}

func (h *host) Elicitor() func(context.Context, tool.Elicitation) (tool.Answer, error) { return nil }
func (h *host) ClientTerminal() func(context.Context, tool.TerminalRun) (tool.TerminalOutcome, error) {
	return nil
}
func (h *host) ClientFS() *tool.ClientFS { return nil }
func (h *host) Record(m provider.Message) provider.Transcript {
	h.record = append(h.record, m)
	t := provider.NewTranscript(h.record)
	t.Cut, t.CutTokens, t.Summary = h.view.Cut, h.view.CutTokens, h.view.Summary
	return t
}

func (h *host) Trimmed(t provider.Transcript, dropped int, reason string) { h.view = t }

func (h *host) kinds() string {
	var s []string
	for _, e := range h.events {
		switch e := e.(type) {
		case protocol.AgentMessageChunkEvent:
			s = append(s, "text")
		case protocol.AgentThoughtChunkEvent:
			s = append(s, "thought")
		case protocol.ToolCallEvent:
			s = append(s, "call:"+e.Name)
		case protocol.ToolResultEvent:
			s = append(s, fmt.Sprintf("result:%s:%v", e.Name, e.IsError))
		case protocol.PlanEvent:
			s = append(s, "plan")
		case protocol.ContextUsageEvent:
			s = append(s, "usage")
		}
	}
	return strings.Join(s, " ")
}

// checked is the echo model, checking that every request's estimate is
// the one a fresh count of that request gives.
type checked struct {
	provider.Echo
	t *testing.T
}

func (c *checked) Stream(ctx context.Context, req provider.Request, f func(provider.Delta)) (*provider.Response, error) {
	if want := provider.NewTranscript(req.Messages).Tokens + provider.EstimateRequest(req.System, req.Tools); req.Estimate != want {
		c.t.Errorf("request of %d messages: estimate %d, a fresh count %d", len(req.Messages), req.Estimate, want)
	}
	return c.Echo.Stream(ctx, req, f)
}

func agentWith(risk string, names ...string) *Agent {
	a := &Agent{Provider: &provider.Echo{}, Risk: risk, MaxRequests: 5}
	for _, n := range names {
		t, _ := tool.Lookup(n)
		a.Tools = append(a.Tools, t)
	}
	return a
}

func TestTurnWithToolCall(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("content!"), 0o644)
	h := &host{}
	a := agentWith(RiskSupervised, "read_file", "plan")
	a.System = "You are a test."
	a.Provider = &checked{t: t}
	out := a.Run(context.Background(), h, dir, "look\n/tool read_file {\"path\":\"f.txt\"}\n/tool plan {\"entries\":[{\"content\":\"x\",\"status\":\"pending\",\"priority\":\"low\"}]}")
	if out.StopReason != StopEndTurn || out.Err != nil {
		t.Fatalf("outcome %+v", out)
	}
	if got, want := h.kinds(), "text text usage call:read_file result:read_file:false call:plan plan result:plan:false text text text text text text text text text text text usage"; got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if out.Content != "tool read_file returned: content!\ntool plan returned: plan updated (1 entries)" {
		t.Errorf("content %q", out.Content)
	}
	roles := []string{}
	for _, m := range h.record {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,tool,assistant" {
		t.Errorf("transcript roles %v", roles)
	}
	if len(h.asked) != 0 {
		t.Errorf("read_file asked for approval: %v", h.asked)
	}
}

func TestRiskLevels(t *testing.T) {
	dir := t.TempDir()
	prompt := "/tool write_file {\"path\":\"x\",\"content\":\"y\"}"
	// readonly: refused without asking.
	h := &host{}
	agentWith(RiskReadonly, "write_file").Run(context.Background(), h, dir, prompt)
	if len(h.asked) != 0 || !strings.Contains(h.record[2].Text, "read-only") || !h.record[2].IsError {
		t.Errorf("readonly: asked %v, result %+v", h.asked, h.record[2])
	}
	// supervised, rejected: not run, the model hears why.
	h = &host{approve: func(ApprovalRequest) Decision { return Decision{Why: "rejected by the user"} }}
	agentWith(RiskSupervised, "write_file").Run(context.Background(), h, dir, prompt)
	if len(h.asked) != 1 || h.asked[0].Summary != "Write x (1 bytes)" || h.record[2].Text != "write_file was not run: rejected by the user" {
		t.Errorf("supervised reject: asked %v, result %+v", h.asked, h.record[2])
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("rejected write happened")
	}
	// full: runs without asking.
	h = &host{}
	agentWith(RiskFull, "write_file").Run(context.Background(), h, dir, prompt)
	if len(h.asked) != 0 {
		t.Errorf("full asked: %v", h.asked)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x")); string(b) != "y" {
		t.Errorf("full: file %q", b)
	}
	// A tool the agent does not have.
	h = &host{}
	agentWith(RiskFull).Run(context.Background(), h, dir, "/tool shell {\"command\":\"true\"}")
	if !strings.Contains(h.record[2].Text, `unknown tool "shell"`) {
		t.Errorf("unknown tool: %+v", h.record[2])
	}
}

// A tool call says whether approval will be asked, exactly when it is:
// a tool that asks, under supervised, with no standing decision.
func TestToolCallSaysWhetherItWillAsk(t *testing.T) {
	dir := t.TempDir()
	prompt := "/tool write_file {\"path\":\"x\",\"content\":\"y\"}\n/tool read_file {\"path\":\"x\"}"
	allow := func(ApprovalRequest) Decision { return Decision{Allow: true} }
	always := func(name string) (Decision, bool) { return Decision{Allow: true}, name == "write_file" }
	never := func(name string) (Decision, bool) {
		return Decision{Why: "rejected for the session"}, name == "write_file"
	}
	for _, c := range []struct {
		name, risk string
		standing   func(string) (Decision, bool)
		want       string // each call: name:kind:needsApproval
		asked      int
	}{
		{"supervised", RiskSupervised, nil, "write_file:edit:true read_file:read:false", 1},
		{"supervised, allowed for the session", RiskSupervised, always, "write_file:edit:false read_file:read:false", 0},
		{"supervised, refused for the session", RiskSupervised, never, "write_file:edit:false read_file:read:false", 0},
		{"full", RiskFull, nil, "write_file:edit:false read_file:read:false", 0},
		{"readonly", RiskReadonly, nil, "write_file:edit:false read_file:read:false", 0},
	} {
		h := &host{approve: allow, standing: c.standing}
		agentWith(c.risk, "write_file", "read_file").Run(context.Background(), h, dir, prompt)
		var got []string
		for _, e := range h.events {
			if tc, ok := e.(protocol.ToolCallEvent); ok {
				got = append(got, fmt.Sprintf("%s:%s:%v", tc.Name, tc.Kind, tc.NeedsApproval))
				if tc.Title != tool.Title(tc.Name, tc.RawInput) {
					t.Errorf("%s: title %q", c.name, tc.Title)
				}
			}
		}
		if strings.Join(got, " ") != c.want || len(h.asked) != c.asked {
			t.Errorf("%s: calls %v, asked %d; want %s, asked %d", c.name, got, len(h.asked), c.want, c.asked)
		}
		if c.standing != nil && strings.Contains(fmt.Sprint(h.record), "rejected") != (c.name == "supervised, refused for the session") {
			t.Errorf("%s: results %v", c.name, h.record)
		}
	}
}

func TestMaxTurnRequestsAndErrors(t *testing.T) {
	// The echo provider calls the tool only on the first request, so a
	// limit of one request ends the turn after the tools ran.
	a := agentWith(RiskFull, "list_dir")
	a.MaxRequests = 1
	h := &host{}
	out := a.Run(context.Background(), h, t.TempDir(), "/tool list_dir {}")
	if out.StopReason != StopMaxTurnRequests {
		t.Errorf("stop %q", out.StopReason)
	}
	out = a.Run(context.Background(), &host{}, t.TempDir(), "/fail model down")
	if out.StopReason != StopError || out.Err == nil || !strings.Contains(out.Err.Error(), "model down") {
		t.Errorf("error outcome %+v", out)
	}
}

func TestCancelMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	h := &host{}
	h.onChunk = func() {
		if n++; n == 3 {
			cancel()
		}
	}
	out := agentWith(RiskFull).Run(ctx, h, t.TempDir(), "/chunks 1000")
	if out.StopReason != StopCancelled || out.Content != "ok ok ok " {
		t.Errorf("outcome %+v", out)
	}
	if last := h.record[len(h.record)-1]; last.Role != provider.RoleAssistant || last.Text != "ok ok ok " {
		t.Errorf("partial text not kept in the transcript: %+v", last)
	}
}

// small is the echo model with a small context window, recording what
// it is sent.
type small struct {
	provider.Echo
	window int64
	reqs   []provider.Request
}

func (s *small) ContextWindow(string) int64 { return s.window }
func (s *small) Stream(ctx context.Context, req provider.Request, f func(provider.Delta)) (*provider.Response, error) {
	s.reqs = append(s.reqs, req)
	if strings.HasPrefix(req.System, "You summarise") {
		return &provider.Response{Text: fmt.Sprintf("SUMMARY %d", len(s.reqs)), StopReason: provider.StopEndTurn}, nil
	}
	return s.Echo.Stream(ctx, req, f)
}

// A long session on a small context window: no request passes the
// window, older turns are summarised out of the model's view, and the
// transcript keeps every message.
func TestCompactionKeepsRequestsWithinTheWindow(t *testing.T) {
	p := &small{window: 4000}
	a := &Agent{Provider: p, System: "system", MaxRequests: 5}
	h := &host{}
	long := strings.Repeat("word ", 400) // 500 tokens
	for i := range 40 {
		if out := a.Run(context.Background(), h, t.TempDir(), fmt.Sprintf("turn %d %s", i, long)); out.StopReason != StopEndTurn {
			t.Fatalf("turn %d: %+v", i, out)
		}
	}
	trims, summaries := 0, 0
	for _, e := range h.events {
		if tr, ok := e.(protocol.HistoryTrimmedEvent); ok {
			trims++
			if tr.DroppedMessages == 0 || tr.KeptTurns == 0 || tr.Reason != "context_window" {
				t.Errorf("trim event %+v", tr)
			}
		}
	}
	for _, r := range p.reqs {
		if strings.HasPrefix(r.System, "You summarise") {
			summaries++
			continue
		}
		sent := provider.NewTranscript(r.Messages).Tokens + provider.EstimateRequest(r.System, r.Tools)
		if sent > p.window {
			t.Fatalf("a request of %d tokens passed the window of %d", sent, p.window)
		}
	}
	if trims == 0 || summaries != trims {
		t.Fatalf("%d trims, %d summaries", trims, summaries)
	}
	if len(h.record) != 80 {
		t.Fatalf("the transcript has %d messages, want all 80", len(h.record))
	}
	last := p.reqs[len(p.reqs)-1]
	if !strings.Contains(last.System, "<earlier_conversation>") || !strings.Contains(last.System, "SUMMARY") {
		t.Fatalf("the model is not told what was left out:\n%s", last.System)
	}
	// Forced: all but the last turn.
	view := a.Compact(context.Background(), h, h.Record(provider.Message{Role: provider.RoleUser, Text: "now"}))
	if view.Turns() != 1 {
		t.Fatalf("after /compact the view has %d turns", view.Turns())
	}
}

// counting is the echo model, counting its calls.
type counting struct {
	provider.Echo
	calls int
}

func (c *counting) Stream(ctx context.Context, req provider.Request, f func(provider.Delta)) (*provider.Response, error) {
	c.calls++
	return c.Echo.Stream(ctx, req, f)
}

func TestBudget(t *testing.T) {
	dir := t.TempDir()
	price := provider.Price{Input: 1e6, Output: 2e6} // $1 an input token, $2 an output one
	priced := func(a *Agent) *Agent {
		a.Price = func(string) (provider.Price, bool) { return price, true }
		return a
	}

	// Usage and cost are summed over the turn's calls and charged call
	// by call.
	h := &host{}
	a := priced(agentWith(RiskFull, "list_dir"))
	out := a.Run(context.Background(), h, dir, "/tool list_dir {}")
	if out.StopReason != StopEndTurn || len(h.charged) != 2 {
		t.Fatalf("outcome %+v, charged %+v", out, h.charged)
	}
	var sum provider.Usage
	for _, u := range h.charged {
		if !u.Priced || u.CostUSD != price.Cost(u) || u.CostUSD == 0 {
			t.Errorf("charged %+v: cost is not the price's %v", u, price.Cost(u))
		}
		sum.Add(u)
	}
	if out.Usage != sum {
		t.Errorf("turn usage %+v, calls summed %+v", out.Usage, sum)
	}

	// A turn that would start past the limit never calls the model, and
	// its prompt stays out of the transcript.
	c := &counting{}
	a = priced(agentWith(RiskFull, "list_dir"))
	a.Provider = c
	h = &host{limit: 1, charged: []provider.Usage{{CostUSD: 1, Priced: true}}}
	out = a.Run(context.Background(), h, dir, "hello")
	if out.StopReason != StopBudget || out.Notice != "spent 1 of 1" || c.calls != 0 || len(h.record) != 0 {
		t.Errorf("past the budget: %+v, %d model calls, transcript %v", out, c.calls, h.record)
	}

	// A call that crosses it ends the turn after that call: its tool
	// calls are answered unrun, so the transcript stays valid.
	c = &counting{}
	a.Provider = c
	h = &host{limit: 5}
	out = a.Run(context.Background(), h, dir, "/tool list_dir {}")
	if out.StopReason != StopBudget || c.calls != 1 || !strings.HasPrefix(out.Notice, "spent ") {
		t.Fatalf("crossing the budget: %+v after %d calls", out, c.calls)
	}
	if got := h.kinds(); got != "usage" {
		t.Errorf("events %s: the tool must not run", got)
	}
	last := h.record[len(h.record)-1]
	if len(h.record) != 3 || last.Role != provider.RoleTool || !last.IsError || !strings.Contains(last.Text, "not run: spent ") {
		t.Errorf("transcript %+v", h.record)
	}

	// An unknown price counts no cost, so no budget stops it.
	h = &host{limit: 0.000001}
	out = agentWith(RiskFull).Run(context.Background(), h, dir, "hi")
	if out.StopReason != StopEndTurn || out.Usage.Priced || out.Usage.CostUSD != 0 {
		t.Errorf("unpriced: %+v", out)
	}
}

// A turn's own bound (a goal's budget) is asked before each model call
// and each tool call: once reached, the calls left are answered unrun
// and no model call follows; the turn ends budget, saying why.
func TestBound(t *testing.T) {
	dir := t.TempDir()
	ran := func(h *host) int { // the tool results recorded
		n := 0
		for _, m := range h.record {
			if m.Role == provider.RoleTool && !strings.HasPrefix(m.Text, "not run") {
				n++
			}
		}
		return n
	}
	// Reached after the first of two tool calls: the second is not run.
	c := &counting{}
	h := &host{}
	a := agentWith(RiskFull, "list_dir")
	a.Provider = c
	a.Bound = func() string {
		if ran(h) >= 1 {
			return "the goal's time is up"
		}
		return ""
	}
	out := a.Run(context.Background(), h, dir, "/tool list_dir {}\n/tool list_dir {}")
	if out.StopReason != StopBudget || out.Notice != "the goal's time is up" || c.calls != 1 || ran(h) != 1 {
		t.Fatalf("bound between tool calls: %+v, %d model calls, %d tools ran", out, c.calls, ran(h))
	}
	if last := h.record[len(h.record)-1]; last.Role != provider.RoleTool || !last.IsError || last.Text != "not run: the goal's time is up" {
		t.Errorf("the call not run: %+v", last)
	}
	// Reached once the calls ran: no model call follows them.
	c = &counting{}
	h = &host{}
	a.Provider = c
	out = a.Run(context.Background(), h, dir, "/tool list_dir {}")
	if out.StopReason != StopBudget || c.calls != 1 || ran(h) != 1 {
		t.Fatalf("bound before the next model call: %+v, %d model calls", out, c.calls)
	}
	// Reached before the turn: the model is never called.
	c = &counting{}
	a.Provider = c
	a.Bound = func() string { return "spent" }
	if out = a.Run(context.Background(), &host{}, dir, "hi"); out.StopReason != StopBudget || out.Notice != "spent" || c.calls != 0 {
		t.Fatalf("bound before the turn: %+v, %d model calls", out, c.calls)
	}
}

// Each call that may change the disk is bracketed by Changing and
// Changed with what it may change; calls that only look are not.
func TestToolCallsSayWhatTheyMayChange(t *testing.T) {
	h := &host{}
	a := agentWith(RiskFull, "write_file", "read_file", "shell", "ask_user")
	a.Run(context.Background(), h, t.TempDir(), "/tool write_file {\"path\":\"x.txt\",\"content\":\"y\"}\n/tool read_file {\"path\":\"x.txt\"}\n/tool shell {\"command\":\"true\"}")
	if got, want := strings.Join(h.effects, " "), "changing:x.txt changed:x.txt changing:anything changed:anything"; got != want {
		t.Errorf("effects %q, want %q", got, want)
	}
}

// Hooks: PreToolUse refuses or allows, PostToolUse adds to the result,
// Stop sends the turn on at most MaxStopContinues times.
func TestHooks(t *testing.T) {
	dir := t.TempDir()
	stops := 0
	h := &host{hook: func(event string, call *provider.ToolCall, r *tool.Result) HookVerdict {
		switch event {
		case HookPreToolUse:
			if call.Name == "write_file" {
				return HookVerdict{Block: true, Reason: "no writes"}
			}
			return HookVerdict{Permission: "allow"}
		case HookPostToolUse:
			return HookVerdict{Block: true, Reason: "seen " + call.Name}
		case HookStop:
			stops++
			return HookVerdict{Block: true, Reason: "go on"}
		}
		return HookVerdict{}
	}}
	a := agentWith(RiskSupervised, "write_file", "list_dir", "shell")
	a.MaxStopContinues = 2
	out := a.Run(context.Background(), h, dir, "/tool write_file {\"path\":\"x\",\"content\":\"y\"}\n/tool shell {\"command\":\"true\"}")
	if out.StopReason != StopEndTurn || len(h.asked) != 0 {
		t.Fatalf("outcome %+v, asked %v (the hook allowed shell)", out, h.asked)
	}
	var results []string
	for _, e := range h.events {
		if r, ok := e.(protocol.ToolResultEvent); ok {
			results = append(results, r.RawOutput)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "a PreToolUse hook refused it: no writes") || !strings.Contains(results[1], "[a PostToolUse hook: seen shell]") {
		t.Errorf("results %q", results)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("the refused write happened")
	}
	users := 0
	for _, m := range h.record {
		if m.Role == provider.RoleUser && m.Text == "go on" {
			users++
		}
	}
	if stops != 2 || users != 2 {
		t.Errorf("the Stop hook ran %d times, sent the turn on %d times; want 2 each", stops, users)
	}
}

// A steer joins before the next model call; one waiting when the model
// would stop makes it call again; the turn ends when none waits.
func TestSteersReachTheNextCall(t *testing.T) {
	c := &counting{}
	pending := []provider.Message{{Role: provider.RoleUser, Text: "use the other file"}}
	finals := 0
	h := &host{steer: func(final bool) []provider.Message {
		if final {
			finals++
		}
		out := pending
		pending = nil
		return out
	}}
	a := agentWith(RiskFull, "list_dir")
	a.Provider = c
	out := a.Run(context.Background(), h, t.TempDir(), "/tool list_dir {}")
	if out.StopReason != StopEndTurn || c.calls != 2 {
		t.Fatalf("outcome %+v after %d calls", out, c.calls)
	}
	var roles []string
	for _, m := range h.record {
		roles = append(roles, m.Role+":"+m.Text)
	}
	// prompt, the call, its result, the steer, the answer.
	if len(h.record) != 5 || h.record[3].Text != "use the other file" || h.record[3].Role != provider.RoleUser {
		t.Errorf("transcript %q", roles)
	}
	// A steer at the end: the model is called once more.
	c = &counting{}
	a.Provider = c
	pending = nil
	late := true
	h = &host{steer: func(final bool) []provider.Message {
		if final && late {
			late = false
			return []provider.Message{{Role: provider.RoleUser, Text: "one more thing"}}
		}
		return nil
	}}
	if out := a.Run(context.Background(), h, t.TempDir(), "hello"); out.StopReason != StopEndTurn || c.calls != 2 || out.Content != "echo: one more thing" {
		t.Errorf("a steer at the end: %+v after %d calls", out, c.calls)
	}
}

// systems is the echo model, keeping each request's system prompt.
type systems struct {
	provider.Echo
	got []string
}

func (s *systems) Stream(ctx context.Context, req provider.Request, f func(provider.Delta)) (*provider.Response, error) {
	s.got = append(s.got, req.System)
	return s.Echo.Stream(ctx, req, f)
}

// The system prompt says the session's mode when it is not the default:
// a model in plan mode knows it before a refusal tells it; in the default
// mode nothing is added.
func TestSystemPromptSaysTheMode(t *testing.T) {
	for _, c := range []struct {
		risk, want string
	}{
		{RiskSupervised, ""},
		{protocol.RiskPlan, "The session is in the Plan mode (plan): looks around and writes a plan"},
		{RiskFull, "The session is in the Full access mode (full): never asks."},
	} {
		p := &systems{}
		a := agentWith(c.risk)
		a.System, a.Provider = "You are a test.", p
		if out := a.Run(context.Background(), &host{}, t.TempDir(), "hi"); out.Err != nil {
			t.Fatal(out.Err)
		}
		if len(p.got) != 1 {
			t.Fatalf("%s: %d requests", c.risk, len(p.got))
		}
		if c.want == "" && (p.got[0] != "You are a test." || strings.Contains(p.got[0], "mode")) {
			t.Errorf("%s: system prompt %q", c.risk, p.got[0])
		}
		if c.want != "" && !strings.Contains(p.got[0], c.want) {
			t.Errorf("%s: system prompt %q, want it to hold %q", c.risk, p.got[0], c.want)
		}
	}
}
