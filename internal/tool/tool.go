// Package tool holds the agent's tools: their argument schemas, whether
// they must ask before running, and what they do. Tools know nothing of
// sessions or the wire; what they need from the outside (the working
// directory, asking the user, publishing a plan) comes in an Env.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// Spec describes a tool to the model.
type Spec struct {
	Name        string
	Description string
	Schema      json.RawMessage
	// Guide is how the agent should use the tool, one sentence for the
	// system prompt that names the tool (built-in tools; the
	// instructions speak only of the tools an agent has).
	Guide string
}

// Result is what a tool gives back to the model.
type Result struct {
	Output  string
	IsError bool
	// Images are images the call gave (an MCP server's tool may): they
	// reach a model that takes images as images.
	Images []Image
	// Details are structured fields for clients (JSON; tool_result's
	// details); the model reads Output.
	Details json.RawMessage
}

// Image is an image a tool gave.
type Image struct {
	MimeType string
	Data     []byte
}

// Concurrent is a tool whose calls run at once when a reply makes
// several together (each task is a sub-agent of its own).
type Concurrent interface {
	Concurrent() bool
}

// SpecFor is a tool whose spec depends on the session (the task tool
// lists the agents it can start).
type SpecFor interface {
	SpecFor(env *Env) Spec
}

func errorf(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is one tool.
type Tool interface {
	Spec() Spec
	// Asks reports whether the tool needs approval under the supervised
	// risk level (and is refused under readonly).
	Asks() bool
	// Summary is a one-line description of a call, for approval prompts.
	Summary(input json.RawMessage) string
	// Kind is what the tool does, in ACP's words (protocol.KindRead,
	// ...: read, edit, delete, move, search, execute, think, fetch or
	// other).
	Kind() string
	Run(ctx context.Context, env *Env, input json.RawMessage) Result
}

// Title is a call's title for the people watching: the tool's name and
// the argument that says most about the call (a command, a path, a
// pattern, a question), cut at 80 bytes.
func Title(name string, input json.RawMessage) string {
	var a map[string]any
	json.Unmarshal(input, &a)
	for _, k := range []string{"command", "path", "pattern", "question", "description"} {
		if v, ok := a[k].(string); ok && v != "" {
			if len(v) > 80 {
				v = v[:80] + "…"
			}
			return fmt.Sprintf("%s: %s", name, v)
		}
	}
	return name
}

// Elicitation is a question put to the user: a form described by a JSON
// schema of an object.
type Elicitation struct {
	Message string
	Schema  json.RawMessage
	// URL, with ID, makes it a url-mode question (an MCP server's): the
	// user is sent to URL, and says whether they went.
	URL, ID string
}

// Answer is the user's reply to an Elicitation.
type Answer struct {
	Action  string          // accept | decline | cancel
	Content json.RawMessage // the form's object when accepted
}

// SampleRequest is a model call a tool asks for: a conversation of user
// and assistant texts.
type SampleRequest struct {
	From      string // who asks ("MCP server NAME")
	System    string
	Messages  []SampleMessage
	MaxTokens int
	Trusted   bool // ask no one (the server is trusted)
}

// SampleMessage is one message of a SampleRequest.
type SampleMessage struct{ Role, Text string }

// SampleResult is the model's answer.
type SampleResult struct {
	Text, Model, StopReason string
}

// PlanEntry is one entry of a plan: the plan event's.
type PlanEntry = protocol.PlanEntry

// Env is what a tool may use of the session that runs it.
type Env struct {
	Cwd string
	// Confine keeps file tools inside Cwd.
	Confine bool
	// Elicit asks the user; nil when no client can answer. It returns
	// the context's error when the wait ends unanswered.
	Elicit func(ctx context.Context, e Elicitation) (Answer, error)
	// Plan publishes a plan.
	Plan func(entries []PlanEntry)
	// Progress, set for one call, tells the people watching how far it
	// is (total 0: unknown).
	Progress func(progress, total float64, message string)
	// Sample, set for one call, asks the session's model on behalf of
	// the tool (an MCP server's sampling/createMessage): after the user
	// approves, unless trusted; the call is charged to the session.
	Sample func(ctx context.Context, r SampleRequest) (SampleResult, error)
	// Commands is what commands run with.
	Commands
	// FS, when set, reads and writes files through the client (an
	// editor) instead of the disk, after the same path checks.
	FS *ClientFS
	// Terminal, when set, runs the shell tool's commands in the client's
	// terminal (an editor's) instead of here.
	Terminal func(ctx context.Context, r TerminalRun) (TerminalOutcome, error)
	// Tasks starts and drives the session's sub-agents (nil: none).
	Tasks Tasks
	// Goal is the session's active goal (nil: none).
	Goal Goal
	// PlanExit leaves the plan mode (nil: not in it).
	PlanExit PlanExit
	// CallID, set for one call, is the model's id of the call.
	CallID string
}

// Commands is what the shell tool's commands run with, one value from
// the daemon's start to the tool.
type Commands struct {
	// Environ is the environment of commands (nil: the daemon's), with
	// the variables that hold provider keys removed by whoever made it.
	Environ []string
	// Umask is the umask commands run with, in octal ("0022"); ""
	// leaves the daemon's.
	Umask string
	// Shell runs the shell tool's commands (one of Shells; "":
	// ShellProgram).
	Shell string
	// Processes are the session's background processes (nil: none can
	// be started).
	Processes *background.Table
	// BackgroundAfter is when a command given no timeout moves to the
	// background (0: at the default timeout).
	BackgroundAfter time.Duration
	// Reaper records running commands' process groups, so a daemon that
	// dies does not leave them running (nil: not recorded).
	Reaper *Reaper
	// Gateway is the daemon's own gateway's URL ("" when none runs),
	// which web_fetch refuses to reach.
	Gateway func() string
	// Sandbox confines the shell tool's commands (nil: not at all).
	Sandbox *Sandbox
}

// Sandbox is how commands are confined (internal/sandbox): they may
// write the session's directory (unless ReadOnly), the temp dirs and
// Writable, and reach the network only with Network.
type Sandbox struct {
	Exe      string // the shim: the zeroclaw binary
	Writable []string
	// Temp are the temp dirs commands may write (nil: the system's:
	// os.TempDir(), /tmp and $TMPDIR).
	Temp     []string
	ReadOnly bool
	Network  bool
	// Refuse, when set, refuses every command with this reason: a
	// sandbox is wanted but cannot be enforced here.
	Refuse string
	// Mode names it, for messages (workspace-write, read-only).
	Mode string
	// Hide are the daemon's own paths, which no command may reach
	// (sandbox.Policy.Hide).
	Hide []string
	// PrivateTemp, when set, is the only temp dir a read-only command
	// may write (its TMPDIR; made by the shim, the user's alone): not
	// the shared /tmp, where a project may lie.
	PrivateTemp string
}

// Wrap is argv as it runs in cwd under the sandbox (sb nil: as it is);
// an error when the sandbox refuses every command here.
func (sb *Sandbox) Wrap(cwd string, argv []string) ([]string, error) {
	if sb == nil {
		return argv, nil
	}
	if sb.Refuse != "" {
		return nil, errors.New(sb.Refuse)
	}
	return sandbox.Wrap(sb.Exe, sb.policy(cwd), argv), nil
}

// policy is the sandbox's policy for a command run in cwd.
func (sb *Sandbox) policy(cwd string) sandbox.Policy {
	p := sandbox.Policy{Network: sb.Network, Hide: sb.Hide}
	if !sb.Network {
		// No network: no other daemon's Unix socket either (where the
		// shim gives commands namespaces of their own).
		p.Hide = append(slices.Clip(p.Hide), localSockets()...)
	}
	seen := map[string]bool{}
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			p.Writable = append(p.Writable, d)
		}
	}
	switch {
	case sb.ReadOnly && sb.PrivateTemp != "":
		p.TempDir = sb.PrivateTemp
		add(sb.PrivateTemp)
	case sb.Temp == nil:
		add(os.TempDir())
		add("/tmp")
		add(os.Getenv("TMPDIR"))
	}
	for _, d := range sb.Temp {
		add(d)
	}
	if !sb.ReadOnly {
		add(cwd)
	}
	for _, w := range sb.Writable {
		add(w)
	}
	return p
}

// localSockets are where the user's and the system's daemons listen on
// Unix sockets: the user's runtime directory (D-Bus, ssh-agent, gpg,
// rootless Docker and Podman, Wayland, PipeWire), X's, the system bus
// and Docker's. A command without network finds them empty.
func localSockets() []string {
	out := []string{"/tmp/.X11-unix", "/run/dbus", "/var/run/dbus", "/run/docker.sock", "/var/run/docker.sock",
		"/run/podman", "/run/user/" + strconv.Itoa(os.Getuid())}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		out = append(out, d)
	}
	return out
}

// note is what a failed command's result says of the sandbox, when its
// output suggests the sandbox stopped it.
func (sb *Sandbox) note(output string) string {
	var notes []string
	low := strings.ToLower(output)
	if strings.Contains(low, "permission denied") || strings.Contains(low, "operation not permitted") || strings.Contains(low, "read-only file system") {
		where := "only in the session's directory, the temp dirs and [sandbox] writable"
		if sb.ReadOnly {
			where = "only in the temp dirs and [sandbox] writable"
			if sb.PrivateTemp != "" {
				where = "only in its own temp dir ($TMPDIR) and [sandbox] writable"
			}
		}
		notes = append(notes, fmt.Sprintf("the sandbox (%s) lets commands write %s", sb.Mode, where))
	}
	if !sb.Network {
		notes = append(notes, "the sandbox denies network access ([sandbox] network = false)")
	}
	if len(notes) == 0 {
		return ""
	}
	return "\n[" + strings.Join(notes, "; ") + "]"
}

// TerminalRun is a command for a client's terminal.
type TerminalRun struct {
	Program, Command, Cwd string
	Timeout               int // seconds
	OutputLimit           int // bytes
}

// TerminalOutcome is how a command ended in a client's terminal.
type TerminalOutcome struct {
	Output    string
	Truncated bool
	ExitCode  *int // nil: a signal ended it
	Signal    string
	TimedOut  bool
}

// ClientFS is a client's file access; either function may be nil (the
// disk then).
type ClientFS struct {
	Read  func(ctx context.Context, path string) (string, error)
	Write func(ctx context.Context, path, content string) error
}

func (e *Env) clientRead() func(context.Context, string) (string, error) {
	if e.FS == nil {
		return nil
	}
	return e.FS.Read
}

func (e *Env) clientWrite() func(context.Context, string, string) error {
	if e.FS == nil {
		return nil
	}
	return e.FS.Write
}

func (e *Env) track(pid int) func() {
	if e.Reaper == nil {
		return func() {}
	}
	return e.Reaper.Track(pid)
}

// Effect is what a call may change on disk: the files it names (the
// file tools), or anything at all (a command). The session's checkpoints
// capture it before the call and see what changed after.
type Effect struct {
	Paths    []string // absolute
	Anything bool
}

// ReadOnlyer is a tool that says whether it changes nothing (an MCP
// server's readOnlyHint); one that does not say is taken to change.
type ReadOnlyer interface {
	ReadOnly() bool
}

// Effecter is a tool that says what a call may change.
type Effecter interface {
	Effect(env *Env, input json.RawMessage) Effect
}

// EffectOf is what a call of t may change: what t says, else nothing for
// the kinds that only look (read, search, fetch, think), else anything
// (commands, an MCP server's tools).
func EffectOf(t Tool, env *Env, input json.RawMessage) Effect {
	if e, ok := t.(Effecter); ok {
		return e.Effect(env, input)
	}
	switch t.Kind() {
	case protocol.KindRead, protocol.KindSearch, protocol.KindFetch, protocol.KindThink:
		return Effect{}
	}
	return Effect{Anything: true}
}

// pathEffect is a file tool's effect: the file its path argument names
// (none when the call's arguments do not decode: Run refuses it).
func pathEffect(env *Env, p string, err error) Effect {
	if err != nil || p == "" {
		return Effect{}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd, p)
	}
	return Effect{Paths: []string{filepath.Clean(p)}}
}

func (t writeFile) Effect(env *Env, input json.RawMessage) Effect {
	a, err := t.args(input)
	return pathEffect(env, a.Path, err)
}
func (t editFile) Effect(env *Env, input json.RawMessage) Effect {
	a, err := t.args(input)
	return pathEffect(env, a.Path, err)
}
func (t multiEdit) Effect(env *Env, input json.RawMessage) Effect {
	a, err := t.args(input)
	return pathEffect(env, a.Path, err)
}
func (askUser) Effect(*Env, json.RawMessage) Effect { return Effect{} }
func (poll) Effect(*Env, json.RawMessage) Effect    { return Effect{} }
