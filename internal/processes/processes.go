// Package processes serves a session's background processes as clients
// see them: process/list, process/output (what one printed, read from
// an offset and bounded, or waited for), process/kill and
// process/write, the write decided by the gate. It drives sessions
// through the Manager's public face (Lookup, Decide, and the session's
// process table); the session side of the processes (the table made on
// first use, process_update, the model's notices, those kept across a
// close or lost after a crash) stays in internal/session, and
// internal/background runs them.
package processes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// outputMax bounds a read of process/output.
const outputMax = 64 << 10

// outputWaitMax bounds process/output's waitMs.
const outputWaitMax = 30000

// listMaxCommand bounds a command as process/list tells it, in bytes.
const listMaxCommand = 4096

// listMaxBytes bounds process/list's processes, as JSON: far below any
// client's frame limit however many a long session ran.
var listMaxBytes = 1 << 20

// List serves process/list: the background processes of session id
// (c's), the oldest first, bounded (see protocol.ProcessListResult):
// the oldest ended ones are left out first, the running ones never.
func List(m *session.Manager, c *session.Client, id string) (*protocol.ProcessListResult, error) {
	s, err := m.Lookup(c, id)
	if err != nil {
		return nil, err
	}
	ps := s.ProcessInfos()
	size := 0
	sizes := make([]int, len(ps))
	for i := range ps {
		if len(ps[i].Command) > listMaxCommand {
			n := listMaxCommand
			for n > 0 && !utf8.RuneStart(ps[i].Command[n]) {
				n--
			}
			ps[i].Command, ps[i].CommandTruncated = ps[i].Command[:n], true
		}
		b, _ := json.Marshal(ps[i])
		sizes[i] = len(b) + 1
		size += sizes[i]
	}
	res := &protocol.ProcessListResult{Processes: make([]protocol.ProcessInfo, 0, len(ps))}
	for i, p := range ps {
		if size > listMaxBytes && p.State != background.Running {
			size -= sizes[i]
			res.Omitted++
			continue
		}
		res.Processes = append(res.Processes, p)
	}
	return res, nil
}

// Output serves process/output without waitMs: what the process printed
// from p.Since, at most p.MaxBytes (and 64 KiB), with its state.
func Output(m *session.Manager, c *session.Client, p protocol.ProcessOutputParams) (*protocol.ProcessOutputResult, error) {
	bp, err := toRead(m, c, p)
	if err != nil {
		return nil, err
	}
	return read(bp, p), nil
}

// OutputWait is process/output with waitMs: the process is found now,
// and the wait (until it prints past p.Since or ends, up to waitMs or
// 30 s, or until ctx ends), then the read, is the function returned.
func OutputWait(m *session.Manager, c *session.Client, p protocol.ProcessOutputParams) (func(ctx context.Context) *protocol.ProcessOutputResult, error) {
	bp, err := toRead(m, c, p)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) *protocol.ProcessOutputResult {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(min(p.WaitMs, outputWaitMax))*time.Millisecond)
		bp.WaitOutput(wctx, p.Since)
		cancel()
		return read(bp, p)
	}, nil
}

// Kill serves process/kill: TERM (or the signal named) to its group,
// then KILL after the shell tool's grace; it answers once the process
// has ended (Killed: false when it had already).
func Kill(m *session.Manager, c *session.Client, p protocol.ProcessKillParams) (*protocol.ProcessKillResult, error) {
	bp, err := find(m, c, p.SessionID, p.ID)
	if err != nil {
		return nil, err
	}
	sig, err := tool.SignalNamed(p.Signal)
	if err != nil {
		return nil, &protocol.ParamsError{Field: "signal", Reason: err.Error()}
	}
	if !bp.Running() {
		return &protocol.ProcessKillResult{Killed: false}, nil
	}
	bp.Kill(sig, tool.KillGrace)
	return &protocol.ProcessKillResult{Killed: true}, nil
}

// Write serves process/write: a client types into a process, if the
// gate lets its actor (a *session.Refused when it does not).
func Write(m *session.Manager, c *session.Client, p protocol.ProcessWriteParams) (*protocol.ProcessWriteResult, error) {
	bp, err := find(m, c, p.SessionID, p.ID)
	if err != nil {
		return nil, err
	}
	if v := m.Decide(gate.Request{Actor: c.Actor(), Action: gate.Action{Kind: gate.ProcessWrite, Name: protocol.MethodProcessWrite}}); v.Decision == gate.Deny {
		return nil, &session.Refused{Why: v.Why}
	}
	n, err := bp.Write(p.Input)
	if err != nil {
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("%s: %v", p.ID, err)}
	}
	return &protocol.ProcessWriteResult{Written: n}, nil
}

// find finds background process pid of session id (c's).
func find(m *session.Manager, c *session.Client, id, pid string) (*background.Process, error) {
	s, err := m.Lookup(c, id)
	if err != nil {
		return nil, err
	}
	var p *background.Process
	if t := s.ProcessTable(); t != nil {
		p = t.Get(pid)
	}
	if p == nil {
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no process %s in this session (process/list lists them)", pid)}
	}
	return p, nil
}

// toRead checks a read's offsets and finds its process.
func toRead(m *session.Manager, c *session.Client, p protocol.ProcessOutputParams) (*background.Process, error) {
	if p.Since < 0 || p.MaxBytes < 0 || p.WaitMs < 0 {
		return nil, &protocol.ParamsError{Field: "since", Reason: "since, maxBytes and waitMs may not be negative"}
	}
	return find(m, c, p.SessionID, p.ID)
}

// read is the result of a read of bp's output as p asks it.
func read(bp *background.Process, p protocol.ProcessOutputParams) *protocol.ProcessOutputResult {
	max := p.MaxBytes
	if max == 0 || max > outputMax {
		max = outputMax
	}
	o := bp.Output(p.Since, max)
	out := string(o.Data)
	if p.PlainText {
		out = background.Plain(o.Data)
	}
	return &protocol.ProcessOutputResult{Output: out, Next: o.Next, Dropped: o.Dropped, State: o.State, ExitCode: o.ExitCode}
}
