// Package transport provides the daemon's local endpoint: Listen and Dial
// for a Unix socket (a Windows named pipe behind the same API), with the
// safe start-up sequence of the protocol (private directory, lock file,
// live-daemon probe, stale-socket removal, 0600 socket) and the peer
// identity of every accepted connection.
package transport

import (
	"errors"
	"fmt"
)

// Peer is who is on the other end of an accepted connection.
type Peer struct {
	Label string // for the audit log: "unix:pid=N,uid=N", "pipe:local", ...
	UID   int    // -1 when the platform does not say
	PID   int    // 0 when the platform does not say
}

// ErrAlreadyServing is returned by Listen when a daemon answers at the path.
var ErrAlreadyServing = errors.New("a daemon is already serving")

// LockedError is returned by Listen when another process holds the lock.
type LockedError struct {
	Path string // the socket path
	PID  int    // the pid recorded in the lock file, 0 if unreadable
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another daemon owns %s (pid %d)", e.Path, e.PID)
}

// ErrPeerRefused is returned by Authorize for a peer of another user.
var ErrPeerRefused = errors.New("peer refused: connection from another user")
