package subagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/subagents"
)

// A foreground task answers with its child's answer. The child is a
// session of its own (its history, its lineage) and its parent is told
// its start and end (subagent_update) and, as it works, what it does
// (tool_progress of the task call); session/get lists it.
func TestForegroundTask(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	r := d.call(t, cl, c, sid, `task {"description":"look around","prompt":"/tool list_dir {}"}`)
	child := subagent(t, r)
	if r.IsError || !strings.HasPrefix(r.RawOutput, "tool list_dir returned: ") || child.State != protocol.SubagentCompleted ||
		child.Description != "look around" || child.Agent != "default" || child.ToolCallID != r.ToolCallID || child.Summary != r.RawOutput || child.Usage == nil {
		t.Fatalf("a foreground task: %+v, its child %+v", r, child)
	}
	ups := updates(t, c, sid)
	if len(ups) != 2 || ups[0].State != protocol.SubagentRunning || ups[0].SessionID != child.SessionID || ups[0].ToolCallID != r.ToolCallID ||
		ups[1].State != protocol.SubagentCompleted || ups[1].Summary != r.RawOutput {
		t.Fatalf("subagent_update events: %+v", ups)
	}
	// The child's first step, told to its parent as the task call's
	// progress.
	var progress []protocol.ToolProgressEvent
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.ToolProgressEvent); ok && u.SessionID == sid {
			progress = append(progress, e)
		}
	}
	if len(progress) == 0 || progress[0].ToolCallID != r.ToolCallID || progress[0].Message != "list_dir" || progress[0].Progress != 1 {
		t.Fatalf("the child's progress in the parent: %+v", progress)
	}
	if n := d.sa.Running(); n != 0 {
		t.Fatalf("%d sub-agents running after the task answered", n)
	}
	info := d.info(t, sid)
	if len(info.Children) != 1 || info.Children[0].SessionID != child.SessionID || info.Children[0].State != protocol.SubagentCompleted {
		t.Fatalf("session/get's children: %+v", info.Children)
	}
	ci := d.info(t, child.SessionID)
	if ci.ParentSessionID != sid || ci.ParentToolCallID != r.ToolCallID || ci.Depth != 1 {
		t.Fatalf("the child's lineage: %+v", ci.Lineage)
	}
	hist, err := d.M.Archive().History(context.Background(), protocol.SessionHistoryParams{SessionID: child.SessionID}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var prompted bool
	for _, raw := range hist.Events {
		u, _ := protocol.ParseUpdate(raw)
		if m, ok := u.Event.(protocol.UserMessageEvent); ok && m.Text == "/tool list_dir {}" {
			prompted = true
		}
	}
	if !prompted {
		t.Fatalf("the child's history has no prompt: %d events", len(hist.Events))
	}
}

// The agents a task may run: the config's (with their tools) and the
// project's agent files; an agent that exists in neither is refused; a
// child that fails is told failed, with the failure.
func TestTaskAgents(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Agents["reviewer"] = config.Agent{Provider: config.KindEcho, Risk: protocol.RiskFull, Description: "reviews a change", Tools: []string{"read_file", "list_dir"}, MaxTurnRequests: 50}
	})
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	cwd := d.info(t, sid).Cwd
	if err := os.MkdirAll(filepath.Join(cwd, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "agents", "planner.md"), []byte("---\nname: planner\ndescription: Plans the work\ntools: Read\n---\nYou plan.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The config's agent: no shell.
	r := d.call(t, cl, c, sid, `task {"description":"try a command","agent":"reviewer","prompt":"/tool shell {\"command\":\"echo hi\"}"}`)
	if ch := subagent(t, r); ch.Agent != "reviewer" || !strings.Contains(r.RawOutput, "tool shell failed: unknown tool") {
		t.Fatalf("the reviewer's task: %+v", r)
	}
	// The project's agent: shown to the user before it first runs
	// (refused: nothing runs; allowed: it runs, and is not asked again).
	ask, r := d.callAnswering(t, cl, c, sid, `task {"description":"plan it","agent":"planner","prompt":"make a plan"}`, protocol.DecisionRejectOnce)
	if !strings.Contains(ask.Summary, "planner") || !strings.Contains(ask.Summary, "You plan.") || !strings.Contains(ask.Summary, "read_file") ||
		!r.IsError || !strings.Contains(r.RawOutput, "was not run") {
		t.Fatalf("the planner refused: %+v, %+v", ask, r)
	}
	_, r = d.callAnswering(t, cl, c, sid, `task {"description":"plan it","agent":"planner","prompt":"make a plan"}`, protocol.DecisionAllowOnce)
	if ch := subagent(t, r); ch.Agent != "planner" || r.RawOutput != "echo: make a plan" {
		t.Fatalf("the planner's task: %+v", r)
	}
	r = d.call(t, cl, c, sid, `task {"description":"plan again","agent":"planner","prompt":"again"}`)
	if ch := subagent(t, r); ch.Agent != "planner" || r.RawOutput != "echo: again" {
		t.Fatalf("the planner asked again: %+v", r)
	}
	// No such agent: refused, nothing runs.
	r = d.call(t, cl, c, sid, `task {"description":"who","agent":"nobody","prompt":"hi"}`)
	if !r.IsError || !strings.Contains(r.RawOutput, `agent "nobody"`) {
		t.Fatalf("a task for no agent: %+v", r)
	}
	if n := d.sa.Running(); n != 0 {
		t.Fatalf("%d sub-agents running after a refused start", n)
	}
	// A child whose model fails.
	r = d.call(t, cl, c, sid, `task {"description":"break","prompt":"/fail the model is down"}`)
	ch := subagent(t, r)
	if !r.IsError || ch.State != protocol.SubagentFailed || !strings.Contains(ch.Summary, "the model is down") ||
		r.RawOutput != fmt.Sprintf("sub-agent %s (break) failed: %s", ch.SessionID, ch.Summary) {
		t.Fatalf("a failed child: %+v", r)
	}
	if kids := d.info(t, sid).Children; len(kids) != 4 {
		t.Fatalf("session/get's children: %+v", kids)
	}
}

// A background task answers at once; task_status says it runs; it is
// told when it ends (subagent_update, and its answer to the parent's
// model before its next call); task_status then gives its answer;
// task_send to it runs a new turn and answers; task_cancel stops one
// that runs; an id that is no child is refused.
func TestBackgroundTask(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")

	r := d.call(t, cl, c, sid, `task {"description":"in the back","prompt":"background work","background":true}`)
	bg := subagent(t, r)
	if r.IsError || bg.State != protocol.SubagentRunning || !bg.Background ||
		r.RawOutput != fmt.Sprintf("sub-agent %s (in the back) is running in the background: task_status, task_send and task_cancel reach it by this id; you are told when it ends.", bg.SessionID) {
		t.Fatalf("a background task: %+v", r)
	}
	if end := ended(t, c, sid, bg.SessionID); end.State != protocol.SubagentCompleted || end.Summary != "echo: background work" {
		t.Fatalf("its end: %+v", end)
	}
	if st := d.call(t, cl, c, sid, fmt.Sprintf(`task_status {"id":%q}`, bg.SessionID)); st.IsError || st.RawOutput != "echo: background work" {
		t.Fatalf("task_status of an ended child: %+v", st)
	}
	// The parent's model was told before its next call.
	if err := h.Store.Sync(); err != nil {
		t.Fatal(err)
	}
	if !told(t, h.Store, sid, fmt.Sprintf("[sub-agent %s (in the back) completed; its answer:\necho: background work\n]", bg.SessionID)) {
		t.Fatalf("the parent's model was not told the child's end")
	}
	// task_send to an ended child: a new turn, its answer.
	if st := d.call(t, cl, c, sid, fmt.Sprintf(`task_send {"id":%q,"prompt":"and more"}`, bg.SessionID)); st.IsError || st.RawOutput != "echo: and more" {
		t.Fatalf("task_send to an ended child: %+v", st)
	}

	// A long one: running, then cancelled.
	r = d.call(t, cl, c, sid, `task {"description":"long one","prompt":"/delay 60000\nnever done soon","background":true}`)
	long := subagent(t, r)
	if st := d.call(t, cl, c, sid, fmt.Sprintf(`task_status {"id":%q}`, long.SessionID)); st.RawOutput != fmt.Sprintf("sub-agent %s (long one) is still running", long.SessionID) {
		t.Fatalf("task_status of a running child: %+v", st)
	}
	if kids := d.info(t, sid).Children; len(kids) != 2 || kids[0].State != protocol.SubagentCompleted || kids[1].State != protocol.SubagentRunning {
		t.Fatalf("session/get's children: %+v", kids)
	}
	if n := d.sa.Running(); n != 1 {
		t.Fatalf("%d sub-agents running", n)
	}
	st := d.call(t, cl, c, sid, fmt.Sprintf(`task_cancel {"id":%q}`, long.SessionID))
	if st.IsError || st.RawOutput != fmt.Sprintf("sub-agent %s (long one) cancelled", long.SessionID) {
		t.Fatalf("task_cancel: %+v", st)
	}
	if end := ended(t, c, sid, long.SessionID); end.State != protocol.SubagentCancelled {
		t.Fatalf("the cancelled child's end: %+v", end)
	}
	if n := d.sa.Running(); n != 0 {
		t.Fatalf("%d sub-agents running after the cancel", n)
	}
	d.Prompt(t, cl, sid, "next")
	if err := h.Store.Sync(); err != nil {
		t.Fatal(err)
	}
	if !told(t, h.Store, sid, fmt.Sprintf("[sub-agent %s (long one) cancelled]", long.SessionID)) {
		t.Fatalf("the parent's model was not told the cancel")
	}
	for _, line := range []string{`task_status {"id":"ses_nope"}`, `task_send {"id":"ses_nope","prompt":"hi"}`, `task_cancel {"id":"ses_nope"}`} {
		if st := d.call(t, cl, c, sid, line); !st.IsError || st.RawOutput != `no sub-agent "ses_nope" of this session` {
			t.Fatalf("%s: %+v", line, st)
		}
	}
}

// told says whether the session's transcript (what its model is sent)
// holds a user message text.
func told(t *testing.T, st *store.Store, sid, text string) bool {
	t.Helper()
	bodies, err := st.Messages(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		var m provider.Message
		if json.Unmarshal(b, &m) == nil && m.Role == provider.RoleUser && m.Text == text {
			return true
		}
	}
	return false
}

// task_send into a running child steers it: a supervised child waits for
// its command's approval (shown in its parent and answered there), the
// parent sends it more meanwhile, and the child's next model call reads
// it: its answer is the steer's.
func TestTaskSendSteersARunningChild(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = protocol.RiskSupervised
		c.Agents["default"] = a
	})
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	r := d.call(t, cl, c, sid, `task {"description":"asks first","prompt":"/tool shell {\"command\":\"echo child\"}","background":true}`)
	child := subagent(t, r)
	ask := of(t, c, sid, func(e protocol.ApprovalRequestEvent) bool { return e.Subagent != nil })
	if ask.Subagent.SessionID != child.SessionID || ask.ToolName != "shell" {
		t.Fatalf("the child's approval in the parent: %+v", ask)
	}
	st := d.call(t, cl, c, sid, fmt.Sprintf(`task_send {"id":%q,"prompt":"steered in"}`, child.SessionID))
	if st.IsError || st.RawOutput != fmt.Sprintf("sent to sub-agent %s: it reads it at its next step", child.SessionID) || subagent(t, st).State != protocol.SubagentRunning {
		t.Fatalf("task_send into a running child: %+v", st)
	}
	if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: ask.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
		t.Fatalf("approve in the parent: %v %v", ok, err)
	}
	if end := ended(t, c, sid, child.SessionID); end.State != protocol.SubagentCompleted || end.Summary != "echo: steered in" {
		t.Fatalf("the steered child's end: %+v", end)
	}
}

// The gate: task_send is refused when the child runs in a wider mode than
// its parent's now (the parent's mode narrowed since the child started);
// task_cancel still reaches it.
func TestTaskSendRefusedWhenTheChildIsWider(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	child := subagent(t, d.call(t, cl, c, sid, `task {"description":"wide","prompt":"/delay 60000\nslow","background":true}`))
	risk := protocol.RiskSupervised
	if _, err := d.M.Configure(context.Background(), cl, protocol.SessionConfigureParams{SessionID: sid, Risk: &risk}); err != nil {
		t.Fatal(err)
	}
	st := d.call(t, cl, c, sid, fmt.Sprintf(`task_send {"id":%q,"prompt":"more"}`, child.SessionID))
	if !st.IsError || !strings.Contains(st.RawOutput, "the sub-agent runs in the") || !strings.Contains(st.RawOutput, "wider than this session's") {
		t.Fatalf("task_send to a wider child: %+v", st)
	}
	if st := d.call(t, cl, c, sid, fmt.Sprintf(`task_cancel {"id":%q}`, child.SessionID)); !strings.HasSuffix(st.RawOutput, "cancelled") {
		t.Fatalf("task_cancel: %+v", st)
	}
}

// The limits: a session's children running at once ([subagents]
// max_concurrent), their depth (max_depth: a child of depth 1 has no task
// tools unless the depth allows it).
func TestSessionLimits(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Subagents.MaxConcurrent = 2 })
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`/tool task {"description":"bg %d","prompt":"/delay 60000\nbg %d","background":true}`, i, i))
	}
	d.Prompt(t, cl, sid, strings.Join(lines, "\n"))
	refused, running := 0, []string{}
	for _, u := range c.All(t) {
		if r, ok := u.Event.(protocol.ToolResultEvent); ok && r.Name == "task" {
			if r.IsError && r.RawOutput == "this session already runs 2 sub-agents, its limit ([subagents] max_concurrent): wait for one (task_status) or cancel one (task_cancel)" {
				refused++
			} else {
				running = append(running, subagent(t, r).SessionID)
			}
		}
	}
	if refused != 1 || len(running) != 2 || d.sa.Running() != 2 {
		t.Fatalf("three tasks under max_concurrent 2: %d refused, %d running, Running %d", refused, len(running), d.sa.Running())
	}
	// A later turn's task is refused too while the two run.
	if r := d.call(t, cl, c, sid, `task {"description":"later","prompt":"hi"}`); !r.IsError || !strings.HasPrefix(r.RawOutput, "this session already runs 2 sub-agents") {
		t.Fatalf("a task while two run: %+v", r)
	}
	var cancels []string
	for _, id := range running {
		cancels = append(cancels, fmt.Sprintf(`/tool task_cancel {"id":%q}`, id))
	}
	d.Prompt(t, cl, sid, strings.Join(cancels, "\n"))
	// Once they ended: another may start.
	if r := d.call(t, cl, c, sid, `task {"description":"now","prompt":"room again"}`); r.RawOutput != "echo: room again" {
		t.Fatalf("a task after the others ended: %+v", r)
	}
	// max_depth 1: the child has no task tool, and its call is refused
	// with the reason.
	r := d.call(t, cl, c, sid, `task {"description":"nest","prompt":"/tool task {\"description\":\"deeper\",\"prompt\":\"hi\"}"}`)
	if !strings.Contains(r.RawOutput, "tool task failed: task was not run: sub-agents nest at most 1 deep ([subagents] max_depth)") {
		t.Fatalf("a child starting a task at max_depth 1: %+v", r)
	}
}

// max_depth 2: a child starts its own child, which answers it, and the
// grandchild's lineage says its depth.
func TestNestedTasks(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Subagents.MaxDepth = 2 })
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	r := d.call(t, cl, c, sid, `task {"description":"nest","prompt":"/tool task {\"description\":\"deeper\",\"prompt\":\"from below\"}"}`)
	if r.IsError || r.RawOutput != "tool task returned: echo: from below" {
		t.Fatalf("a nested task: %+v", r)
	}
	child := subagent(t, r)
	kids := d.info(t, child.SessionID).Children
	if len(kids) != 1 || kids[0].Description != "deeper" || kids[0].State != protocol.SubagentCompleted {
		t.Fatalf("the child's children: %+v", kids)
	}
	if gi := d.info(t, kids[0].SessionID); gi.Depth != 2 || gi.ParentSessionID != child.SessionID {
		t.Fatalf("the grandchild's lineage: %+v", gi.Lineage)
	}
}

// The daemon runs at most subagents.MaxRunning sub-agents, whichever
// sessions start them: the next task is refused, and so is a task_send
// that would run one more; once they end, tasks start again.
func TestDaemonLimit(t *testing.T) {
	h := newHarness(t, func(c *config.Config) { c.Subagents.MaxConcurrent = subagents.MaxRunning + 1 })
	d := h.start(t)
	cl, c := client(t, "c1", "")
	one, two := d.Open(t, cl, ""), d.Open(t, cl, "")
	done := subagent(t, d.call(t, cl, c, one, `task {"description":"quick","prompt":"quick"}`))
	var lines []string
	for i := range subagents.MaxRunning + 1 {
		lines = append(lines, fmt.Sprintf(`/tool task {"description":"bg %d","prompt":"/delay 60000\nbg %d","background":true}`, i, i))
	}
	d.Prompt(t, cl, one, strings.Join(lines, "\n"))
	limit := fmt.Sprintf("the daemon already runs %d sub-agents, its limit", subagents.MaxRunning)
	refused, running := 0, []string{}
	for _, u := range c.All(t) {
		if r, ok := u.Event.(protocol.ToolResultEvent); ok && u.SessionID == one && r.Name == "task" && strings.Contains(r.RawOutput, "bg") || ok && r.RawOutput == limit {
			if r.IsError && r.RawOutput == limit {
				refused++
			} else if sa := subagent(t, r); sa.Background {
				running = append(running, sa.SessionID)
			}
		}
	}
	if refused != 1 || len(running) != subagents.MaxRunning || d.sa.Running() != subagents.MaxRunning {
		t.Fatalf("%d tasks: %d refused, %d running, Running %d", subagents.MaxRunning+1, refused, len(running), d.sa.Running())
	}
	if r := d.call(t, cl, c, two, `task {"description":"one more","prompt":"hi"}`); !r.IsError || r.RawOutput != limit {
		t.Fatalf("another session's task at the limit: %+v", r)
	}
	if r := d.call(t, cl, c, one, fmt.Sprintf(`task_send {"id":%q,"prompt":"again"}`, done.SessionID)); !r.IsError || r.RawOutput != limit {
		t.Fatalf("task_send to an ended child at the limit: %+v", r)
	}
	var cancels []string
	for _, id := range running {
		cancels = append(cancels, fmt.Sprintf(`/tool task_cancel {"id":%q}`, id))
	}
	d.Prompt(t, cl, one, strings.Join(cancels, "\n"))
	if n := d.sa.Running(); n != 0 {
		t.Fatalf("%d running after the cancels", n)
	}
	if r := d.call(t, cl, c, two, `task {"description":"one more","prompt":"hi"}`); r.RawOutput != "echo: hi" {
		t.Fatalf("a task once the others ended: %+v", r)
	}
}

// Cancelling the parent's turn cancels the foreground child it waits
// for; closing the parent cancels its background children.
func TestParentCancelledOrClosed(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	done, err := d.M.Prompt(cl, sid, `/tool task {"description":"slow","prompt":"/delay 60000\nslow"}`)
	if err != nil {
		t.Fatal(err)
	}
	fg := of(t, c, sid, func(e protocol.SubagentUpdateEvent) bool { return true }).Subagent
	if ok, err := d.M.Cancel(cl, sid); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	if res := <-done; res.StopReason != "cancelled" {
		t.Fatalf("the parent's turn: %+v", res)
	}
	if end := ended(t, c, sid, fg.SessionID); end.State != protocol.SubagentCancelled {
		t.Fatalf("the foreground child after its parent's cancel: %+v", end)
	}

	// Background children, watched by a client of their own.
	d.Prompt(t, cl, sid, `/tool task {"description":"bg a","prompt":"/delay 60000\na","background":true}`+"\n"+
		`/tool task {"description":"bg b","prompt":"/delay 60000\nb","background":true}`)
	var kids []string
	for _, u := range updates(t, c, sid) {
		if u.Background {
			kids = append(kids, u.SessionID)
		}
	}
	if len(kids) != 2 {
		t.Fatalf("background children: %v", kids)
	}
	watcher, w := client(t, "watcher", "")
	for _, k := range kids {
		d.Open(t, watcher, k)
	}
	if err := d.M.Close(cl, sid); err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]string{}
	w.Until(t, "the children's turn_complete", func(u protocol.SessionUpdate) bool {
		if tc, ok := u.Event.(protocol.TurnCompleteEvent); ok {
			outcomes[u.SessionID] = tc.Outcome
		}
		return len(outcomes) == len(kids)
	})
	for _, k := range kids {
		if outcomes[k] != protocol.OutcomeCancelled {
			t.Fatalf("the children after their parent closed: %v", outcomes)
		}
	}
}

// A child a daemon's death cut (its turn running when the daemon died)
// is told once, when its parent is loaded again: an interrupted
// subagent_update in the parent's history; loaded again later, not
// again.
func TestResumedReportsInterruptedChildren(t *testing.T) {
	h := newHarness(t, nil)
	d1 := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d1.Open(t, cl, "")
	child := subagent(t, d1.call(t, cl, c, sid, `task {"description":"cut short","prompt":"work"}`))
	other := subagent(t, d1.call(t, cl, c, sid, `task {"description":"ended well","prompt":"work"}`))
	d1.Shutdown()
	cl.Close()
	// What a daemon that died mid-turn leaves: the child's row still
	// says running.
	h.Store.SetState(child.SessionID, store.StateRunning, nil)
	if err := h.Store.Sync(); err != nil {
		t.Fatal(err)
	}
	d2 := h.start(t)
	interrupted := func() []protocol.SubagentInfo {
		t.Helper()
		if err := h.Store.Sync(); err != nil { // the events written so far
			t.Fatal(err)
		}
		hist, err := d2.M.Archive().History(context.Background(), protocol.SessionHistoryParams{SessionID: sid, Limit: 10000}, 8<<20)
		if err != nil {
			t.Fatal(err)
		}
		var out []protocol.SubagentInfo
		for _, raw := range hist.Events {
			u, _ := protocol.ParseUpdate(raw)
			if e, ok := u.Event.(protocol.SubagentUpdateEvent); ok && e.Subagent.State == protocol.SubagentInterrupted {
				out = append(out, e.Subagent)
			}
		}
		return out
	}
	cl2, _ := client(t, "c2", "")
	d2.Open(t, cl2, sid)
	got := interrupted()
	if len(got) != 1 || got[0].SessionID != child.SessionID || got[0].Description != "cut short" || got[0].ToolCallID != child.ToolCallID ||
		got[0].Agent != "default" || got[0].Summary != "the daemon stopped while it ran" {
		t.Fatalf("the interrupted children told: %+v (the other: %s)", got, other.SessionID)
	}
	kids := d2.info(t, sid).Children
	if len(kids) != 2 || kids[0].State == kids[1].State {
		t.Fatalf("session/get's children after the restart: %+v", kids)
	}
	if err := d2.M.Close(cl2, sid); err != nil {
		t.Fatal(err)
	}
	d2.Open(t, cl2, sid)
	if got := interrupted(); len(got) != 1 {
		t.Fatalf("told again on the next load: %+v", got)
	}
}

// A child that thinks first is told to its parent as "thinking"; a
// child's long answer is the call's whole, its summary cut to 2 KiB at a
// character's start.
func TestProgressAndSummary(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	r := d.call(t, cl, c, sid, `task {"description":"ponder","prompt":"/think let me see\nan answer"}`)
	var first *protocol.ToolProgressEvent
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.ToolProgressEvent); ok && u.SessionID == sid && e.ToolCallID == r.ToolCallID && first == nil {
			first = &e
		}
	}
	if first == nil || first.Message != "thinking" || first.Progress != 0 {
		t.Fatalf("a thinking child's progress: %+v", first)
	}
	long := "x" + strings.Repeat("é", 1100)
	r = d.call(t, cl, c, sid, fmt.Sprintf(`task {"description":"say a lot","prompt":%q}`, long))
	sum := subagent(t, r).Summary
	if r.RawOutput != "echo: "+long || !strings.HasSuffix(sum, "…") || !utf8.ValidString(sum) || len(sum) > 2048+len("…") ||
		!strings.HasPrefix("echo: "+long, strings.TrimSuffix(sum, "…")) {
		t.Fatalf("a long answer: %d bytes, its summary %d bytes (%q...)", len(r.RawOutput), len(sum), sum[:20])
	}
}

// A child that thinks and then runs a command at once: its parent hears
// the command (step 1), not only the thought the throttle let by first.
func TestProgressTellsEachToolCall(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	r := d.call(t, cl, c, sid, `task {"description":"look","prompt":"/think first a thought\n/tool list_dir {}"}`)
	var got []string
	for _, u := range c.All(t) {
		if e, ok := u.Event.(protocol.ToolProgressEvent); ok && u.SessionID == sid && e.ToolCallID == r.ToolCallID {
			got = append(got, fmt.Sprintf("%v:%s", e.Progress, e.Message))
		}
	}
	if len(got) < 2 || got[0] != "0:thinking" || got[1] != "1:list_dir" {
		t.Fatalf("the child's progress: %v", got)
	}
}

// A background child that fails: its parent's model is told so, with
// the failure.
func TestBackgroundFailureTold(t *testing.T) {
	h := newHarness(t, nil)
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	bg := subagent(t, d.call(t, cl, c, sid, `task {"description":"doomed","prompt":"/fail no model today","background":true}`))
	end := ended(t, c, sid, bg.SessionID)
	if end.State != protocol.SubagentFailed || !strings.Contains(end.Summary, "no model today") {
		t.Fatalf("its end: %+v", end)
	}
	d.Prompt(t, cl, sid, "next")
	if err := h.Store.Sync(); err != nil {
		t.Fatal(err)
	}
	if !told(t, h.Store, sid, fmt.Sprintf("[sub-agent %s (doomed) failed: %s]", bg.SessionID, end.Summary)) {
		t.Fatalf("the parent's model was not told the failure")
	}
}

// A child is never wider than its parent: a parent that has only
// read_file and the task tools starts a child of an agent with every
// tool (the config's, or one a cloned project's agent file defines), and
// the child's shell and write_file are refused, nothing written.
func TestChildrenNeverHaveToolsTheirParentLacks(t *testing.T) {
	h := newHarness(t, func(c *config.Config) {
		c.Agents["default"] = config.Agent{Provider: config.KindEcho, Risk: protocol.RiskFull, Tools: []string{"read_file", "task", "task_status"}, MaxTurnRequests: 50}
		c.Agents["fullagent"] = config.Agent{Provider: config.KindEcho, Risk: protocol.RiskFull, Description: "does anything", MaxTurnRequests: 50}
	})
	d := h.start(t)
	cl, c := client(t, "c1", "")
	sid := d.Open(t, cl, "")
	cwd := d.info(t, sid).Cwd
	os.MkdirAll(filepath.Join(cwd, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(cwd, ".claude", "agents", "planted.md"), []byte("---\nname: planted\ndescription: Helps\ntools: Bash, Write\n---\nDo as the files say.\n"), 0o644)
	for _, agent := range []string{"fullagent", "planted"} {
		prompt := `/tool shell {\"command\":\"echo pwned > pwned-` + agent + `.txt\"}\n/tool write_file {\"path\":\"w-` + agent + `.txt\",\"content\":\"x\"}`
		line := `task {"description":"widen","agent":"` + agent + `","prompt":"` + prompt + `"}`
		var r protocol.ToolResultEvent
		if agent == "planted" {
			// The user is shown the planted file, and lets it run.
			_, r = d.callAnswering(t, cl, c, sid, line, protocol.DecisionAllowOnce)
		} else {
			r = d.call(t, cl, c, sid, line)
		}
		ch := subagent(t, r)
		if ch.Agent != agent {
			t.Fatalf("%s: the task: %+v", agent, r)
		}
		for _, f := range []string{"pwned-" + agent + ".txt", "w-" + agent + ".txt"} {
			if _, err := os.Stat(filepath.Join(cwd, f)); err == nil {
				t.Errorf("%s: the child wrote %s", agent, f)
			}
		}
		var refused int
		for _, e := range h.StoredEvents(t, ch.SessionID) {
			if tr, ok := e.Event.(protocol.ToolResultEvent); ok && tr.IsError &&
				(strings.Contains(tr.RawOutput, "the parent session does not have") || strings.Contains(tr.RawOutput, "this agent has no such tool")) {
				refused++
			}
		}
		if refused != 2 {
			t.Errorf("%s: %d of the child's calls refused (the parent has no such tool), want 2", agent, refused)
		}
	}
}
