package acp

import (
	"context"
	"fmt"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Background processes in the editor: each is an execute tool call
// ("proc_" and its id) opened when it starts, whose content is the end
// of its output as text, updated while it runs, and completed (failed:
// a non-zero exit, killed, lost) when it ends. ACP's terminal content
// shows a terminal the editor made (terminal/create) for a command the
// editor runs; a background process runs in the daemon, so its output
// is text for every editor.

const (
	processEvery = 500 * time.Millisecond // how often a running process's output is read
	processShown = 16 << 10               // the end of its output a tool call shows
)

// followProcess handles a process_update (on the daemon connection's
// reader: it never waits): a start opens the process's tool call and a
// follower of its output; an end is handed to that follower, which
// closes the call after the last of the output.
func (b *Bridge) followProcess(sid string, p protocol.ProcessInfo) {
	callID := "proc_" + p.ID
	b.mu.Lock()
	if b.procs == nil {
		b.procs = map[string]chan protocol.ProcessInfo{}
	}
	ended, following := b.procs[callID]
	if p.State == "running" && !following {
		ended = make(chan protocol.ProcessInfo, 1)
		b.procs[callID] = ended
	} else {
		delete(b.procs, callID)
	}
	b.mu.Unlock()
	switch {
	case p.State == "running" && !following:
		go b.showProcess(sid, callID, p, ended)
	case p.State != "running" && following:
		ended <- p
	case p.State != "running":
		// Its start was before this bridge: the call opens and ends.
		ended = make(chan protocol.ProcessInfo, 1)
		ended <- p
		go b.showProcess(sid, callID, p, ended)
	}
}

// showProcess is a process's tool call: opened, its content the end of
// the output while it runs (when it printed more), ended with it.
func (b *Bridge) showProcess(sid, callID string, p protocol.ProcessInfo, ended <-chan protocol.ProcessInfo) {
	ctx := context.Background()
	b.acp.Notify("session/update", map[string]any{"sessionId": sid, "update": map[string]any{
		"sessionUpdate": "tool_call", "toolCallId": callID, "title": "Background: " + p.Command, "kind": protocol.KindExecute,
		"status": "in_progress", "rawInput": map[string]any{"command": p.Command, "id": p.ID, "pid": p.Pid},
		"content": []any{map[string]any{"type": "content", "content": textContent(fmt.Sprintf("started in the background as %s (pid %d)", p.ID, p.Pid))}}}})
	t := time.NewTicker(processEvery)
	defer t.Stop()
	last := ""
	for {
		select {
		case p = <-ended:
			out := b.processOutput(ctx, sid, p.ID)
			how := p.State
			switch {
			case p.ExitCode != nil:
				how += fmt.Sprintf(" with exit code %d", *p.ExitCode)
			case p.Signal != "":
				how += " by " + p.Signal
			}
			status := "completed"
			if p.State != "exited" || (p.ExitCode != nil && *p.ExitCode != 0) {
				status = "failed"
			}
			b.acp.Notify("session/update", map[string]any{"sessionId": sid, "update": map[string]any{
				"sessionUpdate": "tool_call_update", "toolCallId": callID, "status": status,
				"content":   []any{map[string]any{"type": "content", "content": textContent(out + "[" + p.ID + " " + how + "]")}},
				"rawOutput": map[string]any{"process": p}}})
			return
		case <-t.C:
		}
		out := b.processOutput(ctx, sid, p.ID)
		if out == last || out == "" {
			continue
		}
		last = out
		b.acp.Notify("session/update", map[string]any{"sessionId": sid, "update": map[string]any{
			"sessionUpdate": "tool_call_update", "toolCallId": callID,
			"content": []any{map[string]any{"type": "content", "content": textContent(out)}}}})
	}
}

// processOutput is the end of what the process printed, as plain text.
func (b *Bridge) processOutput(ctx context.Context, sid, id string) string {
	d, err := b.daemon(ctx)
	if err != nil {
		return ""
	}
	var l protocol.ProcessListResult
	if d.Call(ctx, protocol.MethodProcessList, protocol.SessionRef{SessionID: sid}, &l) != nil {
		return ""
	}
	var since int64
	for _, p := range l.Processes {
		if p.ID == id {
			since = max(0, p.OutputBytes-processShown)
		}
	}
	var o protocol.ProcessOutputResult
	if d.Call(ctx, protocol.MethodProcessOutput, protocol.ProcessOutputParams{SessionID: sid, ID: id, Since: since, PlainText: true}, &o) != nil {
		return ""
	}
	text := o.Output
	if since > 0 {
		text = "…\n" + text
	}
	if text != "" && text[len(text)-1] != '\n' {
		text += "\n"
	}
	return text
}
