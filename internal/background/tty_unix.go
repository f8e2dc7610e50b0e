//go:build !windows

package background

import (
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"

	"github.com/creack/pty"
)

// AttachTTY runs cmd under a new pseudo-terminal of cols×rows: its
// stdin, stdout and stderr are the terminal, it leads a session of its
// own (so its group is its pid, as Attach's commands' are) with the
// terminal as its controlling one, and TERM is xterm-256color (a
// command may set its own). Writes go to the terminal as keystrokes;
// its output is the terminal's bytes. The returned closer is the
// terminal's command side, to close once cmd has started.
func (p *Process) AttachTTY(cmd *exec.Cmd, cols, rows int) (io.Closer, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		ptmx.Close()
		tty.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// A new session, not only a group: a terminal's job control needs it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	// The terminal's type is this one's, not that of the terminal the
	// daemon was started from (a command may set its own).
	env := cmd.Env
	if env == nil {
		env = cmd.Environ()
	}
	cmd.Env = append(withoutTERM(env), "TERM=xterm-256color")
	p.tty, p.term, p.stdin = true, ptmx, ptmx
	p.read(ptmx)
	return tty, nil
}

func withoutTERM(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, "TERM=") {
			out = append(out, e)
		}
	}
	return out
}

// Resize changes the size of its terminal (the command is told by
// SIGWINCH).
func (p *Process) Resize(cols, rows int) error {
	if !p.tty {
		return errors.New("it does not run under a terminal (start it with tty: true)")
	}
	if !p.Running() {
		return errors.New("the process has ended")
	}
	return pty.Setsize(p.term, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
}
