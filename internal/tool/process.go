package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Background processes: the shell tool starts one (background: true);
// these tools read, feed, wait for, stop and list them. They belong to
// the session (Env.Processes) and end with it.

const (
	processOutputCap = 64 << 10 // bytes a read gives at most
	processWaitMax   = 600
)

// A terminal's size unless the call gives one.
const (
	ttyCols = 120
	ttyRows = 40
)

// startHow is how a process starts: under a terminal of cols×rows, or
// with pipes.
type startHow struct {
	tty        bool
	cols, rows int
}

// startProcess starts command as a background process of the session.
func startProcess(env *Env, command string, how startHow) (*background.Process, error) {
	if env.Processes == nil {
		return nil, errors.New("background processes are not available here")
	}
	bp, err := env.Processes.New(command)
	if err != nil {
		return nil, err
	}
	pc, err := env.prepare(context.Background(), command)
	if err != nil {
		bp.Abort()
		return nil, err
	}
	defer pc.close()
	cmd := pc.cmd
	var w io.Closer
	if how.tty {
		w, err = bp.AttachTTY(cmd, how.cols, how.rows)
	} else {
		w, err = bp.Attach(cmd)
	}
	if err != nil {
		bp.Abort()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		bp.Abort()
		return nil, err
	}
	w.Close()
	untrack := pc.started(env)
	pid := cmd.Process.Pid
	bp.Run(cmd, background.Hooks{
		Signal:   func(sig os.Signal) error { return signalGroup(pid, sig) },
		KillTree: func() { killGroup(pid) },
		Ended:    untrack,
	})
	return bp, nil
}

// startBackground starts command in the background and says how to
// follow it.
func startBackground(env *Env, command string, how startHow) Result {
	bp, err := startProcess(env, command, how)
	if err != nil {
		return errorf("%v", err)
	}
	info := bp.Info()
	text := fmt.Sprintf("started %s (pid %d) in the background", bp.ID(), info.Pid)
	if how.tty {
		text += fmt.Sprintf(" under a %dx%d terminal: type into it with process_write (\\r is Enter, \\x03 is Ctrl-C), resize it with process_resize; read its output with process_output {\"id\":%q, \"plain_text\":true}", how.cols, how.rows, bp.ID())
	} else {
		text += fmt.Sprintf(": read its output with process_output {\"id\":%q}", bp.ID())
	}
	text += ", wait with process_wait, stop it with process_kill. It ends with the session."
	return Result{Output: text, Details: details(processDetails{Process: &info})}
}

// foregroundTTY runs command under a terminal and waits for it as a
// foreground command is waited for: its result is what the terminal
// showed, as plain text. Still running at its time, it is killed
// (timeout_secs given) or runs on in the background (no timeout), and
// the call says how to reach it.
func foregroundTTY(ctx context.Context, env *Env, command string, how startHow, secs int, canMove bool) Result {
	after := time.Duration(secs) * time.Second
	if canMove && env.BackgroundAfter > 0 {
		after = env.BackgroundAfter
	}
	bp, err := startProcess(env, command, how)
	if err != nil {
		return errorf("%v", err)
	}
	timer := time.NewTimer(after)
	defer timer.Stop()
	var note string
	select {
	case <-bp.Done():
	case <-ctx.Done():
		bp.Kill(stopSignal(), KillGrace)
		note = "\n[cancelled]"
	case <-timer.C:
		if canMove {
			info := bp.Info()
			return Result{Output: screenTail(bp) + fmt.Sprintf("\n[still running after %d s: it runs on in the background as %s (pid %d) under its terminal; type into it with process_write, read it with process_output {\"id\":%q, \"since\":%d, \"plain_text\":true}, wait with process_wait, stop it with process_kill]",
				int(after.Seconds()), bp.ID(), info.Pid, bp.ID(), info.OutputBytes), Details: details(processDetails{Process: &info})}
		}
		bp.Kill(stopSignal(), KillGrace)
		note = fmt.Sprintf("\n[timed out after %d s]", secs)
	}
	bp.MarkSeen() // the result says how it ended
	info := bp.Info()
	text := screenTail(bp)
	r := Result{Output: text + note, IsError: note != "", Details: details(processDetails{Process: &info})}
	switch {
	case note != "":
	case info.ExitCode != nil && *info.ExitCode != 0:
		r.Output, r.IsError = text+fmt.Sprintf("\n[exit code %d]", *info.ExitCode), true
	case info.ExitCode == nil:
		r.Output, r.IsError = text+"\n[ended by "+info.Signal+"]", true
	case text == "":
		r.Output = "(no output)"
	}
	return r
}

// screenTail is the end of what a terminal process showed, as plain
// text, capped as a foreground command's output is.
func screenTail(bp *background.Process) string {
	total := bp.Info().OutputBytes
	o := bp.Output(max(0, total-shellOutputCap), shellOutputCap)
	text := strings.TrimRight(background.Plain(o.Data), "\n")
	if o.Next > int64(len(o.Data)) {
		text = fmt.Sprintf("[%d bytes of output dropped; the last %d follow]\n", o.Next-int64(len(o.Data)), len(o.Data)) + text
	}
	return text
}

// waitFor waits until p's output from since, as plain text, matches re
// (true), p ends or ctx does. What is matched is at most the last
// 64 KiB read.
func waitFor(ctx context.Context, p *background.Process, since int64, re *regexp.Regexp) bool {
	for {
		running := p.Running() // before the read: output after an exit is all there
		o := p.Output(max(since, p.Info().OutputBytes-processOutputCap), processOutputCap)
		if len(o.Data) > 0 && re.MatchString(background.Plain(o.Data)) {
			return true
		}
		if !running || ctx.Err() != nil {
			return false
		}
		p.WaitOutput(ctx, o.Next)
	}
}

// modelRead reads p's output for the model: one that shows it ended
// means the model need not be told of the end.
func modelRead(p *background.Process, since int64, max int) background.Output {
	o := p.Output(since, max)
	if o.State != background.Running {
		p.MarkSeen()
	}
	return o
}

// stopSignal is the signal that asks a process to stop (TERM).
func stopSignal() os.Signal {
	sig, _ := SignalNamed("")
	return sig
}

// processDetails are the structured fields of a process tool's result
// (tool_result's details): the process, and for a read its offsets.
type processDetails struct {
	Process   *background.Info  `json:"process,omitempty"`
	Processes []background.Info `json:"processes,omitempty"`
	Since     *int64            `json:"since,omitempty"`
	Next      *int64            `json:"next,omitempty"`
	Dropped   *int64            `json:"dropped,omitempty"`
	Written   *int              `json:"written,omitempty"`
}

func details(d processDetails) json.RawMessage {
	b, _ := json.Marshal(d)
	return b
}

// readDetails are a read's details.
func readDetails(since int64, o background.Output) json.RawMessage {
	info := o.Info
	return details(processDetails{Process: &info, Since: &since, Next: &o.Next, Dropped: &o.Dropped})
}

// processOf finds the process a call names.
func processOf(env *Env, id string) (*background.Process, *Result) {
	if env.Processes == nil {
		r := errorf("background processes are not available here")
		return nil, &r
	}
	p := env.Processes.Get(id)
	if p == nil {
		r := errorf("no process %q in this session (process_list lists them)", id)
		return nil, &r
	}
	return p, nil
}

// describe says what a read of a process's output gives, for the model.
func describe(o background.Output, plain bool) string {
	var b strings.Builder
	if o.Dropped > 0 {
		fmt.Fprintf(&b, "[%d bytes before this were dropped: the process printed more than is kept]\n", o.Dropped)
	}
	if plain {
		b.WriteString(background.Plain(o.Data))
	} else {
		b.Write(o.Data)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case o.State == background.Running:
		fmt.Fprintf(&b, "[%s is running; next offset %d]", o.ID, o.Next)
	case o.ExitCode != nil:
		fmt.Fprintf(&b, "[%s %s with exit code %d; next offset %d]", o.ID, o.State, *o.ExitCode, o.Next)
	default:
		fmt.Fprintf(&b, "[%s %s by %s; next offset %d]", o.ID, o.State, o.Signal, o.Next)
	}
	return b.String()
}

// processOutputArgs are process_output's arguments.
type processOutputArgs struct {
	ID        string `json:"id"`
	Since     int64  `json:"since,omitempty" schema:"minimum=0"`
	MaxBytes  int    `json:"max_bytes,omitempty" schema:"minimum=1"`
	PlainText bool   `json:"plain_text,omitempty" jsonschema:"remove terminal escape sequences (colours, cursor moves)"`
}

type processOutput struct{ takes[processOutputArgs] }

func (t processOutput) Spec() Spec {
	return Spec{Name: "process_output", Guide: "Read a background process's output with process_output, from the next offset the last read gave.",
		Description: "What a background process printed (stdout and stderr as written) from offset since (default 0), at most max_bytes (default and limit 64 KiB), with the next offset and whether it still runs. plain_text removes a terminal's escape sequences.",
		Schema:      t.schema()}
}
func (processOutput) Asks() bool   { return false }
func (processOutput) Kind() string { return protocol.KindRead }
func (t processOutput) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Output of " + a.ID
}
func (t processOutput) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	p, bad := processOf(env, a.ID)
	if bad != nil {
		return *bad
	}
	o := modelRead(p, a.Since, capBytes(a.MaxBytes))
	return Result{Output: describe(o, a.PlainText), Details: readDetails(a.Since, o)}
}

func capBytes(n int) int {
	if n <= 0 || n > processOutputCap {
		return processOutputCap
	}
	return n
}

// processWriteArgs are process_write's arguments.
type processWriteArgs struct {
	ID    string `json:"id"`
	Input string `json:"input"`
}

type processWrite struct{ takes[processWriteArgs] }

func (t processWrite) Spec() Spec {
	return Spec{Name: "process_write", Guide: "Answer a background process's prompt with process_write (end the line with \\n).",
		Description: "Write input to a background process's stdin (\\n ends a line), or type it into its terminal (tty: \\r is Enter, \\x03 Ctrl-C, \\x04 Ctrl-D, \\x1b[A the up arrow).",
		Schema:      t.schema()}
}
func (processWrite) Asks() bool   { return true } // new input to a command: what the mode allows now
func (processWrite) Kind() string { return protocol.KindExecute }
func (t processWrite) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Input to " + a.ID
}
func (t processWrite) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	p, bad := processOf(env, a.ID)
	if bad != nil {
		return *bad
	}
	n, err := p.Write(a.Input)
	if err != nil {
		return errorf("%s: %v", a.ID, err)
	}
	info := p.Info()
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", n, a.ID), Details: details(processDetails{Process: &info, Written: &n})}
}

// processWaitArgs are process_wait's arguments.
type processWaitArgs struct {
	ID          string `json:"id"`
	TimeoutSecs int    `json:"timeout_secs,omitempty" schema:"minimum=1,maximum=600"`
	Until       string `json:"until,omitempty" jsonschema:"a regular expression (RE2) the output is matched against, as plain text"`
	Since       int64  `json:"since,omitempty" schema:"minimum=0"`
	MaxBytes    int    `json:"max_bytes,omitempty" schema:"minimum=1"`
	PlainText   bool   `json:"plain_text,omitempty"`
}

type processWait struct{ takes[processWaitArgs] }

func (t processWait) Spec() Spec {
	return Spec{Name: "process_wait", Guide: "Wait for a background process with process_wait rather than polling its output.",
		Description: "Wait until a background process exits, or its output from since matches the regular expression until (a server's \"listening\", a prompt), or timeout_secs pass (default 30, at most 600); then read its output from since as process_output does.",
		Schema:      t.schema()}
}
func (processWait) Asks() bool   { return false }
func (processWait) Kind() string { return protocol.KindRead }
func (t processWait) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Wait for " + a.ID
}
func (t processWait) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	var until *regexp.Regexp
	if a.Until != "" {
		var err error
		if until, err = regexp.Compile(a.Until); err != nil {
			return errorf("until: %v", err)
		}
	}
	p, bad := processOf(env, a.ID)
	if bad != nil {
		return *bad
	}
	secs := a.TimeoutSecs
	if secs <= 0 {
		secs = 30
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(min(secs, processWaitMax))*time.Second)
	defer cancel()
	matched := false
	if until == nil {
		p.Wait(wctx)
	} else {
		matched = waitFor(wctx, p, a.Since, until)
	}
	o := modelRead(p, a.Since, capBytes(a.MaxBytes))
	r := Result{Output: describe(o, a.PlainText), Details: readDetails(a.Since, o)}
	switch {
	case ctx.Err() != nil:
		r.Output, r.IsError = r.Output+"\n[cancelled]", true
	case matched:
		r.Output += fmt.Sprintf("\n[the output matched %q]", a.Until)
	case p.Running():
		r.Output += fmt.Sprintf("\n[still running after %d s]", secs)
	}
	return r
}

// processKillArgs are process_kill's arguments.
type processKillArgs struct {
	ID     string `json:"id"`
	Signal string `json:"signal,omitempty" schema:"enum=TERM|KILL|INT|HUP"`
}

type processKill struct{ takes[processKillArgs] }

func (t processKill) Spec() Spec {
	return Spec{Name: "process_kill", Guide: "Stop background processes you no longer need with process_kill.",
		Description: "Stop a background process and all it started: signal (TERM by default; KILL, INT, HUP) to its group, then KILL after 2 s.",
		Schema:      t.schema()}
}
func (processKill) Asks() bool   { return false }
func (processKill) Kind() string { return protocol.KindExecute }
func (t processKill) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Stop " + a.ID
}
func (t processKill) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	p, bad := processOf(env, a.ID)
	if bad != nil {
		return *bad
	}
	sig, err := SignalNamed(a.Signal)
	if err != nil {
		return errorf("%v", err)
	}
	p.Kill(sig, KillGrace)
	o := p.Output(p.Info().OutputBytes, 1)
	return Result{Output: describe(o, false), Details: details(processDetails{Process: &o.Info})}
}

// processListArgs are process_list's arguments: none.
type processListArgs struct{}

type processList struct{ takes[processListArgs] }

func (t processList) Spec() Spec {
	return Spec{Name: "process_list", Guide: "process_list lists the background processes of the session; they end with it.",
		Description: "List the session's background processes: id, command, pid, state, exit code, output bytes.",
		Schema:      t.schema()}
}
func (processList) Asks() bool                     { return false }
func (processList) Kind() string                   { return protocol.KindRead }
func (processList) Summary(json.RawMessage) string { return "List the background processes" }
func (t processList) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	if _, err := t.args(input); err != nil {
		return errorf("%v", err)
	}
	if env.Processes == nil {
		return errorf("background processes are not available here")
	}
	list := env.Processes.List()
	if len(list) == 0 {
		return Result{Output: "(no background processes)", Details: json.RawMessage(`{"processes":[]}`)}
	}
	var b strings.Builder
	for _, p := range list {
		state := p.State
		if p.ExitCode != nil {
			state += fmt.Sprintf(" (exit code %d)", *p.ExitCode)
		} else if p.Signal != "" {
			state += " (" + p.Signal + ")"
		}
		tty := ""
		if p.TTY {
			tty = "  tty"
		}
		fmt.Fprintf(&b, "%s  pid %d  %s%s  %d bytes of output  %s\n", p.ID, p.Pid, state, tty, p.OutputBytes, p.Command)
	}
	return Result{Output: strings.TrimRight(b.String(), "\n"), Details: details(processDetails{Processes: list})}
}

// processResizeArgs are process_resize's arguments.
type processResizeArgs struct {
	ID   string `json:"id"`
	Cols int    `json:"cols" schema:"minimum=10,maximum=1000"`
	Rows int    `json:"rows" schema:"minimum=2,maximum=1000"`
}

type processResize struct{ takes[processResizeArgs] }

func (t processResize) Spec() Spec {
	return Spec{Name: "process_resize", Guide: "A process started with tty: true runs under a terminal: resize it with process_resize, read it with plain_text.",
		Description: "Resize the terminal of a background process started with tty: true (it is told by SIGWINCH).",
		Schema:      t.schema()}
}
func (processResize) Asks() bool   { return false }
func (processResize) Kind() string { return protocol.KindExecute }
func (t processResize) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Resize " + a.ID
}
func (t processResize) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Cols < 10 || a.Cols > 1000 || a.Rows < 2 || a.Rows > 1000 {
		return errorf("cols must be 10 to 1000 and rows 2 to 1000")
	}
	p, bad := processOf(env, a.ID)
	if bad != nil {
		return *bad
	}
	if err := p.Resize(a.Cols, a.Rows); err != nil {
		return errorf("%s: %v", a.ID, err)
	}
	info := p.Info()
	return Result{Output: fmt.Sprintf("%s's terminal is now %dx%d", a.ID, a.Cols, a.Rows), Details: details(processDetails{Process: &info})}
}
