//go:build windows

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// The Windows endpoint is a named pipe, \\.\pipe\zeroclaw-<hash>, carrying
// the same NDJSON bytes as the Unix socket.
//
// The server is written on golang.org/x/sys/windows rather than taken
// from go-winio: its ListenPipe hangs under Wine (its placeholder first
// instance is handed to a client), and CI tests the Windows build under
// Wine. Every instance is overlapped; an accept is an event-based
// overlapped ConnectNamedPipe waited together with a quit event, the next
// instance is created as soon as one connects, and a connected handle is
// wrapped with os.NewFile, which puts it on Go's runtime poller (reads and
// writes do not block each other, deadlines work, Close cancels a pending
// read). A synchronous handle would serialise a write behind a pending read
// on real Windows.

const (
	pipeBuffer = 64 << 10
	// pipeSDDL lets in only SYSTEM and the creating user: a protected DACL
	// (no inherited entries) with generic-all for the two.
	pipeSDDLFormat = "D:P(A;;GA;;;SY)(A;;GA;;;%s)"
)

// Listener is a listening named pipe. It holds a named mutex for the
// pipe's name, which refuses a second daemon.
type Listener struct {
	path  string
	name  *uint16
	sa    *windows.SecurityAttributes
	mutex windows.Handle
	quit  windows.Handle

	mu        sync.Mutex
	next      windows.Handle // the instance waiting for the next client
	closed    bool
	accepting sync.WaitGroup
	closeOnce sync.Once
}

// Path returns the pipe name.
func (l *Listener) Path() string { return l.path }

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return pipeAddr(l.path) }

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// SDDL returns the security descriptor the pipe is created with.
func SDDL() (string, error) {
	sid, err := userSID()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(pipeSDDLFormat, sid), nil
}

func userSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("read this process's user: %w", err)
	}
	return tu.User.Sid.String(), nil
}

// mutexName is Local\zeroclaw-<hash> for \\.\pipe\zeroclaw-<hash>.
func mutexName(path string) string {
	base := path[strings.LastIndexAny(path, `\/`)+1:]
	return `Local\` + base
}

// Listen creates the pipe's first instance; a second daemon for the same
// name is refused by the named mutex (ErrAlreadyServing when the other
// answers, else a LockedError). The mutex is the lock: no lock
// directory is used.
func Listen(path, _ string) (*Listener, error) {
	if !strings.HasPrefix(path, `\\.\pipe\`) {
		return nil, fmt.Errorf("endpoint %q: on Windows it must be a pipe name (\\\\.\\pipe\\NAME)", path)
	}
	mname, _ := windows.UTF16PtrFromString(mutexName(path))
	mutex, err := windows.CreateMutex(nil, false, mname)
	if err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return nil, fmt.Errorf("create mutex %s: %w", mutexName(path), err)
	}
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		windows.CloseHandle(mutex)
		if c, derr := Dial(context.Background(), path); derr == nil {
			c.Close()
			return nil, ErrAlreadyServing
		}
		return nil, &LockedError{Path: path}
	}
	sddl, err := SDDL()
	if err != nil {
		windows.CloseHandle(mutex)
		return nil, err
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		windows.CloseHandle(mutex)
		return nil, fmt.Errorf("security descriptor %s: %w", sddl, err)
	}
	quit, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(mutex)
		return nil, err
	}
	name, _ := windows.UTF16PtrFromString(path)
	l := &Listener{path: path, name: name, mutex: mutex, quit: quit,
		sa: &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}}
	if l.next, err = l.instance(true); err != nil {
		windows.CloseHandle(quit)
		windows.CloseHandle(mutex)
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			return nil, &LockedError{Path: path} // another process owns the name
		}
		return nil, fmt.Errorf("create pipe %s: %w", path, err)
	}
	return l, nil
}

// instance creates one pipe instance.
func (l *Listener) instance(first bool) (windows.Handle, error) {
	flags := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	mode := uint32(windows.PIPE_TYPE_BYTE | windows.PIPE_READMODE_BYTE | windows.PIPE_WAIT | windows.PIPE_REJECT_REMOTE_CLIENTS)
	return windows.CreateNamedPipe(l.name, flags, mode, windows.PIPE_UNLIMITED_INSTANCES, pipeBuffer, pipeBuffer, 0, l.sa)
}

// Accept waits for a client on the waiting instance, then makes the next.
func (l *Listener) Accept() (net.Conn, error) {
	l.mu.Lock()
	h := l.next
	closed := l.closed
	if !closed {
		l.accepting.Add(1)
	}
	l.mu.Unlock()
	if closed {
		return nil, net.ErrClosed
	}
	defer l.accepting.Done()
	if h == 0 {
		return nil, net.ErrClosed
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(ev)
	ov := &windows.Overlapped{HEvent: ev}
	err = windows.ConnectNamedPipe(h, ov)
	switch {
	case err == nil, errors.Is(err, windows.ERROR_PIPE_CONNECTED):
		// a client came between the create and the connect: connected
	case errors.Is(err, windows.ERROR_IO_PENDING):
		w, werr := windows.WaitForMultipleObjects([]windows.Handle{ev, l.quit}, false, windows.INFINITE)
		if werr != nil || w != windows.WAIT_OBJECT_0 {
			windows.CancelIoEx(h, ov)
			var n uint32
			windows.GetOverlappedResult(h, ov, &n, true)
			return nil, net.ErrClosed
		}
		var n uint32
		if err := windows.GetOverlappedResult(h, ov, &n, false); err != nil {
			return nil, l.retire(h, fmt.Errorf("accept on %s: %w", l.path, err))
		}
	default:
		return nil, l.retire(h, fmt.Errorf("accept on %s: %w", l.path, err))
	}
	next, err := l.instance(false)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		if err == nil {
			windows.CloseHandle(next)
		}
		windows.CloseHandle(h)
		return nil, net.ErrClosed
	}
	if err != nil {
		l.next = 0
		l.mu.Unlock()
		windows.CloseHandle(h)
		return nil, fmt.Errorf("create the next pipe instance: %w", err)
	}
	l.next = next
	l.mu.Unlock()
	var pid uint32
	windows.GetNamedPipeClientProcessId(h, &pid)
	return newPipeConn(h, l.path, int(pid), true), nil
}

// retire replaces a broken instance with a fresh one and returns err.
func (l *Listener) retire(h windows.Handle, err error) error {
	windows.CloseHandle(h)
	next, nerr := l.instance(false)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || nerr != nil {
		if nerr == nil {
			windows.CloseHandle(next)
		}
		l.next = 0
		return net.ErrClosed
	}
	l.next = next
	return err
}

// Close stops Accept, closes the waiting instance and releases the name
// (once no Accept runs). Connections already accepted stay open.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closed = true
		windows.SetEvent(l.quit)
		l.mu.Unlock()
		l.accepting.Wait()
		if l.next != 0 {
			windows.CloseHandle(l.next)
			l.next = 0
		}
		windows.CloseHandle(l.mutex)
		windows.CloseHandle(l.quit)
	})
	return nil
}

// pipeConn is a connected pipe handle on Go's poller.
type pipeConn struct {
	*os.File
	h      windows.Handle
	path   string
	pid    int
	server bool
}

func newPipeConn(h windows.Handle, path string, pid int, server bool) *pipeConn {
	return &pipeConn{File: os.NewFile(uintptr(h), path), h: h, path: path, pid: pid, server: server}
}

func (c *pipeConn) LocalAddr() net.Addr  { return pipeAddr(c.path) }
func (c *pipeConn) RemoteAddr() net.Addr { return pipeAddr(c.path) }

// Read maps the end of a pipe to io.EOF, as a socket's.
func (c *pipeConn) Read(b []byte) (int, error) {
	n, err := c.File.Read(b)
	if err != nil && (errors.Is(err, windows.ERROR_BROKEN_PIPE) || errors.Is(err, windows.ERROR_PIPE_NOT_CONNECTED)) {
		return n, io.EOF
	}
	return n, err
}

// Close disconnects a server end first, so the client sees the end.
func (c *pipeConn) Close() error {
	if c.server {
		windows.FlushFileBuffers(c.h)
		windows.DisconnectNamedPipe(c.h)
	}
	return c.File.Close()
}

// Dial connects to the pipe, waiting while every instance is busy.
// Nothing listening is an error that matches fs.ErrNotExist.
// Before a byte is sent, the server's process must run as this user: a
// pipe another user created first is refused (ImpostorError).
func Dial(ctx context.Context, path string) (net.Conn, error) {
	c, err := winio.DialPipeContext(ctx, path)
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: no pipe %s", os.ErrNotExist, path)
		}
		return nil, err
	}
	if err := checkServer(c, path); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ImpostorError is a pipe served by a process of another user.
type ImpostorError struct {
	Path     string
	SID, Our string
}

func (e *ImpostorError) Error() string {
	return fmt.Sprintf("the process serving %s runs as %s, not as you (%s): refusing to talk to it", e.Path, e.SID, e.Our)
}

// checkServer compares the user of the pipe server's process with ours.
func checkServer(c net.Conn, path string) error {
	fd, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return nil
	}
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(windows.Handle(fd.Fd()), &pid); err != nil {
		return fmt.Errorf("pipe %s: its server's process: %w", path, err)
	}
	if pid == uint32(os.Getpid()) {
		return nil
	}
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("pipe %s: open its server (pid %d): %w", path, pid, err)
	}
	defer windows.CloseHandle(p)
	var tok windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &tok); err != nil {
		return fmt.Errorf("pipe %s: its server's user (pid %d): %w", path, pid, err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return fmt.Errorf("pipe %s: its server's user (pid %d): %w", path, pid, err)
	}
	ours, err := userSID()
	if err != nil {
		return err
	}
	if sid := tu.User.Sid.String(); sid != ours {
		return &ImpostorError{Path: path, SID: sid, Our: ours}
	}
	return nil
}

// Authorize labels a pipe peer with its process id. The pipe's ACL lets
// in only this user and SYSTEM, so every peer is ours.
func Authorize(c net.Conn) (Peer, error) {
	if pc, ok := c.(*pipeConn); ok && pc.pid != 0 {
		return Peer{Label: fmt.Sprintf("pipe:local,pid=%d", pc.pid), UID: -1, PID: pc.pid}, nil
	}
	return Peer{Label: "pipe:local", UID: -1}, nil
}
