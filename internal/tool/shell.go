package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

const (
	shellOutputCap  = 64 << 10 // bytes of output kept (the tail)
	shellDefaultSec = 120
	shellMaxSec     = 3600
	// KillGrace is how long a cancelled command's process group has
	// between SIGTERM and SIGKILL.
	KillGrace = 2 * time.Second
)

type shell struct{}

func (shell) Spec() Spec {
	return Spec{Name: "shell", Description: "Run a command with bash -c in the session directory. Output (stdout and stderr together) is capped at 64 KiB, keeping the end.",
		Schema: schema(`{"type":"object","properties":{"command":{"type":"string"},"timeout_secs":{"type":"integer","minimum":1,"maximum":3600,"description":"default 120"}},"required":["command"]}`)}
}
func (shell) Asks() bool { return true }
func (shell) Summary(input json.RawMessage) string {
	var a struct{ Command string }
	json.Unmarshal(input, &a)
	return "Run: " + a.Command
}

func (shell) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var a struct {
		Command     string `json:"command"`
		TimeoutSecs int    `json:"timeout_secs"`
	}
	if err := decode(input, &a); err != nil {
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
	tctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(tctx, "bash", "-c", a.Command)
	cmd.Dir = env.Cwd
	out := &tailBuffer{max: shellOutputCap}
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	err := cmd.Run()
	text := out.String()
	if out.dropped > 0 {
		text = fmt.Sprintf("[%d bytes of output dropped; the last %d follow]\n", out.dropped, shellOutputCap) + text
	}
	switch {
	case ctx.Err() != nil:
		return Result{Output: text + "\n[cancelled]", IsError: true}
	case tctx.Err() != nil:
		return Result{Output: text + fmt.Sprintf("\n[timed out after %d s]", secs), IsError: true}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return Result{Output: text + fmt.Sprintf("\n[exit code %d]", ee.ExitCode()), IsError: true}
	}
	if err != nil {
		return errorf("%v", err)
	}
	if text == "" {
		text = "(no output)"
	}
	return Result{Output: text}
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

func init() { register(shell{}) }
