//go:build windows

package transport

import (
	"context"
	"errors"
	"net"
)

// ErrPipeUnsupported is returned on Windows until the named pipe server
// lands: the endpoint name is resolved (see config.PipeName) but not served.
var ErrPipeUnsupported = errors.New("windows named pipes are not yet supported by zeroclaw; run the daemon under WSL")

// Listener is the Windows listener (not yet supported).
type Listener struct{ net.Listener }

// Path returns the pipe name.
func (l *Listener) Path() string { return "" }

// Listen is not yet supported on Windows.
func Listen(path string) (*Listener, error) { return nil, ErrPipeUnsupported }

// Dial is not yet supported on Windows.
func Dial(ctx context.Context, path string) (net.Conn, error) { return nil, ErrPipeUnsupported }

// Authorize labels a Windows pipe peer.
func Authorize(c net.Conn) (Peer, error) { return Peer{Label: "pipe:local", UID: -1}, nil }
