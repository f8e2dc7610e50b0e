package background

import (
	"errors"
	"io"
	"os/exec"
)

var errNoTTY = errors.New("interactive terminals (tty: true) are not supported on Windows yet; run the command without tty")

// AttachTTY is not supported on Windows (no ConPTY support yet).
func (p *Process) AttachTTY(cmd *exec.Cmd, cols, rows int) (io.Closer, error) { return nil, errNoTTY }

// Resize is not supported on Windows.
func (p *Process) Resize(cols, rows int) error { return errNoTTY }
