package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

const (
	shellOutputCap  = 64 << 10 // bytes of output kept (the tail)
	shellDefaultSec = 120
	shellMaxSec     = 3600
	// KillGrace is how long a cancelled command's process group has
	// between SIGTERM and SIGKILL.
	KillGrace = sandbox.StopGrace
)

// Shells are the shells the shell tool can run commands with
// ([daemon] shell); "" is ShellProgram, the platform's.
var Shells = []string{"bash", "sh", "zsh", "cmd", "powershell", "pwsh"}

// ShellArgs are the arguments that run script with shell (cmd's command
// line is built whole on Windows; see shellCommand there).
func ShellArgs(shell, script string) []string {
	switch shell {
	case "cmd":
		return []string{"/d", "/s", "/c", script}
	case "powershell", "pwsh":
		return []string{"-NoLogo", "-NoProfile", "-NonInteractive", "-Command", script}
	}
	return []string{"-c", script}
}

func isPOSIX(shell string) bool { return shell == "bash" || shell == "sh" || shell == "zsh" }

func (e *Env) shell() string {
	if e.Shell != "" {
		return e.Shell
	}
	return ShellProgram
}

// shellArgs are the shell tool's arguments.
type shellArgs struct {
	Command     string `json:"command"`
	TimeoutSecs int    `json:"timeout_secs,omitempty" schema:"minimum=1,maximum=3600" jsonschema:"default 120"`
	Background  bool   `json:"background,omitempty" jsonschema:"start it and answer at once with its process id (for servers, watchers, long runs); read it with process_output"`
	TTY         bool   `json:"tty,omitempty" jsonschema:"run it under a terminal (for programs that need one: prompts, REPLs, colours); type into it with process_write"`
	Cols        int    `json:"cols,omitempty" schema:"minimum=10,maximum=1000" jsonschema:"the terminal's width (tty), default 120"`
	Rows        int    `json:"rows,omitempty" schema:"minimum=2,maximum=1000" jsonschema:"the terminal's height (tty), default 40"`
}

type shell struct{ takes[shellArgs] }

func (t shell) Spec() Spec {
	return Spec{Name: "shell", Guide: "Run commands with shell to build, test and inspect; prefer commands that finish on their own, and read their output before going on. Start a server, a watcher or a long run with shell {background: true} and go on working (you are told when it ends); run a program that needs a terminal (a prompt, a REPL) with tty: true.",
		Description: "Run a command with the session's shell (" + ShellProgram + " unless configured) in the session directory. Output (stdout and stderr together) is capped at 64 KiB, keeping the end.",
		Schema:      t.schema()}
}
func (shell) Asks() bool   { return true }
func (shell) Kind() string { return protocol.KindExecute }
func (t shell) Summary(input json.RawMessage) string {
	a, _ := t.args(input)
	return "Run: " + a.Command
}

func (t shell) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	a, err := t.args(input)
	if err != nil {
		return errorf("%v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return errorf("command is required")
	}
	secs := a.TimeoutSecs
	if secs <= 0 {
		secs = shellDefaultSec
	}
	secs = min(secs, shellMaxSec)
	how := startHow{tty: a.TTY, cols: a.Cols, rows: a.Rows}
	if how.cols <= 0 {
		how.cols = ttyCols
	}
	if how.rows <= 0 {
		how.rows = ttyRows
	}
	if a.Background {
		return startBackground(env, a.Command, how)
	}
	if a.TTY {
		return foregroundTTY(ctx, env, a.Command, how, secs, a.TimeoutSecs <= 0)
	}
	if env.Terminal != nil {
		return inTerminal(ctx, env, a.Command, secs)
	}
	return runPiped(ctx, env, a, secs)
}

// runPiped runs a foreground command with its output to a pipe, for secs:
// until it ends, is cancelled, times out, or (given no timeout, in a
// session that keeps background processes) moves to the background.
func runPiped(ctx context.Context, env *Env, a shellArgs, secs int) Result {
	// The command's own context: the call's cancellation ends it, and
	// an explicit timeout; a command moved to the background leaves
	// both behind (a context the call's end would cancel cannot be it).
	cctx, cancelCmd := context.WithCancel(context.Background())
	detach := context.AfterFunc(ctx, cancelCmd)
	moved := false
	defer func() {
		if !moved {
			detach()
			cancelCmd()
		}
	}()
	// A command given no timeout moves to the background at secs when
	// the session keeps background processes; else it is killed then.
	after := time.Duration(secs) * time.Second
	canMove := a.TimeoutSecs <= 0 && env.Processes != nil
	if canMove && env.BackgroundAfter > 0 {
		after = env.BackgroundAfter
	}
	pc, err := env.prepare(cctx, a.Command)
	if err != nil {
		return errorf("%v", err)
	}
	defer pc.close()
	cmd, sb := pc.cmd, env.Commands.Sandbox
	out := &tailBuffer{max: shellOutputCap}
	r, err := startPiped(cmd)
	if err != nil {
		return errorf("%v", err)
	}
	startedAt := time.Now()
	untrack := pc.started(env)
	sink := &switchWriter{w: out}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(sink, r)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(after)
	timedOut := false
	select {
	case err = <-waited:
	case <-timer.C:
		if canMove {
			if res, ok := moveToBackground(env, a.Command, cmd, startedAt, sink, out, waited, copied, r, untrack, cancelCmd); ok {
				moved = true
				detach()
				return res
			}
		}
		timedOut = true
		cancelCmd() // the group: TERM, then KILL after the grace
		err = <-waited
	}
	timer.Stop()
	endPiped(cmd, r, copied)
	untrack()
	return pipedResult(ctx, out, err, timedOut, secs, sb)
}

// startPiped starts cmd with its output (stdout and stderr together) to
// our own pipe, not exec's: Wait then returns when bash exits even if a
// background child still holds the pipe; the group is killed after, and
// the output read to its end. It returns the pipe's end to read.
func startPiped(cmd *exec.Cmd) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close()
	return r, nil
}

// endPiped ends what an exited command left: its process group, then the
// reading of its pipe r (copied is closed when that is done).
func endPiped(cmd *exec.Cmd, r *os.File, copied <-chan struct{}) {
	// Nothing the command started outlives it.
	killGroup(cmd.Process.Pid)
	select {
	case <-copied:
	case <-time.After(KillGrace):
		// A child that left the group (setsid) still holds the pipe:
		// stop reading it.
	}
	r.Close()
	<-copied
}

// pipedResult is what the model reads of a command that ended (with
// err, from Wait): its output, the part dropped said, and how it ended.
func pipedResult(ctx context.Context, out *tailBuffer, err error, timedOut bool, secs int, sb *Sandbox) Result {
	text := out.String()
	if runtime.GOOS == "windows" {
		text = strings.ReplaceAll(text, "\r\n", "\n") // cmd's line ends, as the model reads every other text
	}
	if out.dropped > 0 {
		text = fmt.Sprintf("[%d bytes of output dropped; the last %d follow]\n", out.dropped, shellOutputCap) + text
	}
	switch {
	case ctx.Err() != nil:
		return Result{Output: text + "\n[cancelled]", IsError: true}
	case timedOut:
		return Result{Output: text + fmt.Sprintf("\n[timed out after %d s]", secs), IsError: true}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		note := ""
		if sb != nil {
			note = sb.note(text)
		}
		return Result{Output: text + fmt.Sprintf("\n[exit code %d]", ee.ExitCode()) + note, IsError: true}
	}
	if err != nil {
		return errorf("%v", err)
	}
	if text == "" {
		text = "(no output)"
	}
	return Result{Output: text}
}

// prepared is a command made ready to start: the shell, the umask, the
// sandbox and the start gate (see Reaper) as every command of the shell
// tool has them, foreground or background.
type prepared struct {
	cmd          *exec.Cmd
	gateR, gateW *os.File
}

// prepare makes the command that runs command in the session's directory.
func (env *Env) prepare(ctx context.Context, command string) (*prepared, error) {
	shell := env.shell()
	posix := isPOSIX(shell)
	script := command
	if env.Umask != "" && posix {
		// The daemon's own files are private (umask 077); the user's
		// commands get the user's umask back.
		script = "umask " + env.Umask + "; " + command // same line: error messages keep their line numbers
	}
	pc := &prepared{}
	// A command whose group is recorded (see Reaper) waits, before doing
	// anything, until the record is written: a daemon killed in between
	// must not leave an unrecorded command running. If the daemon dies
	// first, the gate closes unwritten and the command exits unrun.
	if env.Reaper != nil && gateable && posix {
		var err error
		if pc.gateR, pc.gateW, err = os.Pipe(); err != nil {
			return nil, err
		}
		script = "read -r -u 3 _ || exit 125; exec 3<&-; " + script // same line, as above
	}
	cmd := shellCommand(ctx, shell, script)
	if sb := env.Commands.Sandbox; sb != nil {
		if sb.Refuse != "" {
			pc.close()
			return nil, errors.New(sb.Refuse)
		}
		argv := sandbox.Wrap(sb.Exe, sb.policy(env.Cwd), cmd.Args)
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	}
	cmd.Dir = env.Cwd
	cmd.Env = env.Environ
	if pc.gateR != nil {
		cmd.ExtraFiles = []*os.File{pc.gateR} // fd 3
	}
	ownGroup(cmd)
	pc.cmd = cmd
	return pc, nil
}

// started follows a started command: its group is recorded (the
// function returned forgets it), and the gate opened.
func (pc *prepared) started(env *Env) (untrack func()) {
	started(pc.cmd)
	untrack = env.track(pc.cmd.Process.Pid)
	if pc.gateW != nil {
		pc.gateR.Close()
		pc.gateW.Write([]byte("\n")) // recorded: go
		pc.gateW.Close()
	}
	return untrack
}

func (pc *prepared) close() {
	if pc.gateR != nil {
		pc.gateR.Close()
		pc.gateW.Close()
	}
}

// inTerminal runs the command in the client's terminal; the result reads
// as one run here would.
func inTerminal(ctx context.Context, env *Env, command string, secs int) Result {
	script := command
	if env.Umask != "" && isPOSIX(env.shell()) {
		script = "umask " + env.Umask + "; " + command
	}
	o, err := env.Terminal(ctx, TerminalRun{Program: env.shell(), Command: script, Cwd: env.Cwd, Timeout: secs, OutputLimit: shellOutputCap})
	if ctx.Err() != nil {
		return Result{Output: o.Output + "\n[cancelled]", IsError: true}
	}
	if err != nil {
		return errorf("the client's terminal: %v", err)
	}
	text := o.Output
	if o.Truncated {
		text = fmt.Sprintf("[output cut to the last %d bytes]\n", shellOutputCap) + text
	}
	switch {
	case o.TimedOut:
		return Result{Output: text + fmt.Sprintf("\n[timed out after %d s]", secs), IsError: true}
	case o.ExitCode == nil:
		return Result{Output: text + fmt.Sprintf("\n[ended by signal %s]", o.Signal), IsError: true}
	case *o.ExitCode != 0:
		return Result{Output: text + fmt.Sprintf("\n[exit code %d]", *o.ExitCode), IsError: true}
	}
	if text == "" {
		text = "(no output)"
	}
	return Result{Output: text}
}

// switchWriter passes a command's output to w, which a move to the
// background changes, with nothing lost between.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// moveToBackground makes a foreground command that ran past its time a
// background process of the session: what it printed so far is kept, it
// goes on printing into the process's ring, and the call answers with
// its id. It fails (the command is then killed, as a timeout) when the
// session cannot take one more.
func moveToBackground(env *Env, command string, cmd *exec.Cmd, startedAt time.Time, sink *switchWriter, out *tailBuffer,
	waited <-chan error, copied <-chan struct{}, r *os.File, untrack, cancelCmd func()) (Result, bool) {
	bp, err := env.Processes.New(command)
	if err != nil {
		return Result{}, false
	}
	sink.mu.Lock()
	tail, dropped := out.String(), out.dropped
	sink.w = bp.Writer()
	sink.mu.Unlock()
	pid := cmd.Process.Pid
	bp.Adopt(pid, startedAt, int64(dropped), []byte(tail), func() error {
		err := <-waited
		killGroup(pid) // nothing it started outlives it
		select {
		case <-copied:
		case <-time.After(KillGrace):
		}
		r.Close()
		<-copied
		return err
	}, background.Hooks{
		Signal:   func(sig os.Signal) error { return signalGroup(pid, sig) },
		KillTree: func() { killGroup(pid) },
		Ended:    func() { untrack(); cancelCmd() },
	})
	secs := int(time.Since(startedAt).Seconds())
	text := tail
	if dropped > 0 {
		text = fmt.Sprintf("[%d bytes of output dropped; the last %d follow]\n", dropped, shellOutputCap) + text
	}
	return Result{Output: text + fmt.Sprintf("\n[still running after %d s: moved to the background as %s (pid %d); read it with process_output {\"id\":%q, \"since\":%d}, wait with process_wait, stop it with process_kill]",
		secs, bp.ID(), pid, bp.ID(), dropped+len(tail))}, true
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.dropped += over
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return n, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
