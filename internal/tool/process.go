package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
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

// startBackground starts command as a background process of the session.
func startBackground(env *Env, command string) Result {
	if env.Processes == nil {
		return errorf("background processes are not available here")
	}
	bp, err := env.Processes.New(command)
	if err != nil {
		return errorf("%v", err)
	}
	pc, err := env.prepare(context.Background(), command)
	if err != nil {
		bp.Abort()
		return errorf("%v", err)
	}
	defer pc.close()
	cmd := pc.cmd
	w, err := bp.Attach(cmd)
	if err != nil {
		bp.Abort()
		return errorf("%v", err)
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		bp.Abort()
		return errorf("%v", err)
	}
	w.Close()
	untrack := pc.started(env)
	pid := cmd.Process.Pid
	bp.Run(cmd, background.Hooks{
		Signal:   func(sig os.Signal) error { return signalGroup(pid, sig) },
		KillTree: func() { killGroup(pid) },
		Ended:    untrack,
	})
	return Result{Output: fmt.Sprintf("started %s (pid %d) in the background: read its output with process_output {\"id\":%q}, wait with process_wait, stop it with process_kill. It ends with the session.", bp.ID(), pid, bp.ID())}
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
func describe(o background.Output) string {
	var b strings.Builder
	if o.Dropped > 0 {
		fmt.Fprintf(&b, "[%d bytes before this were dropped: the process printed more than is kept]\n", o.Dropped)
	}
	b.Write(o.Data)
	if len(o.Data) > 0 && o.Data[len(o.Data)-1] != '\n' {
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

type processOutput struct{}

func (processOutput) Spec() Spec {
	return Spec{Name: "process_output", Guide: "Read a background process's output with process_output, from the next offset the last read gave.",
		Description: "What a background process printed (stdout and stderr as written) from offset since (default 0), at most max_bytes (default and limit 64 KiB), with the next offset and whether it still runs.",
		Schema:      schema(`{"type":"object","properties":{"id":{"type":"string"},"since":{"type":"integer","minimum":0},"max_bytes":{"type":"integer","minimum":1}},"required":["id"]}`)}
}
func (processOutput) Asks() bool   { return false }
func (processOutput) Kind() string { return protocol.KindRead }
func (processOutput) Summary(input json.RawMessage) string {
	var a struct{ ID string }
	json.Unmarshal(input, &a)
	return "Output of " + a.ID
}
func (processOutput) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		ID       string `json:"id"`
		Since    int64  `json:"since"`
		MaxBytes int    `json:"max_bytes"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
	}
	p, bad := processOf(env, a.ID)
	if bad != nil {
		return *bad
	}
	return Result{Output: describe(p.Output(a.Since, capBytes(a.MaxBytes)))}
}

func capBytes(n int) int {
	if n <= 0 || n > processOutputCap {
		return processOutputCap
	}
	return n
}

type processWrite struct{}

func (processWrite) Spec() Spec {
	return Spec{Name: "process_write", Guide: "Answer a background process's prompt with process_write (end the line with \\n).",
		Description: "Write input to a background process's stdin (\\n ends a line).",
		Schema:      schema(`{"type":"object","properties":{"id":{"type":"string"},"input":{"type":"string"}},"required":["id","input"]}`)}
}
func (processWrite) Asks() bool   { return false }
func (processWrite) Kind() string { return protocol.KindExecute }
func (processWrite) Summary(input json.RawMessage) string {
	var a struct{ ID string }
	json.Unmarshal(input, &a)
	return "Input to " + a.ID
}
func (processWrite) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		ID    string `json:"id"`
		Input string `json:"input"`
	}
	if err := decode(input, &a); err != nil {
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
	return Result{Output: fmt.Sprintf("wrote %d bytes to %s", n, a.ID)}
}

type processWait struct{}

func (processWait) Spec() Spec {
	return Spec{Name: "process_wait", Guide: "Wait for a background process with process_wait rather than polling its output.",
		Description: "Wait until a background process exits or timeout_secs pass (default 30, at most 600), then read its output from since as process_output does.",
		Schema:      schema(`{"type":"object","properties":{"id":{"type":"string"},"timeout_secs":{"type":"integer","minimum":1,"maximum":600},"since":{"type":"integer","minimum":0},"max_bytes":{"type":"integer","minimum":1}},"required":["id"]}`)}
}
func (processWait) Asks() bool   { return false }
func (processWait) Kind() string { return protocol.KindRead }
func (processWait) Summary(input json.RawMessage) string {
	var a struct{ ID string }
	json.Unmarshal(input, &a)
	return "Wait for " + a.ID
}
func (processWait) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		ID          string `json:"id"`
		TimeoutSecs int    `json:"timeout_secs"`
		Since       int64  `json:"since"`
		MaxBytes    int    `json:"max_bytes"`
	}
	if err := decode(input, &a); err != nil {
		return errorf("%v", err)
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
	ended := p.Wait(wctx)
	text := describe(p.Output(a.Since, capBytes(a.MaxBytes)))
	switch {
	case ctx.Err() != nil:
		return Result{Output: text + "\n[cancelled]", IsError: true}
	case !ended:
		return Result{Output: text + fmt.Sprintf("\n[still running after %d s]", secs)}
	}
	return Result{Output: text}
}

type processKill struct{}

func (processKill) Spec() Spec {
	return Spec{Name: "process_kill", Guide: "Stop background processes you no longer need with process_kill.",
		Description: "Stop a background process and all it started: signal (TERM by default; KILL, INT, HUP) to its group, then KILL after 2 s.",
		Schema:      schema(`{"type":"object","properties":{"id":{"type":"string"},"signal":{"type":"string","enum":["TERM","KILL","INT","HUP"]}},"required":["id"]}`)}
}
func (processKill) Asks() bool   { return false }
func (processKill) Kind() string { return protocol.KindExecute }
func (processKill) Summary(input json.RawMessage) string {
	var a struct{ ID string }
	json.Unmarshal(input, &a)
	return "Stop " + a.ID
}
func (processKill) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		ID     string `json:"id"`
		Signal string `json:"signal"`
	}
	if err := decode(input, &a); err != nil {
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
	return Result{Output: describe(p.Output(p.Info().OutputBytes, 1))}
}

type processList struct{}

func (processList) Spec() Spec {
	return Spec{Name: "process_list", Guide: "process_list lists the background processes of the session; they end with it.",
		Description: "List the session's background processes: id, command, pid, state, exit code, output bytes.",
		Schema:      schema(`{"type":"object","properties":{}}`)}
}
func (processList) Asks() bool                     { return false }
func (processList) Kind() string                   { return protocol.KindRead }
func (processList) Summary(json.RawMessage) string { return "List the background processes" }
func (processList) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	if env.Processes == nil {
		return errorf("background processes are not available here")
	}
	list := env.Processes.List()
	if len(list) == 0 {
		return Result{Output: "(no background processes)"}
	}
	var b strings.Builder
	for _, p := range list {
		state := p.State
		if p.ExitCode != nil {
			state += fmt.Sprintf(" (exit code %d)", *p.ExitCode)
		} else if p.Signal != "" {
			state += " (" + p.Signal + ")"
		}
		fmt.Fprintf(&b, "%s  pid %d  %s  %d bytes of output  %s\n", p.ID, p.Pid, state, p.OutputBytes, p.Command)
	}
	return Result{Output: strings.TrimRight(b.String(), "\n")}
}
