package background

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults and limits.
const (
	DefaultRingBytes = 1 << 20
	DefaultMax       = 8  // per session
	MaxPerDaemon     = 64 // all sessions together
)

// States of a process.
const (
	Running = "running"
	Exited  = "exited"
	Killed  = "killed"
	Lost    = "lost"
)

// running counts the processes of every table of this daemon.
var running atomic.Int64

// Table is one session's background processes.
type Table struct {
	dir       string // their output files
	ringBytes int
	logBytes  int64 // each one's output on disk, at most
	max       int

	mu     sync.Mutex
	procs  map[string]*Process
	closed bool
	// onChange, when set, hears of each process started and ended;
	// detached, what it would have heard waits in pending (Reattach).
	onChange func(*Process)
	detached bool
	pending  []*Process
}

// NewTable makes a table whose output files go in dir (each at most
// logBytes, see logFile); ringBytes, logBytes and max of 0 take the
// defaults.
func NewTable(dir string, ringBytes int, logBytes int64, max int, onChange func(*Process)) *Table {
	if ringBytes <= 0 {
		ringBytes = DefaultRingBytes
	}
	if logBytes <= 0 {
		logBytes = DefaultLogBytes
	}
	if max <= 0 {
		max = DefaultMax
	}
	return &Table{dir: dir, ringBytes: ringBytes, logBytes: logBytes, max: max, procs: map[string]*Process{}, onChange: onChange}
}

// Info describes a process (the wire's process object).
type Info struct {
	ID          string     `json:"id"`
	Command     string     `json:"command"`
	Pid         int        `json:"pid"`
	TTY         bool       `json:"tty"`
	State       string     `json:"state"`
	ExitCode    *int       `json:"exitCode,omitempty"`
	Signal      string     `json:"signal,omitempty"`
	StartedAt   time.Time  `json:"startedAt"`
	EndedAt     *time.Time `json:"endedAt,omitempty"`
	OutputBytes int64      `json:"outputBytes"`
}

// Process is one background process.
type Process struct {
	t       *Table
	id      string
	command string
	ring    *Ring
	file    *logFile
	out     io.Writer // the ring and the file

	tty  bool
	term *os.File // its terminal's master side (AttachTTY)
	// reader is the read end of its output (a pipe, or a terminal's
	// master side); copied is closed once all of it has been read.
	reader io.Closer
	copied chan struct{}

	mu      sync.Mutex
	pid     int
	stdin   io.WriteCloser
	state   string
	code    *int
	signal  string
	started time.Time
	ended   time.Time
	killing bool
	done    chan struct{}
	hooks   Hooks
	seen    atomic.Bool  // the model read its end (MarkSeen)
	seq     atomic.Int64 // its owner's mark (SetSeq)
}

// Hooks are how a process is stopped: the platform's, its caller's.
type Hooks struct {
	// Signal signals the process's whole group (a stop).
	Signal func(os.Signal) error
	// KillTree kills what is left of its tree.
	KillTree func()
	// Ended is called once it has ended (and its tree is gone).
	Ended func()
}

// Refused is why a process could not be started: a limit.
type Refused struct{ Why string }

func (e *Refused) Error() string { return e.Why }

// New reserves a process of command: the limits are checked, its output
// file made. Attach, start the command, then Run (or Abort).
func (t *Table) New(command string) (*Process, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, &Refused{"the session is closing: no process starts"}
	}
	n := 0
	for _, p := range t.procs {
		if p.Running() {
			n++
		}
	}
	if n >= t.max {
		return nil, &Refused{fmt.Sprintf("this session already runs %d background processes, its limit ([tools] max_processes): end one (process_kill) first", t.max)}
	}
	if running.Add(1) > MaxPerDaemon {
		running.Add(-1)
		return nil, &Refused{fmt.Sprintf("the daemon already runs %d background processes, its limit", MaxPerDaemon)}
	}
	b := make([]byte, 6)
	rand.Read(b)
	p := &Process{t: t, id: "p_" + hex.EncodeToString(b), command: command, ring: NewRing(t.ringBytes), state: Running, done: make(chan struct{})}
	p.out = p.ring
	if t.dir != "" {
		if err := os.MkdirAll(t.dir, 0o700); err == nil {
			if f, err := openLog(filepath.Join(t.dir, p.id+".log"), t.logBytes); err == nil {
				p.file, p.out = f, io.MultiWriter(p.ring, f)
			}
		}
	}
	t.procs[p.id] = p
	return p, nil
}

// Attach gives cmd the process's stdin and its output (stdout and stderr
// together, as written); the returned closer is the output's write end,
// to close once cmd has started.
func (p *Process) Attach(cmd *exec.Cmd) (io.Closer, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	growPipe(r)
	p.stdin = in
	p.read(r)
	return w, nil
}

// read copies its output from r until r ends.
func (p *Process) read(r io.ReadCloser) {
	p.reader, p.copied = r, make(chan struct{})
	go func() {
		defer close(p.copied)
		// Large reads: a process that prints fast costs a few syscalls
		// per MiB (its pipe holds 1 MiB where the system allows).
		buf := make([]byte, 256<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				p.out.Write(buf[:n])
			}
			if err != nil {
				return // a terminal's master side ends with EIO
			}
		}
	}()
}

// Abort releases a process whose command did not start.
func (p *Process) Abort() {
	p.t.mu.Lock()
	delete(p.t.procs, p.id)
	p.t.mu.Unlock()
	running.Add(-1)
	if p.file != nil {
		p.file.Close()
		os.Remove(p.file.Name())
		os.Remove(p.file.Name() + ".1")
	}
}

// Run follows the started cmd until it ends.
func (p *Process) Run(cmd *exec.Cmd, h Hooks) {
	p.follow(cmd.Process.Pid, time.Now(), cmd.Wait, h)
}

// Adopt takes in a command that was started in the foreground and runs
// on: what it printed so far (the tail kept, after dropped bytes), the
// rest of its output from out (wire it there at once), its wait. It has
// no stdin.
func (p *Process) Adopt(pid int, started time.Time, dropped int64, tail []byte, wait func() error, h Hooks) {
	p.ring.skip(dropped)
	p.out.Write(tail)
	p.follow(pid, started, wait, h)
}

// Writer is where a command's output goes (for Adopt).
func (p *Process) Writer() io.Writer { return p.out }

func (p *Process) follow(pid int, started time.Time, wait func() error, h Hooks) {
	p.mu.Lock()
	p.pid, p.started, p.hooks = pid, started, h
	p.mu.Unlock()
	p.t.changed(p)
	go func() {
		err := wait()
		if h.KillTree != nil {
			h.KillTree() // nothing it started outlives it
		}
		if p.copied != nil {
			// All it printed is read before it is said to have ended
			// (bounded: a child that left its group may hold the pipe).
			select {
			case <-p.copied:
			case <-time.After(2 * time.Second):
			}
			p.reader.Close()
			<-p.copied
		}
		p.mu.Lock()
		p.ended = time.Now()
		var ee *exec.ExitError
		switch {
		case err == nil:
			code := 0
			p.code = &code
		case errors.As(err, &ee):
			if code := ee.ExitCode(); code >= 0 {
				p.code = &code
			} else {
				p.signal = signalOf(ee)
			}
		}
		if p.killing {
			p.state = Killed
		} else {
			p.state = Exited
		}
		p.mu.Unlock()
		running.Add(-1)
		if p.file != nil {
			p.file.Close()
		}
		if h.Ended != nil {
			h.Ended()
		}
		close(p.done)
		p.t.changed(p)
	}()
}

func (t *Table) changed(p *Process) {
	t.record(p.Info())
	t.mu.Lock()
	fn := t.onChange
	if t.detached {
		t.pending = append(t.pending, p)
		fn = nil
	}
	t.mu.Unlock()
	if fn != nil {
		fn(p)
	}
}

// Detach stops telling onChange (its session is closed while its
// processes run on): what it would have heard is kept for Reattach.
func (t *Table) Detach() {
	t.mu.Lock()
	t.detached = true
	t.mu.Unlock()
}

// Reattach tells onChange from now on (the session is open again), and
// first of each change it missed.
func (t *Table) Reattach(onChange func(*Process)) {
	t.mu.Lock()
	t.onChange, t.detached = onChange, false
	missed := t.pending
	t.pending = nil
	t.mu.Unlock()
	for _, p := range missed {
		onChange(p)
	}
}

// Running counts the processes that still run.
func (t *Table) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.procs {
		if p.Running() {
			n++
		}
	}
	return n
}

// record writes what a process is now beside its output (<id>.json): a
// daemon that dies leaves the record of a running process, which the
// next one reports lost (Lost).
func (t *Table) record(i Info) {
	if t.dir == "" {
		return
	}
	b, _ := json.Marshal(i)
	tmp := filepath.Join(t.dir, i.ID+".json.tmp")
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, filepath.Join(t.dir, i.ID+".json"))
	}
}

// LostIn reports the processes recorded in dir as running that are not
// in live (nil: none): a daemon that ended without ending them ran them
// (its kill -9, a crash). Each is recorded lost, once.
func LostIn(dir string, live *Table) []Info {
	names, _ := filepath.Glob(filepath.Join(dir, "p_*.json"))
	var out []Info
	for _, name := range names {
		b, err := os.ReadFile(name)
		var i Info
		if err != nil || json.Unmarshal(b, &i) != nil || i.State != Running {
			continue
		}
		if live != nil && live.Get(i.ID) != nil {
			continue
		}
		now := time.Now().UTC()
		i.State, i.EndedAt = Lost, &now
		if fi, err := os.Stat(filepath.Join(dir, i.ID+".log")); err == nil {
			i.OutputBytes = max(i.OutputBytes, fi.Size())
		}
		b, _ = json.Marshal(i)
		if os.WriteFile(name, b, 0o600) == nil {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].StartedAt.Before(out[b].StartedAt) })
	return out
}

// Tail is the end of its output: its last lines, at most max bytes.
func (p *Process) Tail(max int) string {
	c := p.ring.Read(max64(0, p.ring.Total()-int64(max)), max)
	text := string(c.Data)
	if c.Next > int64(len(c.Data)) {
		if i := strings.IndexByte(text, '\n'); i >= 0 && i < len(text)-1 {
			text = text[i+1:] // from a line's start
		}
	}
	return text
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// Killed says whether it was stopped (Kill), not ended on its own.
func (p *Process) Killed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killing
}

// ID is the process's id.
func (p *Process) ID() string { return p.id }

// Running says whether it still runs.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Done is closed when it has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Info describes it now.
func (p *Process) Info() Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := Info{ID: p.id, Command: p.command, Pid: p.pid, TTY: p.tty, State: p.state, ExitCode: p.code, Signal: p.signal,
		StartedAt: p.started.UTC(), OutputBytes: p.ring.Total()}
	if !p.ended.IsZero() {
		e := p.ended.UTC()
		i.EndedAt = &e
	}
	return i
}

// Output is a read of a process's output, with its state.
type Output struct {
	Info
	Chunk
}

// Output reads its output from since (at most max bytes; 0: all kept).
func (p *Process) Output(since int64, max int) Output {
	return Output{Info: p.Info(), Chunk: p.ring.Read(since, max)}
}

// Wait waits until it ends or ctx does; it says whether it ended.
func (p *Process) Wait(ctx context.Context) bool {
	select {
	case <-p.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// WaitOutput waits until there is output past since, it ends, or ctx
// does.
func (p *Process) WaitOutput(ctx context.Context, since int64) {
	for p.ring.Total() <= since && p.Running() {
		select {
		case <-p.ring.changed():
		case <-p.done:
		case <-ctx.Done():
			return
		}
	}
}

// Write sends input to its stdin.
func (p *Process) Write(input string) (int, error) {
	if !p.Running() {
		return 0, errors.New("the process has ended")
	}
	if p.stdin == nil {
		return 0, errors.New("it has no stdin (it was started in the foreground)")
	}
	return io.WriteString(p.stdin, input)
}

// MarkSeen records that the model read that it ended (a read that said
// so): it need not be told again.
func (p *Process) MarkSeen() {
	if !p.Running() {
		p.seen.Store(true)
	}
}

// Seen says whether MarkSeen was called after it ended.
func (p *Process) Seen() bool { return p.seen.Load() }

// SetSeq marks it with n: for its session, the seq of the event that
// told its start.
func (p *Process) SetSeq(n int64) { p.seq.Store(n) }

// Seq is its mark (SetSeq).
func (p *Process) Seq() int64 { return p.seq.Load() }

// RunningProcesses lists the processes that still run.
func (t *Table) RunningProcesses() []*Process {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Process
	for _, p := range t.procs {
		if p.Running() {
			out = append(out, p)
		}
	}
	return out
}

// TTY says whether it runs under a terminal (AttachTTY).
func (p *Process) TTY() bool { return p.tty }

// Kill stops it: sig (nil: SIGTERM where there is one) to its group, and
// after grace what is left is killed. It returns once it has ended.
func (p *Process) Kill(sig os.Signal, grace time.Duration) {
	if !p.Running() {
		return
	}
	p.mu.Lock()
	p.killing = true
	h := p.hooks
	p.mu.Unlock()
	if sig != nil && h.Signal != nil {
		h.Signal(sig)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
	}
	if h.KillTree != nil {
		h.KillTree()
	}
	<-p.done
}

// Get is the process id, nil when the table has none.
func (t *Table) Get(id string) *Process {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.procs[id]
}

// List describes every process, the oldest first.
func (t *Table) List() []Info {
	t.mu.Lock()
	ps := make([]*Process, 0, len(t.procs))
	for _, p := range t.procs {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	out := make([]Info, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out
}

// Close ends every process (sig, then after grace what is left) and
// starts no other; it returns when all have ended.
func (t *Table) Close(sig os.Signal, grace time.Duration) {
	t.mu.Lock()
	t.closed = true
	ps := make([]*Process, 0, len(t.procs))
	for _, p := range t.procs {
		ps = append(ps, p)
	}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() { p.Kill(sig, grace) })
	}
	wg.Wait()
}
