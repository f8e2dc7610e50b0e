// Package hook runs command hooks as Claude Code does: a command gets the
// event as JSON on stdin; exit 0 continues, exit 2 blocks (its stderr is
// the reason), another exit is an error that does not block; a JSON
// answer on stdout ({"decision":"block","reason":...} or
// {"hookSpecificOutput":{"permissionDecision":"allow"|"deny"|"ask"}}) is
// honoured. A hook that hangs is killed at its timeout; what it prints is
// read to the end but only a bounded part kept.
package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"
)

// Events a hook can be for.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SessionStart     = "SessionStart"
)

// Events lists them.
var Events = []string{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart}

// Hook is one configured hook.
type Hook struct {
	Event   string
	Matcher string // a tool name or a regular expression over it ("" or "*": every tool)
	Command string
	Timeout time.Duration
}

// Matches says whether h is for event and tool.
func (h Hook) Matches(event, tool string) bool {
	if h.Event != event {
		return false
	}
	if h.Matcher == "" || h.Matcher == "*" || tool == "" {
		return true
	}
	re, err := regexp.Compile("^(?:" + h.Matcher + ")$")
	return err == nil && re.MatchString(tool)
}

// Input is what a hook gets on stdin (Claude Code's field names).
type Input struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse   any             `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	StopHookActive bool            `json:"stop_hook_active,omitempty"`
	Source         string          `json:"source,omitempty"` // SessionStart: startup, resume
}

// Result is how a hook run went.
type Result struct {
	Command  string
	Outcome  string // ok, blocked, error, timeout
	Reason   string // why it blocked: its stderr, or its JSON's reason
	Error    string // why it failed
	Duration time.Duration
	// Permission is a PreToolUse hook's permissionDecision (allow, deny,
	// ask), "" when it gave none.
	Permission string
	Stdout     string // what it printed (the kept part)
}

// Blocked says whether the hook blocks the event.
func (r Result) Blocked() bool { return r.Outcome == "blocked" }

// keep is how much of a hook's stdout and of its stderr is kept.
const keep = 64 << 10

// Runner runs hooks: Argv makes a hook's command line (the shell, and
// the sandbox around it); Environ is its environment (no provider keys).
type Runner struct {
	Argv    func(command, dir string) ([]string, error)
	Environ []string
}

// Run runs h with in.
func (r Runner) Run(ctx context.Context, h Hook, in Input) Result {
	start := time.Now()
	res := Result{Command: h.Command}
	done := func(outcome string) Result {
		res.Outcome, res.Duration = outcome, time.Since(start)
		return res
	}
	argv, err := r.Argv(h.Command, in.Cwd)
	if err != nil {
		res.Error = err.Error()
		return done("error")
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = in.Cwd, r.Environ
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	stdin, _ := json.Marshal(in)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res.Stdout = stdout.String()
	var ee *exec.ExitError
	switch {
	case tctx.Err() == context.DeadlineExceeded:
		res.Error = fmt.Sprintf("did not finish within %s: killed", timeout)
		return done("timeout")
	case ctx.Err() != nil:
		res.Error = "cancelled"
		return done("error")
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		res.Reason = strings.TrimSpace(stderr.String())
		if res.Reason == "" {
			res.Reason = "a hook blocked it (" + h.Command + ")"
		}
		return done("blocked")
	case err != nil:
		res.Error = strings.TrimSpace(err.Error() + ": " + stderr.String())
		return done("error")
	}
	// Exit 0: a JSON answer may decide.
	var answer struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Specific struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if out := strings.TrimSpace(res.Stdout); strings.HasPrefix(out, "{") && json.Unmarshal([]byte(out), &answer) == nil {
		switch p := answer.Specific.PermissionDecision; p {
		case "allow", "deny", "ask":
			res.Permission = p
			if p == "deny" {
				res.Reason = cmpOr(answer.Specific.PermissionDecisionReason, answer.Reason, "a hook denied it ("+h.Command+")")
			}
		}
		if answer.Decision == "block" {
			res.Reason = cmpOr(answer.Reason, "a hook blocked it ("+h.Command+")")
			return done("blocked")
		}
	}
	return done("ok")
}

func cmpOr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// ShellArgv runs command with the platform's shell.
func ShellArgv(command string) []string {
	if runtime.GOOS == "windows" {
		return []string{"cmd", "/d", "/s", "/c", command}
	}
	return []string{"sh", "-c", command}
}

// capped keeps the first keep bytes written to it and counts the rest:
// a hook that prints 10 MB is read to its end in bounded memory.
type capped struct {
	mu      sync.Mutex
	b       []byte
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := keep - len(c.b); room > 0 {
		n := min(room, len(p))
		c.b = append(c.b, p[:n]...)
		c.dropped += len(p) - n
	} else {
		c.dropped += len(p)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		return string(c.b) + fmt.Sprintf("\n[%d more bytes not kept]", c.dropped)
	}
	return string(c.b)
}

var _ io.Writer = (*capped)(nil)
