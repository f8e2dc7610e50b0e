// Package clientcalls is what a turn asks of the client that sent its
// prompt, over that client's connection, when the client said it would
// answer: a question for the user (elicitation, a form or a URL), its
// files (an editor reads its unsaved buffers and shows writes as
// diffs), and its terminal (a command runs there). Each request first
// waits until the events before it are on the connection (its tool_call
// above all): it never overtakes them.
package clientcalls

import (
	"context"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// Caller is the client's connection.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(method string, params any) error
}

// To is the client of a turn of session SessionID; CaughtUp waits until
// the session's events so far are queued on its connection.
type To struct {
	Conn      Caller
	SessionID string
	CaughtUp  func(ctx context.Context) error
}

// Elicitor asks the user through the client (a URL question only when
// it can send the user to one: declined otherwise).
func (t To) Elicitor(url bool) func(context.Context, tool.Elicitation) (tool.Answer, error) {
	return func(ctx context.Context, e tool.Elicitation) (tool.Answer, error) {
		if err := t.CaughtUp(ctx); err != nil {
			return tool.Answer{}, err
		}
		p := protocol.ElicitationParams{SessionID: t.SessionID, Mode: "form", Message: e.Message, RequestedSchema: e.Schema}
		if e.URL != "" {
			if !url {
				return tool.Answer{Action: "decline"}, nil // the client cannot send the user anywhere
			}
			p = protocol.ElicitationParams{SessionID: t.SessionID, Mode: "url", Message: e.Message, URL: e.URL, ElicitationID: e.ID}
		}
		var res protocol.ElicitationResult
		if err := t.Conn.Call(ctx, protocol.MethodElicitationCreate, p, &res); err != nil {
			return tool.Answer{}, err
		}
		if res.Action == "" {
			res.Action = "decline" // "result": null
		}
		return tool.Answer{Action: res.Action, Content: res.Content}, nil
	}
}

// FS reads (read) and writes (write) files through the client; nil when
// it does neither.
func (t To) FS(read, write bool) *tool.ClientFS {
	if !read && !write {
		return nil
	}
	fs := &tool.ClientFS{}
	if read {
		fs.Read = func(ctx context.Context, path string) (string, error) {
			if err := t.CaughtUp(ctx); err != nil {
				return "", err
			}
			var r protocol.FSReadResult
			err := t.Conn.Call(ctx, protocol.MethodFSReadTextFile, protocol.FSReadParams{SessionID: t.SessionID, Path: path}, &r)
			return r.Content, err
		}
	}
	if write {
		fs.Write = func(ctx context.Context, path, content string) error {
			if err := t.CaughtUp(ctx); err != nil {
				return err
			}
			return t.Conn.Call(ctx, protocol.MethodFSWriteTextFile, protocol.FSWriteParams{SessionID: t.SessionID, Path: path, Content: content}, nil)
		}
	}
	return fs
}

// Terminal runs commands in the client's terminal; a cancelled turn,
// or one the client does not answer within the command's timeout and
// 10 s more, tells it to stop the command (terminal/cancel).
func (t To) Terminal() func(context.Context, tool.TerminalRun) (tool.TerminalOutcome, error) {
	return func(ctx context.Context, r tool.TerminalRun) (tool.TerminalOutcome, error) {
		if err := t.CaughtUp(ctx); err != nil {
			return tool.TerminalOutcome{}, err
		}
		id := protocol.NewID("run_", 6)
		var res protocol.TerminalRunResult
		// The client enforces the timeout; a little more here, so a
		// client that never answers does not hold the turn.
		cctx, cancel := context.WithTimeout(ctx, time.Duration(r.Timeout+10)*time.Second)
		defer cancel()
		err := t.Conn.Call(cctx, protocol.MethodTerminalRun, protocol.TerminalRunParams{SessionID: t.SessionID, RunID: id,
			Program: r.Program, Command: r.Command, Cwd: r.Cwd, TimeoutSecs: r.Timeout, OutputByteLimit: r.OutputLimit}, &res)
		if cctx.Err() != nil {
			_ = t.Conn.Notify(protocol.MethodTerminalCancel, protocol.TerminalCancelParams{SessionID: t.SessionID, RunID: id})
		}
		if err != nil && ctx.Err() == nil && cctx.Err() != nil {
			return tool.TerminalOutcome{Output: res.Output, TimedOut: true}, nil
		}
		return tool.TerminalOutcome{Output: res.Output, Truncated: res.Truncated, ExitCode: res.ExitCode, Signal: res.Signal, TimedOut: res.TimedOut}, err
	}
}
