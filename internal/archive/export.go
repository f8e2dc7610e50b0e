package archive

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/checkpoint"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// A session as a document (session/export): its turns with the prompt,
// replies, thoughts, tool calls with input and output, approvals,
// rewinds, how each turn ended, and when; as Markdown, JSON, or one HTML
// file that needs no network and runs no script.

// exportDoc is what every format is written from.
type exportDoc struct {
	Session protocol.SessionInfo `json:"session"`
	Turns   []*exportTurn        `json:"turns"`
}

type exportTurn struct {
	N         int           `json:"turn"`
	Seq       int64         `json:"seq"`
	StartedMs int64         `json:"startedMs,omitempty"`
	Prompt    string        `json:"prompt"`
	Items     []*exportItem `json:"items"`
	// How it ended.
	Outcome    string `json:"outcome,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	Notice     string `json:"notice,omitempty"`
	Error      string `json:"error,omitempty"`
	// The context at its last model call, and the session's cost then.
	InputTokens    int64    `json:"inputTokens,omitempty"`
	SessionCostUSD *float64 `json:"sessionCostUsd,omitempty"`
}

// exportItem is one thing a turn did: kind text, thought, tool, plan,
// approval, steer, hook, rewind, config (the session's settings
// changed) or note.
type exportItem struct {
	Kind     string          `json:"kind"`
	Text     string          `json:"text,omitempty"`
	Tool     string          `json:"tool,omitempty"`
	ToolKind string          `json:"toolKind,omitempty"`
	Title    string          `json:"title,omitempty"`
	CallID   string          `json:"toolCallId,omitempty"`
	Input    json.RawMessage `json:"input,omitempty"`
	Output   string          `json:"output,omitempty"`
	IsError  bool            `json:"isError,omitempty"`
	Decision string          `json:"decision,omitempty"`
}

// Export serves session/export.
func (m *Archive) Export(ctx context.Context, p protocol.SessionExportParams) (*protocol.SessionExportResult, error) {
	format := p.Format
	switch format {
	case "md":
		format = "markdown"
	case "markdown", "json", "html":
	default:
		return nil, &protocol.ParamsError{Field: "format", Reason: fmt.Sprintf("%q: markdown, json or html", p.Format)}
	}
	if err := m.Store.Sync(); err != nil {
		return nil, err
	}
	rec, err := m.Store.GetSession(ctx, p.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, p.SessionID)
	}
	if err != nil {
		return nil, err
	}
	x := &exportBuilder{doc: &exportDoc{Session: m.Info(rec)}, started: map[int64]int64{}, calls: map[string]*exportItem{}}
	if m.CheckpointDir != "" {
		if cp, err := checkpoint.Open(filepath.Join(m.CheckpointDir, rec.ID), rec.Cwd, checkpoint.Options{}); err == nil {
			for _, t := range cp.Turns() {
				x.started[t.Seq] = t.StartedMs
			}
		}
	}
	for since := int64(0); ; {
		evs, err := m.Store.Events(ctx, rec.ID, since, forkPage, 0)
		if err != nil {
			return nil, err
		}
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			u, err := protocol.ParseUpdate(ev.Body)
			if err != nil {
				// Not even its header reads: the store's own seq and
				// type say which event it was.
				u = protocol.SessionUpdate{EventHeader: protocol.EventHeader{SessionID: rec.ID, Seq: ev.Seq, Type: ev.Type},
					Event: protocol.UndecodableEvent{Type: ev.Type, Fields: ev.Body, Err: err.Error()}}
			}
			x.add(u)
		}
		since = evs[len(evs)-1].Seq
	}
	out, err := x.doc.render(format)
	if err != nil {
		return nil, err
	}
	return &protocol.SessionExportResult{Format: format, Content: out}, nil
}

// exportBuilder makes a session's document from its events, in order.
type exportBuilder struct {
	doc     *exportDoc
	turn    *exportTurn
	started map[int64]int64        // a turn's user_message seq → when it started
	calls   map[string]*exportItem // tool calls by id, for their results
}

// item is the current turn's item of kind: the last one when text or a
// thought streams on, else a new one.
func (x *exportBuilder) item(kind string) *exportItem {
	if x.turn == nil { // events before any prompt (a fork's rewind, say)
		x.turn = &exportTurn{}
		x.doc.Turns = append(x.doc.Turns, x.turn)
	}
	turn := x.turn
	if n := len(turn.Items); (kind == "text" || kind == "thought") && n > 0 && turn.Items[n-1].Kind == kind {
		return turn.Items[n-1]
	}
	it := &exportItem{Kind: kind}
	turn.Items = append(turn.Items, it)
	return it
}

// exportLeavesOut are the event types the export does not show: how
// far a call was, what waited, what became of an input (the turn's own
// events say it) are live state, not the conversation's. Every other
// type of protocol.Events has its case in add (a test checks both).
var exportLeavesOut = []string{protocol.EventToolProgress, protocol.EventQueueUpdate, protocol.EventInputUpdate, protocol.EventTurnInterrupted}

// add takes one event into the document: every event type is either
// shown or named in exportLeavesOut. Each case is one event type; what
// takes more than a line is a method of its own, or a function that says
// the event in a line.
func (x *exportBuilder) add(u protocol.SessionUpdate) {
	switch e := u.Event.(type) {
	case protocol.UserMessageEvent:
		x.userMessage(u.Seq, e)
	case protocol.AgentMessageChunkEvent:
		x.item("text").Text += e.Text
	case protocol.AgentThoughtChunkEvent:
		x.item("thought").Text += e.Text
	case protocol.ToolCallEvent:
		it := x.item("tool")
		it.Tool, it.ToolKind, it.Title, it.CallID, it.Input = e.Name, e.Kind, e.Title, e.ToolCallID, e.RawInput
		x.calls[e.ToolCallID] = it
	case protocol.ToolResultEvent:
		x.toolResult(e)
	case protocol.ToolProgressEvent, protocol.QueueUpdateEvent, protocol.InputUpdateEvent, protocol.TurnInterruptedEvent:
		// How far a call was, what waited, what became of an input
		// (the turn's own events say it): live state, not the
		// conversation's.
	case protocol.ApprovalRequestEvent:
		it := x.item("approval")
		it.Text, it.CallID, it.Tool = e.Summary, e.ToolCallID, e.ToolName
	case protocol.ApprovalResolvedEvent:
		it := x.item("approval")
		it.Decision, it.Text = e.Decision, "by "+e.By
	case protocol.PlanEvent:
		x.item("plan").Text = planText(e)
	case protocol.ContextUsageEvent:
		x.contextUsage(e)
	case protocol.HistoryTrimmedEvent:
		x.item("note").Text = fmt.Sprintf("%d earlier messages were summarised out of the model's view (%s)", e.DroppedMessages, e.Reason)
	case protocol.HookEvent:
		it := x.item("hook")
		it.Text = hookLine(e)
		it.IsError = e.Outcome != "ok"
	case protocol.RewindEvent:
		x.item("rewind").Text = rewindLine(e)
	case protocol.SubagentUpdateEvent:
		x.item("subagent").Text = subagentLine(e)
	case protocol.ProcessUpdateEvent:
		x.item("process").Text = processLine(e)
	case protocol.TurnCompleteEvent:
		x.turnComplete(e)
	case protocol.TurnResumedEvent:
		x.item("note").Text = fmt.Sprintf("the daemon restarted during this turn; it went on (attempt %d)", e.Attempt)
	case protocol.ApprovalReviewedEvent:
		it := x.item("approval")
		it.Text, it.CallID, it.Tool = reviewLine(e), e.ToolCallID, e.ToolName
	case protocol.GoalUpdateEvent:
		x.item("goal").Text = goalLine(e)
	case protocol.ConfigUpdateEvent:
		x.item("config").Text = configLine(e)
	case protocol.ScheduleUpdateEvent:
		it := x.item("schedule")
		it.Text, it.IsError = scheduleLine(e), e.Run.State == protocol.RunFailed
	case protocol.UndecodableEvent:
		// A stored event that does not read: said, and the export goes on.
		it := x.item("note")
		it.Text, it.IsError = fmt.Sprintf("event %d (%s) could not be read: %s", u.Seq, u.Type, e.Err), true
	case protocol.UnknownEvent: // a newer daemon's event: said, not lost
		x.item("note").Text = "event " + u.Type
	}
}

// userMessage begins a turn with its prompt; a message steered into a
// running turn is an item of that turn instead.
func (x *exportBuilder) userMessage(seq int64, e protocol.UserMessageEvent) {
	if e.Steered {
		x.item("steer").Text = "steered: " + e.Text
		return
	}
	x.turn = &exportTurn{N: len(x.doc.Turns) + 1, Seq: seq, StartedMs: x.started[seq], Prompt: e.Text}
	x.doc.Turns = append(x.doc.Turns, x.turn)
}

// toolResult completes the item of the call it answers.
func (x *exportBuilder) toolResult(e protocol.ToolResultEvent) {
	if it := x.calls[e.ToolCallID]; it != nil {
		it.Output, it.IsError = e.RawOutput, e.IsError
	}
}

// contextUsage keeps the turn's last usage: the tokens in the model's
// view and the session's cost so far.
func (x *exportBuilder) contextUsage(e protocol.ContextUsageEvent) {
	if x.turn != nil {
		x.turn.InputTokens, x.turn.SessionCostUSD = e.InputTokens, e.SessionCostUSD
	}
}

// turnComplete says how the turn ended.
func (x *exportBuilder) turnComplete(e protocol.TurnCompleteEvent) {
	if t := x.turn; t != nil {
		t.Outcome, t.StopReason, t.Notice = e.Outcome, e.StopReason, e.Notice
		if e.Error != nil {
			t.Error = e.Error.Message
		}
	}
}

// planText is a plan as the export shows it: a plan-mode plan whole, and
// where it was written; a task list an entry a line.
func planText(e protocol.PlanEvent) string {
	if e.Text != "" {
		return e.Text + "\n\n(" + e.Path + ")\n"
	}
	var b strings.Builder
	for _, e := range e.Entries {
		fmt.Fprintf(&b, "[%s] %s\n", e.Status, e.Content)
	}
	return b.String()
}

// subagentLine says what became of a sub-agent, with its summary once it
// has stopped running.
func subagentLine(e protocol.SubagentUpdateEvent) string {
	a := e.Subagent
	text := fmt.Sprintf("sub-agent %s (%s, agent %s) %s", a.SessionID, a.Description, a.Agent, a.State)
	if a.State != protocol.SubagentRunning && a.Summary != "" {
		text += ": " + a.Summary
	}
	return text
}

// processLine says what became of a background process, with its exit
// code once it has one.
func processLine(e protocol.ProcessUpdateEvent) string {
	p := e.Process
	text := fmt.Sprintf("background process %s (%s) %s", p.ID, p.Command, p.State)
	if p.ExitCode != nil {
		text += fmt.Sprintf(", exit code %d", *p.ExitCode)
	}
	return text
}

// reviewLine says what a reviewer decided about a call, at what risk,
// and why (or why it could not).
func reviewLine(e protocol.ApprovalReviewedEvent) string {
	text := fmt.Sprintf("reviewed by %s: %s", e.Reviewer, e.Decision)
	if e.Risk != "" {
		text += " (" + e.Risk + " risk)"
	}
	if e.Rationale+e.Error != "" {
		text += ": " + e.Rationale + e.Error
	}
	return text
}

// goalLine says where a goal stands, and its summary or the reason it
// ended.
func goalLine(e protocol.GoalUpdateEvent) string {
	g := e.Goal
	text := fmt.Sprintf("goal %s after %d turns: %s", g.State, g.Turns, firstLine(g.Objective))
	if g.Summary != "" || g.Reason != "" {
		text += " (" + g.Summary + g.Reason + ")"
	}
	return text
}

// configLine says how the session's settings changed, and who changed
// them: "settings changed by phone (cl_1): risk full".
func configLine(e protocol.ConfigUpdateEvent) string {
	now := map[string]string{"model": e.Model, "risk": e.Risk, "reasoning": cmp.Or(e.Reasoning, "the agent's"), "sandbox": e.Sandbox,
		"network": map[bool]string{true: "on", false: "off"}[e.Network]}
	var what []string
	for _, c := range e.Changed {
		what = append(what, strings.TrimSpace(c+" "+now[c]))
	}
	by := "by the agent (the plan was approved)"
	if e.By != protocol.ConfigByAgent {
		who := cmp.Or(e.ClientID, e.By)
		if e.ClientName != "" {
			who = e.ClientName + " (" + e.ClientID + ")"
		}
		by = "by " + who
	}
	return "settings changed " + by + ": " + strings.Join(what, ", ")
}

// scheduleLine says what became of a scheduled run, and why.
func scheduleLine(e protocol.ScheduleUpdateEvent) string {
	text := fmt.Sprintf("schedule %s: run due %s %s", e.ScheduleID, time.UnixMilli(e.Run.DueMs).UTC().Format(time.RFC3339), e.Run.State)
	if e.Run.Reason != "" {
		text += ": " + e.Run.Reason
	}
	return text
}

// rewindLine says what a rewind did.
func rewindLine(e protocol.RewindEvent) string {
	what := "rewound to before turn " + fmt.Sprint(e.Turn)
	if e.Undo {
		what = "undid the last rewind"
	}
	return fmt.Sprintf("%s: %d files restored, %d removed (files %v, conversation %v)", what, len(e.Restored), len(e.Removed), e.Files, e.Conversation)
}

// render writes the document in format (markdown, json or html).
func (doc *exportDoc) render(format string) (string, error) {
	if doc.Turns == nil {
		doc.Turns = []*exportTurn{}
	}
	switch format {
	case "json":
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return "", err
		}
		return string(b) + "\n", nil
	case "html":
		var b bytes.Buffer
		if err := exportHTML().Execute(&b, doc); err != nil {
			return "", err
		}
		return b.String(), nil
	}
	return markdownOf(doc), nil
}

// hookLine says what a hook did: "PreToolUse hook `cmd` (shell):
// blocked in 12 ms: reason".
func hookLine(e protocol.HookEvent) string {
	s := e.Event + " hook `" + e.Command + "`"
	if e.ToolName != "" {
		s += " (" + e.ToolName + ")"
	}
	s += fmt.Sprintf(": %s in %d ms", e.Outcome, e.DurationMs)
	if why := cmp.Or(e.Reason, e.Error); why != "" {
		s += ": " + why
	}
	return s
}

// fence is a code fence longer than any run of backticks in s.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f
}

func when(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05")
}

func markdownOf(d *exportDoc) string {
	var b strings.Builder
	s := d.Session
	title := s.Title
	if title == "" {
		title = "Session " + s.SessionID
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "- session: `%s` (agent %s, %s)\n- directory: `%s`\n- created %s, updated %s\n", s.SessionID, s.AgentAlias, s.Mode, s.Cwd, when(s.CreatedMs), when(s.UpdatedMs))
	if s.ForkedFrom != nil {
		fmt.Fprintf(&b, "- forked from `%s` at seq %d\n", s.ForkedFrom.SessionID, s.ForkedFrom.Seq)
	}
	if u := s.Usage; u != nil {
		fmt.Fprintf(&b, "- usage: %d input tokens (%d from the cache), %d output", u.InputTokens, u.CacheReadTokens, u.OutputTokens)
		if u.CostUSD != nil {
			fmt.Fprintf(&b, ", $%.4f", *u.CostUSD)
		}
		b.WriteString("\n")
	}
	for _, t := range d.Turns {
		fmt.Fprintf(&b, "\n## Turn %d", t.N)
		if w := when(t.StartedMs); w != "" {
			fmt.Fprintf(&b, " — %s", w)
		}
		b.WriteString("\n\n")
		if t.Prompt != "" {
			b.WriteString("**Prompt:**\n\n> " + strings.ReplaceAll(t.Prompt, "\n", "\n> ") + "\n\n")
		}
		for _, it := range t.Items {
			switch it.Kind {
			case "text":
				b.WriteString(it.Text + "\n\n")
			case "thought":
				b.WriteString("*Thinking:*\n\n> " + strings.ReplaceAll(it.Text, "\n", "\n> ") + "\n\n")
			case "tool":
				fmt.Fprintf(&b, "**Tool** `%s` (%s): %s\n\n", it.Tool, it.ToolKind, it.Title)
				in := string(it.Input)
				fmt.Fprintf(&b, "%sjson\n%s\n%s\n\n", fence(in), in, fence(in))
				label := "Output"
				if it.IsError {
					label = "Error"
				}
				fmt.Fprintf(&b, "%s:\n\n%s\n%s\n%s\n\n", label, fence(it.Output), it.Output, fence(it.Output))
			case "approval":
				if it.Decision != "" {
					fmt.Fprintf(&b, "*Approval: %s (%s)*\n\n", it.Decision, it.Text)
				} else {
					fmt.Fprintf(&b, "*Approval asked: %s*\n\n", it.Text)
				}
			case "plan":
				fmt.Fprintf(&b, "**Plan:**\n\n%s\n%s%s\n\n", fence(it.Text), it.Text, fence(it.Text))
			default:
				fmt.Fprintf(&b, "*%s*\n\n", it.Text)
			}
		}
		if t.Outcome != "" {
			fmt.Fprintf(&b, "*Turn %s: %s", t.Outcome, t.StopReason)
			if t.Error != "" {
				b.WriteString(": " + t.Error)
			}
			if t.Notice != "" {
				b.WriteString(" (" + t.Notice + ")")
			}
			b.WriteString("*\n")
		}
	}
	return b.String()
}

// exportHTML is one file: its style inline, a policy that lets nothing
// load or run, and every text escaped by html/template.
var exportHTML = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("export").Funcs(template.FuncMap{"when": when,
		"cost": func(c *float64) string { return fmt.Sprintf("$%.4f", *c) }}).Parse(exportPage))
})

// exportPage is the export's page (parsed at the first export).
const exportPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{with .Session.Title}}{{.}}{{else}}Session {{.Session.SessionID}}{{end}} — zeroclaw</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e8e8e8;background:#161616}.tool,.prompt,pre{background:#222!important}}
h1{font-size:1.5rem}h2{font-size:1.1rem;border-top:1px solid #8884;padding-top:1rem;margin-top:2rem}
.meta,.when,.end,.note{color:#777;font-size:.85rem}
.prompt{background:#f2f5fa;border-left:3px solid #47c;padding:.5rem .75rem;white-space:pre-wrap}
.text{white-space:pre-wrap}.thought{white-space:pre-wrap;color:#777;font-style:italic}
.tool{background:#f6f6f6;border-radius:6px;padding:.5rem .75rem;margin:.5rem 0}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;margin:.25rem 0;padding:.25rem .5rem;font:13px/1.4 ui-monospace,monospace}
.err{color:#b00}
</style>
</head>
<body>
<h1>{{with .Session.Title}}{{.}}{{else}}Session {{.Session.SessionID}}{{end}}</h1>
<p class="meta">session {{.Session.SessionID}} · agent {{.Session.AgentAlias}} · {{.Session.Cwd}} · created {{when .Session.CreatedMs}} · updated {{when .Session.UpdatedMs}}{{with .Session.ForkedFrom}} · forked from {{.SessionID}} at seq {{.Seq}}{{end}}{{with .Session.Usage}} · {{.InputTokens}} input tokens, {{.OutputTokens}} output{{with .CostUSD}}, {{cost .}}{{end}}{{end}}</p>
{{range .Turns}}
<section>
<h2>Turn {{.N}} <span class="when">{{when .StartedMs}}</span></h2>
{{with .Prompt}}<div class="prompt">{{.}}</div>{{end}}
{{range .Items}}
{{if eq .Kind "text"}}<div class="text">{{.Text}}</div>
{{else if eq .Kind "thought"}}<div class="thought">{{.Text}}</div>
{{else if eq .Kind "tool"}}<div class="tool"><strong>{{.Tool}}</strong> <span class="meta">{{.ToolKind}}</span> {{.Title}}<pre>{{printf "%s" .Input}}</pre><pre{{if .IsError}} class="err"{{end}}>{{.Output}}</pre></div>
{{else if eq .Kind "plan"}}<pre>{{.Text}}</pre>
{{else if eq .Kind "approval"}}<p class="note">{{if .Decision}}approval: {{.Decision}} ({{.Text}}){{else}}approval asked: {{.Text}}{{end}}</p>
{{else}}<p class="note">{{.Text}}</p>{{end}}
{{end}}
{{if .Outcome}}<p class="end">turn {{.Outcome}}: {{.StopReason}}{{with .Error}}: {{.}}{{end}}{{with .Notice}} ({{.}}){{end}}</p>{{end}}
</section>
{{end}}
</body>
</html>
`

// firstLine is s's first line, cut at 80 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
