// Package transport provides the daemon's local endpoint: Listen and Dial
// for a Unix socket (a Windows named pipe behind the same API), with the
// safe start-up sequence of the protocol (private directory, lock file,
// live-daemon probe, stale-socket removal, 0600 socket) and the peer
// identity of every accepted connection.
package transport

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"
)

// Peer is who is on the other end of an accepted connection.
type Peer struct {
	Label string // for the audit log: "unix:pid=N,uid=N", "pipe:local", ...
	UID   int    // -1 when the platform does not say
	PID   int    // 0 when the platform does not say
}

// ErrAlreadyServing is returned by Listen when a daemon answers at the path.
var ErrAlreadyServing = errors.New("a daemon is already serving")

// LockedError is returned by Listen (and LockDir) when another process
// holds the lock.
type LockedError struct {
	Path string // the socket path (LockDir: the directory)
	Lock string // the lock file; "" where there is none (a Windows named mutex)
	PID  int    // the pid recorded in the lock file, 0 if none is
}

func (e *LockedError) Error() string {
	switch {
	case e.PID > 0:
		return fmt.Sprintf("another daemon owns %s (pid %d)", e.Path, e.PID)
	case e.Lock != "":
		return fmt.Sprintf("another process holds the lock of %s, %s, and has written no pid in it (a daemon starting, or another program: lsof %s names it)", e.Path, e.Lock, e.Lock)
	}
	return fmt.Sprintf("another process owns %s", e.Path)
}

// Who names what may hold a lock: a daemon with its pid, else the lock
// file, else the path (for "another daemon (pid N) uses ..." and the
// like).
func (e *LockedError) Who() string {
	switch {
	case e.PID > 0:
		return fmt.Sprintf("another daemon (pid %d)", e.PID)
	case e.Lock != "":
		return fmt.Sprintf("another process (holding %s, with no pid written in it)", e.Lock)
	}
	return "another process"
}

// ForeignError is a file in the socket's place, or a lock file, that
// belongs to another user: it made the path first (in a shared
// directory), and it is never used nor removed.
type ForeignError struct {
	What string // "socket", "lock file", "file"
	Path string
	UID  int // its owner
	Our  int
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("the %s %s belongs to %s, not to you (uid %d): another user made it first; set ZEROCLAW_SOCKET to a path in a directory of your own (the default is in the data directory), or have it removed",
		e.What, e.Path, userName(e.UID), e.Our)
}

// userName is "name (uid N)", or "uid N" for a uid without a name.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// ErrPeerRefused is returned by Authorize for a peer of another user.
var ErrPeerRefused = errors.New("peer refused: connection from another user")
