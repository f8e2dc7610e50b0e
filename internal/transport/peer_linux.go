package transport

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

func peerCred(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if serr != nil {
		return Peer{}, serr
	}
	return Peer{Label: fmt.Sprintf("unix:pid=%d,uid=%d", cred.Pid, cred.Uid), UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}
