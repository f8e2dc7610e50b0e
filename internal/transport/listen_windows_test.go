//go:build windows

package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// underWine: Wine stores a pipe's security descriptor but does not enforce
// it, nor FILE_FLAG_FIRST_PIPE_INSTANCE.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

func pipeName(t *testing.T) string {
	return fmt.Sprintf(`\\.\pipe\zeroclaw-test-%d-%d`, os.Getpid(), time.Now().UnixNano())
}

// echo serves l: every line comes back.
func echo(t *testing.T, l *Listener) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					if _, err := c.Write(line); err != nil {
						return
					}
				}
			}()
		}
	}()
}

// Many clients at once, each a round trip of its own, over real pipe
// instances.
func TestPipeConcurrentClients(t *testing.T) {
	l, err := Listen(pipeName(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	echo(t, l)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(context.Background(), l.Path())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			r := bufio.NewReader(c)
			for j := range 20 {
				msg := fmt.Sprintf(`{"client":%d,"n":%d}`+"\n", i, j)
				if _, err := io.WriteString(c, msg); err != nil {
					errs <- err
					return
				}
				got, err := r.ReadString('\n')
				if err != nil || got != msg {
					errs <- fmt.Errorf("client %d: %q %v", i, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// The pipe is created with a protected DACL for SYSTEM and this user
// only; read back from the handle (Wine stores it without enforcing it).
func TestPipeSecurityDescriptor(t *testing.T) {
	l, err := Listen(pipeName(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sd, err := windows.GetSecurityInfo(l.next, windows.SE_KERNEL_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatalf("GetSecurityInfo: %v", err)
	}
	got := sd.String()
	sid, _ := userSID()
	if !strings.HasPrefix(got, "D:P") || !strings.Contains(got, ";;;SY)") || !strings.Contains(got, ";;;"+sid+")") || strings.Count(got, "(A;") != 2 {
		t.Fatalf("DACL %s, want only SYSTEM and %s, protected", got, sid)
	}
}

// A second daemon on the same pipe is refused by the named mutex.
func TestSecondListenerRefused(t *testing.T) {
	name := pipeName(t)
	l, err := Listen(name, "")
	if err != nil {
		t.Fatal(err)
	}
	echo(t, l)
	if _, err := Listen(name, ""); !errors.Is(err, ErrAlreadyServing) {
		t.Fatalf("second Listen: %v, want ErrAlreadyServing", err)
	}
	l.Close()
	// Released on Close: a new daemon may take the name.
	l2, err := Listen(name, "")
	if err != nil {
		t.Fatalf("Listen after Close: %v", err)
	}
	l2.Close()
}

// Another process that created the name first (a squatter) makes our
// first instance fail: FILE_FLAG_FIRST_PIPE_INSTANCE.
func TestSquattedPipeRefused(t *testing.T) {
	if underWine() {
		t.Skip("real Windows only: Wine does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE")
	}
	name := pipeName(t)
	n, _ := windows.UTF16PtrFromString(name)
	h, err := windows.CreateNamedPipe(n, windows.PIPE_ACCESS_DUPLEX, windows.PIPE_TYPE_BYTE, windows.PIPE_UNLIMITED_INSTANCES, 512, 512, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if l, err := Listen(name, ""); err == nil {
		l.Close()
		t.Fatal("Listen took a name another process had created")
	}
}

// Nothing listening: an error that matches fs.ErrNotExist (what clients
// read as "no daemon").
func TestDialNoDaemon(t *testing.T) {
	_, err := Dial(context.Background(), pipeName(t))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Dial: %v, want fs.ErrNotExist", err)
	}
}

// Close ends a blocked Accept; deadlines work on an accepted connection;
// Close of a connection ends a pending read; a client's end reads as EOF.
func TestPipeCloseAndDeadlines(t *testing.T) {
	l, err := Listen(pipeName(t), "")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1)
	accepted := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			conns <- c
		}
		accepted <- err
	}()
	c, err := Dial(context.Background(), l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	srv := <-conns
	if p, _ := Authorize(srv); !strings.HasPrefix(p.Label, "pipe:local") || p.PID != os.Getpid() {
		t.Errorf("peer %+v, want pipe:local with pid %d", p, os.Getpid())
	}
	srv.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := srv.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v", err)
	}
	srv.SetReadDeadline(time.Time{})
	readErr := make(chan error, 1)
	go func() { _, err := srv.Read(make([]byte, 1)); readErr <- err }()
	c.Close()
	if err := <-readErr; err != io.EOF {
		t.Fatalf("read after the client left: %v, want EOF", err)
	}
	srv.Close()

	go func() { _, err := l.Accept(); accepted <- err }()
	l.Close()
	select {
	case err := <-accepted:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end Accept")
	}
}
