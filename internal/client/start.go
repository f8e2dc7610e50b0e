package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// StartOptions say how to start a daemon on demand.
type StartOptions struct {
	Exe       string   // the zeroclaw binary; "" means this executable
	ConfigDir string   // passed as --config-dir
	DataDir   string   // where daemon.log goes
	Env       []string // the daemon's environment; nil means ours
	Timeout   time.Duration
	// Persistent starts a daemon that stays after its last client (no
	// --ephemeral); Args are more daemon flags (--gateway ADDR).
	Persistent bool
	Args       []string
}

// DialOrStart dials endpoint and, when no daemon answers, starts
// `zeroclaw daemon --ephemeral` in the background and dials again until it
// is ready. When two clients race, the daemon's lock lets one daemon win
// and both clients connect to it.
func DialOrStart(ctx context.Context, endpoint string, o Options, s StartOptions) (*Client, error) {
	c, err := Dial(ctx, endpoint, o)
	if err == nil || !errors.Is(err, ErrNoDaemon) {
		return c, err
	}
	exe := s.Exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("start daemon: %w", err)
		}
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	logPath := filepath.Join(s.DataDir, "daemon.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	defer logf.Close()
	start, _ := logf.Seek(0, 2)
	args := []string{"daemon", "--config-dir", s.ConfigDir}
	if !s.Persistent {
		args = append(args, "--ephemeral")
	}
	cmd := exec.Command(exe, append(args, s.Args...)...)
	cmd.Env = s.Env
	cmd.Stdout, cmd.Stderr = logf, logf
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start daemon %s: %w", exe, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		c, err := Dial(ctx, endpoint, o)
		if err == nil {
			if pid := c.Init.ServerPID; pid != 0 && pid != cmd.Process.Pid && exited != nil {
				// Another client's daemon answered first: ours lost the
				// race, and, started late on a busy machine, could
				// otherwise take the lock once that one has gone and
				// linger with no client. It has served nobody yet.
				stopStarted(cmd.Process)
			}
			return c, nil
		}
		if !errors.Is(err, ErrNoDaemon) {
			return nil, err
		}
		select {
		case werr := <-exited:
			// It exited: if it lost the lock race, another daemon is coming up.
			tail := logTail(logPath, start)
			// (A lock without a pid yet: the winner has not written it.)
			if strings.Contains(tail, "another daemon owns") || strings.Contains(tail, "another process holds the lock of") || strings.Contains(tail, "already serving") {
				exited = nil
				continue
			}
			return nil, fmt.Errorf("the daemon exited before it was ready (%v); its log is %s:\n%s", werr, logPath, tail)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon did not become ready within %s; its log is %s", timeout, logPath)
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

func logTail(path string, from int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) < from {
		return ""
	}
	b = b[from:]
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
