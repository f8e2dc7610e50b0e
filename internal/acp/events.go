package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/form"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// fromDaemon serves the daemon connection: its session/update
// notifications become ACP session/update, in order.
func (b *Bridge) fromDaemon(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case protocol.MethodFSReadTextFile, protocol.MethodFSWriteTextFile, protocol.MethodElicitationCreate:
		// The editor's file access and its forms: the same method and
		// params in ACP.
		params := req.Params
		b.mu.Lock()
		elicits := b.elicits
		b.mu.Unlock()
		if req.Method == protocol.MethodElicitationCreate && !elicits {
			return b.formByDefaults(params), nil
		}
		return jsonrpc.Later(func(ctx context.Context) (any, error) {
			var res json.RawMessage
			if err := b.acp.Call(ctx, req.Method, params, &res); err != nil {
				return nil, err
			}
			if len(res) == 0 || string(res) == "null" {
				res = json.RawMessage(`{}`)
			}
			return res, nil
		}), nil
	case protocol.MethodTerminalRun:
		var p protocol.TerminalRunParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: %v", err)
		}
		return jsonrpc.Later(func(ctx context.Context) (any, error) { return b.runInTerminal(ctx, p) }), nil
	case protocol.MethodTerminalCancel:
		var p protocol.TerminalCancelParams
		if json.Unmarshal(req.Params, &p) == nil {
			b.mu.Lock()
			tid := b.runs[p.RunID]
			b.mu.Unlock()
			if tid != "" {
				go b.acp.Call(context.Background(), "terminal/kill", map[string]any{"sessionId": p.SessionID, "terminalId": tid}, nil)
			}
		}
		return nil, nil
	case protocol.MethodSessionMCPChanged:
		// A server became ready, or its prompts changed: the editor's
		// commands again.
		var p protocol.SessionRef
		if json.Unmarshal(req.Params, &p) == nil {
			b.mu.Lock()
			live := b.live[p.SessionID]
			b.mu.Unlock()
			if live {
				go b.mcpCommands(p.SessionID, true)
			}
		}
		return nil, nil
	case protocol.MethodSessionUpdate:
	default:
		return nil, jsonrpc.ErrMethodNotFound
	}
	u, err := protocol.ParseUpdate(req.Params)
	if err != nil {
		return nil, nil
	}
	b.mu.Lock()
	live := b.live[u.SessionID]
	b.mu.Unlock()
	if live {
		b.forward(u, false)
	}
	return nil, nil
}

// formByDefaults answers a form for an editor that shows none: with
// the form's defaults when they answer it (a required field without one
// declines it), and a notice in the conversation that says what was
// answered for the user.
func (b *Bridge) formByDefaults(params json.RawMessage) any {
	var p protocol.ElicitationParams
	if json.Unmarshal(params, &p) != nil || p.Mode == "url" {
		return protocol.ElicitationResult{Action: form.Decline}
	}
	f, err := form.Parse(p.RequestedSchema)
	var content map[string]any
	if err == nil {
		content = f.Defaults()
	}
	res := protocol.ElicitationResult{Action: form.Decline}
	var notice string
	switch {
	case err != nil:
		notice = fmt.Sprintf("zeroclaw could not read the form %q: declined (%v)", p.Message, err)
	case content == nil:
		var missing []string
		for _, fd := range f.Fields {
			if fd.Required && fd.Default == nil {
				missing = append(missing, fd.Label())
			}
		}
		notice = fmt.Sprintf("This editor does not show forms, and %q needs an answer with no default (%s): declined.", p.Message, strings.Join(missing, ", "))
	default:
		raw, _ := json.Marshal(content)
		res = protocol.ElicitationResult{Action: form.Accept, Content: raw}
		var said []string
		for _, fd := range f.Fields {
			if v, ok := content[fd.Name]; ok {
				said = append(said, fd.Label()+": "+fd.Show(v))
			}
		}
		notice = fmt.Sprintf("This editor does not show forms: %q was answered with its defaults (%s).", p.Message, strings.Join(said, ", "))
		if len(said) == 0 {
			notice = fmt.Sprintf("This editor does not show forms: %q was accepted (it asks nothing).", p.Message)
		}
	}
	if p.SessionID != "" {
		b.acp.Notify("session/update", map[string]any{"sessionId": p.SessionID,
			"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": textContent("\n\n(" + notice + ")\n\n")}})
	}
	return res
}

// sentByUs says whether a user_message came from this bridge (another
// client's prompts and steers are shown to the editor as they come).
func (b *Bridge) sentByUs(clientID string) bool {
	b.mu.Lock()
	d := b.d
	b.mu.Unlock()
	return clientID == "" || (d != nil && clientID == d.Init.ClientID)
}

func textContent(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// forwardLeavesOut are the event types the bridge does not pass on: ACP
// has no update for them, and the editor shows the conversation, its
// tool calls and its plan (a reviewed call's permission request follows
// its approval_reviewed; a schedule's run shows as its turn). Every other
// type of protocol.Events has its case in forward (a test checks both).
var forwardLeavesOut = []string{protocol.EventHistoryTrimmed, protocol.EventRewind, protocol.EventHook, protocol.EventQueueUpdate,
	protocol.EventInputUpdate, protocol.EventTurnInterrupted, protocol.EventScheduleUpdate, protocol.EventApprovalReviewed}

// forward sends one daemon event to the editor; replay is true while
// session/load replays history (the user's own messages are sent then).
// The events are translated in groups (the conversation, tool calls,
// what a tool started, approvals, the session's state), each by a
// helper that returns no update for an event the editor is not sent.
func (b *Bridge) forward(u protocol.SessionUpdate, replay bool) {
	b.sawSeq(u)
	var update map[string]any
	meta := map[string]any{"zeroclaw": map[string]any{"seq": u.Seq}}
	switch u.Event.(type) {
	case protocol.AgentMessageChunkEvent, protocol.AgentThoughtChunkEvent, protocol.UserMessageEvent,
		protocol.TurnCompleteEvent, protocol.TurnResumedEvent:
		update, meta = b.conversationUpdate(u, replay, meta)
	case protocol.ToolCallEvent, protocol.ToolResultEvent, protocol.ToolProgressEvent:
		update = b.toolUpdate(u, replay)
	case protocol.SubagentUpdateEvent, protocol.ProcessUpdateEvent:
		update, meta = b.startedUpdate(u, replay, meta)
	case protocol.ApprovalRequestEvent, protocol.ApprovalResolvedEvent:
		update = b.approvalUpdate(u, replay)
	case protocol.PlanEvent, protocol.ContextUsageEvent, protocol.GoalUpdateEvent:
		update = stateUpdate(u, replay, meta)
	case protocol.ConfigUpdateEvent:
		update = b.configUpdate(u, replay)
	case protocol.HistoryTrimmedEvent, protocol.RewindEvent, protocol.HookEvent, protocol.QueueUpdateEvent, protocol.InputUpdateEvent,
		protocol.TurnInterruptedEvent, protocol.ScheduleUpdateEvent, protocol.ApprovalReviewedEvent,
		protocol.UnknownEvent, protocol.UndecodableEvent:
		// forwardLeavesOut, and an event this build cannot read.
		return
	}
	if update == nil {
		return
	}
	update["_meta"] = meta
	b.acp.Notify("session/update", map[string]any{"sessionId": u.SessionID, "update": update})
}

// sawSeq notes the newest event forwarded of a session: a reattach to
// another daemon shows what it wrote after it.
func (b *Bridge) sawSeq(u protocol.SessionUpdate) {
	if u.Seq <= 0 {
		return
	}
	b.mu.Lock()
	if u.Seq > b.seen[u.SessionID] {
		b.seen[u.SessionID] = u.Seq
	}
	b.mu.Unlock()
}

// conversationUpdate is the update for the conversation's own events:
// the reply, its thoughts, another client's prompt, and a turn that
// ended short or goes on after a restart.
func (b *Bridge) conversationUpdate(u protocol.SessionUpdate, replay bool, meta map[string]any) (map[string]any, map[string]any) {
	switch ev := u.Event.(type) {
	case protocol.AgentMessageChunkEvent:
		return map[string]any{"sessionUpdate": "agent_message_chunk", "content": textContent(ev.Text)}, meta
	case protocol.AgentThoughtChunkEvent:
		return map[string]any{"sessionUpdate": "agent_thought_chunk", "content": textContent(ev.Text)}, meta
	case protocol.UserMessageEvent:
		if !replay && b.sentByUs(ev.ClientID) {
			return nil, meta // the editor sent it
		}
		return map[string]any{"sessionUpdate": "user_message_chunk", "content": textContent(ev.Text)}, meta
	case protocol.TurnCompleteEvent:
		if ev.Notice == "" {
			return nil, meta // the prompt's answer says how it ended
		}
		// What the person can do about a turn that ended short (a
		// budget reached, the reply's token limit): ACP's stop reasons
		// cannot say it, so it is said in the reply.
		return map[string]any{"sessionUpdate": "agent_message_chunk", "content": textContent("\n\n(" + ev.Notice + ")")}, meta
	case protocol.TurnResumedEvent:
		// A turn a daemon's end cut goes on: said as a thought (ACP
		// has no update for it), so the editor shows why the turn
		// paused, and named in _meta.
		update := map[string]any{"sessionUpdate": "agent_thought_chunk",
			"content": textContent(fmt.Sprintf("(the daemon restarted during this turn; it goes on, attempt %d)\n", ev.Attempt))}
		return update, withZeroclaw(meta, "turnResumed", map[string]any{"attempt": ev.Attempt})
	}
	return nil, meta
}

// toolUpdate is the update for a tool call's events: opened, ended, and
// a task's progress. The bridge keeps each open call's title and kind
// (for the permission request that may follow, and the progress shown)
// and the shell call a terminal run is shown in.
func (b *Bridge) toolUpdate(u protocol.SessionUpdate, replay bool) map[string]any {
	switch ev := u.Event.(type) {
	case protocol.ToolCallEvent:
		// The daemon says whether it will ask: pending exactly then.
		status := "in_progress"
		if ev.NeedsApproval {
			status = "pending"
		}
		input := ev.RawInput
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		b.mu.Lock()
		b.calls[ev.ToolCallID] = toolCall{title: ev.Title, kind: ev.Kind}
		if ev.Kind == protocol.KindExecute && !replay {
			b.shells[u.SessionID] = ev.ToolCallID
		}
		b.mu.Unlock()
		return map[string]any{"sessionUpdate": "tool_call", "toolCallId": ev.ToolCallID, "title": ev.Title,
			"kind": ev.Kind, "status": status, "rawInput": input}
	case protocol.ToolResultEvent:
		b.mu.Lock()
		delete(b.calls, ev.ToolCallID)
		b.mu.Unlock()
		status := "completed"
		if ev.IsError {
			status = "failed"
		}
		return map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": ev.ToolCallID, "status": status,
			"content": []any{map[string]any{"type": "content", "content": textContent(ev.RawOutput)}}, "rawOutput": ev.RawOutput}
	case protocol.ToolProgressEvent:
		// A task's progress (what its child does now) is the call's
		// content; other tools' progress ACP has no update for.
		b.mu.Lock()
		call, ok := b.calls[ev.ToolCallID]
		b.mu.Unlock()
		if replay || !ok || call.kind != protocol.KindThink || ev.Message == "" {
			return nil
		}
		return map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": ev.ToolCallID,
			"content": []any{map[string]any{"type": "content", "content": textContent(fmt.Sprintf("sub-agent, step %d: %s", int(ev.Progress), ev.Message))}}}
	}
	return nil
}

// startedUpdate is the update for what a tool started and runs beside
// the turn: a sub-agent, a background process.
func (b *Bridge) startedUpdate(u protocol.SessionUpdate, replay bool, meta map[string]any) (map[string]any, map[string]any) {
	switch ev := u.Event.(type) {
	case protocol.SubagentUpdateEvent:
		// A task's tool call says its child (the session an editor can
		// load); a background child's end is said in the conversation.
		a := ev.Subagent
		sub := map[string]any{"sessionId": a.SessionID, "description": a.Description, "agent": a.Agent, "state": a.State}
		switch {
		case a.State == protocol.SubagentRunning && !a.Background && a.ToolCallID != "":
			update := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": a.ToolCallID,
				"content": []any{map[string]any{"type": "content", "content": textContent(fmt.Sprintf("sub-agent %s (agent %s) is working on it", a.SessionID, a.Agent))}}}
			return update, withSubagent(meta, sub)
		case a.State != protocol.SubagentRunning && a.Background:
			text := fmt.Sprintf("\n\n(sub-agent %s (%s) %s)\n\n", a.SessionID, a.Description, a.State)
			return map[string]any{"sessionUpdate": "agent_message_chunk", "content": textContent(text)}, withSubagent(meta, sub)
		}
	case protocol.ProcessUpdateEvent:
		if replay {
			return nil, meta
		}
		// A background process is a tool call of its own, whose content
		// is its output (followed while it runs) and whose end is the
		// process's.
		b.followProcess(u.SessionID, ev.Process)
	}
	return nil, meta
}

// approvalUpdate handles an approval's events: a request is asked in
// the editor (session/request_permission, from its own goroutine), and
// an allowed call's resolution sets it going again.
func (b *Bridge) approvalUpdate(u protocol.SessionUpdate, replay bool) map[string]any {
	switch ev := u.Event.(type) {
	case protocol.ApprovalRequestEvent:
		b.mu.Lock()
		b.approvals[ev.RequestID] = ev.ToolCallID
		b.mu.Unlock()
		if replay {
			return nil // history: nothing to answer
		}
		go b.askPermission(u.SessionID, ev)
	case protocol.ApprovalResolvedEvent:
		id := b.toolOf(ev.RequestID) // answered: forgotten, whatever the answer
		if id == "" || !strings.HasPrefix(ev.Decision, "allow_") {
			return nil
		}
		return map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress"}
	}
	return nil
}

// stateUpdate is the update for the session's state: its plan, its
// context's use and cost, its goal (a line the editor shows, the goal
// whole in meta, which it sets).
func stateUpdate(u protocol.SessionUpdate, replay bool, meta map[string]any) map[string]any {
	switch ev := u.Event.(type) {
	case protocol.PlanEvent:
		entries := ev.Entries
		if entries == nil {
			entries = []protocol.PlanEntry{}
		}
		return map[string]any{"sessionUpdate": "plan", "entries": entries}
	case protocol.ContextUsageEvent:
		if replay {
			return nil
		}
		update := map[string]any{"sessionUpdate": "usage_update", "used": max(ev.InputTokens, 0), "size": max(ev.MaxContextTokens, 0)}
		if c := ev.SessionCostUSD; c != nil {
			update["cost"] = map[string]any{"amount": *c, "currency": "USD"}
		}
		return update
	case protocol.GoalUpdateEvent:
		// The goal extension: a line the editor shows, the goal whole
		// in _meta.
		g := ev.Goal
		text := fmt.Sprintf("(goal %s after %s", strings.ReplaceAll(g.State, "_", " "), protocol.TurnsText(g.Turns))
		if g.Summary+g.Reason != "" {
			text += ": " + g.Summary + g.Reason
		}
		meta["goal"] = g
		return map[string]any{"sessionUpdate": "agent_thought_chunk", "content": textContent(text + ")\n")}
	}
	return nil
}

// toolCall is what the bridge keeps of a call until its result: its
// title and kind, for the permission request that may follow.
type toolCall struct{ title, kind string }

// toolOf returns the tool call an approval request was about.
func (b *Bridge) toolOf(requestID string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.approvals[requestID]
	delete(b.approvals, requestID)
	return id
}

// planOptions are a plan's: proceed in ask or accept-edits, or keep
// planning (ACP's option kinds say allow or reject).
var planOptions = []map[string]any{
	{"optionId": protocol.DecisionProceedAsk, "name": "Proceed (ask before changes)", "kind": "allow_once"},
	{"optionId": protocol.DecisionProceedEdits, "name": "Proceed (accept edits)", "kind": "allow_always"},
	{"optionId": protocol.DecisionKeepPlanning, "name": "Keep planning", "kind": "reject_once"},
}

// permissionOptions are a tool approval's answers as the editor is
// offered them. ACP's kinds say only once or always, so each "always"
// names its scope: this session only (kept while the session lives), or
// this project (stored: later sessions there too, until revoked).
var permissionOptions = []map[string]any{
	{"optionId": protocol.DecisionAllowOnce, "name": "Allow once", "kind": "allow_once"},
	{"optionId": protocol.DecisionAllowAlways, "name": "Always allow, this session only", "kind": "allow_always"},
	{"optionId": protocol.DecisionAllowProject, "name": "Always allow in this project (stored, later sessions too)", "kind": "allow_always"},
	{"optionId": protocol.DecisionRejectOnce, "name": "Reject", "kind": "reject_once"},
	{"optionId": protocol.DecisionRejectAlways, "name": "Always reject, this session only", "kind": "reject_always"},
	{"optionId": protocol.DecisionRejectProject, "name": "Always reject in this project (stored, later sessions too)", "kind": "reject_always"},
}

// offered are the options of permissionOptions the request takes (a
// daemon that stores no answers offers none for the project), and their
// ids.
func offered(ev protocol.ApprovalRequestEvent) (options []map[string]any, ids []string) {
	options = []map[string]any{}
	for _, o := range permissionOptions {
		id := o["optionId"].(string)
		if slices.Contains(ev.Options, id) {
			options, ids = append(options, o), append(ids, id)
		}
	}
	return options, ids
}

// askPermission turns an approval_request into session/request_permission
// and its outcome into session/approve (cancelled: reject_once).
func (b *Bridge) askPermission(sessionID string, ev protocol.ApprovalRequestEvent) {
	b.mu.Lock()
	call, ok := b.calls[ev.ToolCallID]
	b.mu.Unlock()
	if !ok { // a call this bridge did not see: described as the daemon would
		call = toolCall{title: tool.Title(ev.ToolName, ev.RawInput), kind: protocol.KindOther}
	}
	if ev.Kind == protocol.KindSampling {
		// The tool asks to call the model: the question is that, not the
		// tool (ACP has no kind for it).
		title := ev.Summary
		if r := []rune(title); len(r) > 120 {
			title = string(r[:120]) + "…"
		}
		call = toolCall{title: title, kind: protocol.KindOther}
	}
	input := ev.RawInput
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	var res struct {
		Outcome struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	tc := map[string]any{"toolCallId": ev.ToolCallID, "title": call.title,
		"kind": call.kind, "status": "pending", "rawInput": input,
		"_meta": map[string]any{"zeroclaw": map[string]any{"requestId": ev.RequestID, "summary": ev.Summary}}}
	options, valid := offered(ev)
	refuse := protocol.DecisionRejectOnce
	if ev.Kind == protocol.KindPlan {
		// The plan mode's end: the plan is the call's content.
		var in struct {
			Plan string `json:"plan"`
		}
		json.Unmarshal(ev.RawInput, &in)
		tc["title"], tc["kind"] = "Proceed with this plan?", "switch_mode"
		tc["content"] = []any{map[string]any{"type": "content", "content": textContent(in.Plan)}}
		options, valid, refuse = planOptions, protocol.PlanDecisions, protocol.DecisionKeepPlanning
	}
	err := b.acp.Call(context.Background(), "session/request_permission", map[string]any{
		"sessionId": sessionID, "toolCall": tc, "options": options,
	}, &res)
	decision := refuse
	reason := ""
	switch {
	case err != nil:
		reason = "the editor could not ask: " + err.Error()
	case res.Outcome.Outcome == "selected" && slices.Contains(valid, res.Outcome.OptionID):
		decision = res.Outcome.OptionID
	default:
		reason = "cancelled in the editor"
	}
	d, derr := b.daemon(context.Background())
	if derr != nil {
		return
	}
	d.Approve(context.Background(), protocol.SessionApproveParams{
		SessionID: sessionID, RequestID: ev.RequestID, Decision: decision, Reason: reason})
}

// runInTerminal runs a shell command in the editor's terminal
// (terminal/create, shown in the tool call; wait_for_exit within the
// timeout, else kill; output; release).
func (b *Bridge) runInTerminal(ctx context.Context, p protocol.TerminalRunParams) (any, error) {
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	create := map[string]any{"sessionId": p.SessionID, "command": p.Program, "args": tool.ShellArgs(p.Program, p.Command), "cwd": p.Cwd}
	if p.OutputByteLimit > 0 {
		create["outputByteLimit"] = p.OutputByteLimit
	}
	if err := b.acp.Call(ctx, "terminal/create", create, &created); err != nil {
		return nil, err
	}
	tid := created.TerminalID
	ref := map[string]any{"sessionId": p.SessionID, "terminalId": tid}
	b.mu.Lock()
	b.runs[p.RunID] = tid
	call := b.shells[p.SessionID]
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.runs, p.RunID)
		b.mu.Unlock()
		b.acp.Call(context.Background(), "terminal/release", ref, nil)
	}()
	if call != "" { // the editor shows the terminal in the tool call
		b.acp.Notify("session/update", map[string]any{"sessionId": p.SessionID, "update": map[string]any{
			"sessionUpdate": "tool_call_update", "toolCallId": call,
			"content": []any{map[string]any{"type": "terminal", "terminalId": tid}}}})
	}
	res := protocol.TerminalRunResult{}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(max(p.TimeoutSecs, 1))*time.Second)
	defer cancel()
	var exit struct {
		ExitCode *int    `json:"exitCode"`
		Signal   *string `json:"signal"`
	}
	if err := b.acp.Call(wctx, "terminal/wait_for_exit", ref, &exit); err != nil {
		if wctx.Err() == nil {
			return nil, err
		}
		res.TimedOut = ctx.Err() == nil
		b.acp.Call(context.Background(), "terminal/kill", ref, nil)
	}
	var out struct {
		Output    string `json:"output"`
		Truncated bool   `json:"truncated"`
	}
	if err := b.acp.Call(context.WithoutCancel(ctx), "terminal/output", ref, &out); err != nil {
		return nil, err
	}
	res.Output, res.Truncated, res.ExitCode = out.Output, out.Truncated, exit.ExitCode
	if exit.Signal != nil {
		res.Signal = *exit.Signal
	}
	return res, nil
}

// withSubagent is meta with _meta.zeroclaw.subagent set.
func withSubagent(meta map[string]any, sub map[string]any) map[string]any {
	return withZeroclaw(meta, "subagent", sub)
}

// withZeroclaw is meta with _meta.zeroclaw.<key> set to v (a copy: meta
// is not changed).
func withZeroclaw(meta map[string]any, key string, v any) map[string]any {
	out := map[string]any{}
	for k, v := range meta {
		out[k] = v
	}
	z, _ := out["zeroclaw"].(map[string]any)
	nz := map[string]any{}
	for k, v := range z {
		nz[k] = v
	}
	nz[key] = v
	out["zeroclaw"] = nz
	return out
}
