package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/schema/schematest"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	attackMain() // the test binary as a command the agent runs (walls_test.go)
	dialMain()
	// The test client checks frames against the published schema in its
	// read loop: compile it all before any test, not in the middle of
	// one whose stall timeout is short.
	if err := schematest.Warm(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

type running struct {
	dirs config.Dirs
	stop context.CancelFunc
	done chan error
}

func testDirs(t *testing.T) config.Dirs {
	base := t.TempDir()
	d, err := config.ResolveDirs(filepath.Join(base, "cfg"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func start(t *testing.T, dirs config.Dirs, ephemeral bool) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	r := &running{dirs: dirs, stop: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- Run(ctx, Options{Version: "test", Dirs: dirs, Config: config.Default(func(string) string { return "" }),
			Ephemeral: ephemeral, Ready: func(string) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("daemon did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("daemon not ready in 10s")
	}
	t.Cleanup(func() { cancel(); r.wait(t) })
	return r
}

func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("daemon did not stop within 10s")
	}
	return nil
}

type line struct {
	nc net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, path string) *line {
	t.Helper()
	nc, err := transport.Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	return &line{nc: nc, br: bufio.NewReader(nc)}
}

func (l *line) call(t *testing.T, frame string) map[string]any {
	t.Helper()
	if _, err := l.nc.Write([]byte(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	l.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	s, err := l.br.ReadString('\n')
	if err != nil {
		t.Fatalf("read reply to %s: %v", frame, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("reply %q: %v", s, err)
	}
	return m
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

const initFrame = `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":1}`

func TestHandshakeAndStatus(t *testing.T) {
	r := start(t, testDirs(t), false)
	l := dial(t, r.dirs.Endpoint)
	if got := errCode(l.call(t, `{"jsonrpc":"2.0","method":"status","params":{},"id":0}`)); got != -32010 {
		t.Fatalf("status before initialize: code %v, want -32010", got)
	}
	m := l.call(t, `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":2},"id":1}`)
	if errCode(m) != -32011 {
		t.Fatalf("version 2: %v", m)
	}
	if data := m["error"].(map[string]any)["data"].(map[string]any); data["supported"].([]any)[0] != 1.0 {
		t.Fatalf("data.supported: %v", data)
	}
	if got := errCode(l.call(t, `{"jsonrpc":"2.0","method":"status","id":2}`)); got != -32010 {
		t.Fatalf("status after failed initialize: code %v, want -32010", got)
	}
	res := l.call(t, `{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1,"client_info":{"name":"t"}},"id":3}`)["result"].(map[string]any)
	id, _ := res["clientId"].(string)
	if !strings.HasPrefix(id, "cl_") || len(id) != 11 || res["serverPid"] != float64(os.Getpid()) || res["protocolVersion"] != 1.0 {
		t.Fatalf("initialize result %v", res)
	}
	st := l.call(t, `{"jsonrpc":"2.0","method":"status","params":{},"id":4}`)["result"].(map[string]any)
	for _, k := range []string{"serverVersion", "protocolVersion", "pid", "uptimeMs", "endpoint", "configDir", "dataDir", "ephemeral", "clients", "activeSessions", "sessions"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status lacks %s: %v", k, st)
		}
	}
	if st["endpoint"] != r.dirs.Endpoint || st["clients"] != 1.0 || st["ephemeral"] != false {
		t.Errorf("status %v", st)
	}
	// A second connection that presents the id gets it back.
	l2 := dial(t, r.dirs.Endpoint)
	res2 := l2.call(t, `{"jsonrpc":"2.0","method":"initialize","params":{"clientId":"`+id+`"},"id":1}`)["result"].(map[string]any)
	if res2["clientId"] != id {
		t.Fatalf("reattach: got %v, want %s", res2["clientId"], id)
	}
	if got := errCode(l2.call(t, `{"jsonrpc":"2.0","method":"initialize","params":{"clientId":"bad id!"},"id":2}`)); got != -32602 {
		t.Fatalf("bad client id: code %v", got)
	}
	if got := errCode(l2.call(t, `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"1"},"id":2}`)); got != -32602 {
		t.Fatalf("string protocolVersion: code %v", got)
	}
	if got := errCode(l2.call(t, `{"jsonrpc":"2.0","method":"nope","id":5}`)); got != -32601 {
		t.Fatalf("unknown method: code %v", got)
	}
}

func TestSocketPermissions(t *testing.T) {
	r := start(t, testDirs(t), false)
	fi, err := os.Lstat(r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600 socket", fi.Mode())
	}
	di, _ := os.Stat(filepath.Dir(r.dirs.Endpoint))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", di.Mode().Perm())
	}
	li, _ := os.Stat(r.dirs.Endpoint + ".lock")
	if li.Mode().Perm() != 0o600 {
		t.Errorf("lock mode %v, want 0600", li.Mode().Perm())
	}
}

func TestUnsafeDirRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	os.Mkdir(dir, 0o777)
	os.Chmod(dir, 0o777)
	if _, err := transport.Listen(filepath.Join(dir, "d.sock"), ""); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Fatalf("world-writable dir: %v", err)
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(real, link)
	if _, err := transport.Listen(filepath.Join(link, "d.sock"), ""); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlinked dir: %v", err)
	}
	long := filepath.Join(t.TempDir(), strings.Repeat("x", 120), "d.sock")
	if _, err := transport.Listen(long, ""); err == nil || !strings.Contains(err.Error(), "ZEROCLAW_SOCKET") || !strings.Contains(err.Error(), "107 bytes") {
		t.Fatalf("long path: %v", err)
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	dirs := testDirs(t)
	os.MkdirAll(dirs.DataDir, 0o700)
	// A socket file nobody listens on: what a crashed daemon leaves.
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: dirs.Endpoint, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	ul.Close()
	if _, err := os.Lstat(dirs.Endpoint); err != nil {
		t.Fatal("stale socket not left behind")
	}
	r := start(t, dirs, false)
	dial(t, r.dirs.Endpoint).call(t, initFrame)
}

func TestSecondDaemonRefused(t *testing.T) {
	r := start(t, testDirs(t), false)
	_, err := transport.Listen(r.dirs.Endpoint, "")
	var le *transport.LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), "another daemon owns") {
		t.Fatalf("second Listen: %v", err)
	}
	if m := dial(t, r.dirs.Endpoint).call(t, initFrame); m["result"] == nil {
		t.Fatalf("first daemon no longer answers: %v", m)
	}
}

// A second daemon on the same data directory refuses to start even on
// another socket, naming the first's pid: two would both fire the
// schedules and go on with the same cut turns.
func TestSecondDaemonOnTheDataDirRefused(t *testing.T) {
	dirs := testDirs(t)
	r := start(t, dirs, false)
	other := dirs
	other.Endpoint = filepath.Join(filepath.Dir(dirs.Endpoint), "other.sock")
	err := Run(context.Background(), Options{Version: "test", Dirs: other, Config: config.Default(func(string) string { return "" })})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("another daemon (pid %d) uses the data directory %s", os.Getpid(), dirs.DataDir)) {
		t.Fatalf("a second daemon on the data dir: %v", err)
	}
	if _, err := os.Lstat(other.Endpoint); err == nil {
		t.Error("the refused daemon left its socket behind")
	}
	if m := dial(t, r.dirs.Endpoint).call(t, initFrame); m["result"] == nil {
		t.Fatalf("the first daemon no longer answers: %v", m)
	}
}

func TestReplacedSocketNotUnlinked(t *testing.T) {
	dirs := testDirs(t)
	r := start(t, dirs, false)
	// Someone replaces the socket file under the running daemon.
	os.Remove(dirs.Endpoint)
	other, err := net.ListenUnix("unix", &net.UnixAddr{Name: dirs.Endpoint, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r.stop()
	if err := r.wait(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := os.Lstat(dirs.Endpoint); err != nil {
		t.Fatalf("the old daemon removed a socket it does not own: %v", err)
	}
}

func TestShutdownRemovesSocket(t *testing.T) {
	r := start(t, testDirs(t), false)
	l := dial(t, r.dirs.Endpoint)
	l.call(t, initFrame)
	if m := l.call(t, `{"jsonrpc":"2.0","method":"shutdown","id":2}`); m["result"] == nil {
		t.Fatalf("shutdown: %v", m)
	}
	if err := r.wait(t); err != nil {
		t.Fatalf("run: %v", err)
	}
	if _, err := os.Lstat(r.dirs.Endpoint); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left after shutdown: %v", err)
	}
}

func TestEphemeralExitsAfterLastClient(t *testing.T) {
	r := start(t, testDirs(t), true)
	l := dial(t, r.dirs.Endpoint)
	l.call(t, initFrame)
	select {
	case <-r.done:
		t.Fatal("ephemeral daemon exited while a client was connected")
	default:
	}
	l.nc.Close()
	if err := r.wait(t); err != nil {
		t.Fatalf("ephemeral exit: %v", err)
	}
}

func TestLifetime(t *testing.T) {
	expired := func(l *lifetime) bool {
		select {
		case <-l.expired:
			return true
		default:
			return false
		}
	}
	t.Run("never before the first client", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newLifetime(time.Second)
			time.Sleep(time.Hour)
			synctest.Wait()
			if expired(l) {
				t.Fatal("expired with no client ever connected")
			}
		})
	})
	t.Run("grace then exit", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newLifetime(time.Second)
			l.connect()
			l.disconnect()
			time.Sleep(999 * time.Millisecond)
			synctest.Wait()
			if expired(l) {
				t.Fatal("expired before the grace ended")
			}
			time.Sleep(2 * time.Millisecond)
			synctest.Wait()
			if !expired(l) {
				t.Fatal("not expired after the grace")
			}
		})
	})
	t.Run("reconnect within grace cancels", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newLifetime(time.Second)
			l.connect()
			l.disconnect()
			time.Sleep(900 * time.Millisecond)
			l.connect()
			time.Sleep(time.Hour)
			synctest.Wait()
			if expired(l) {
				t.Fatal("expired although a client came back within the grace")
			}
			l.disconnect()
			time.Sleep(1001 * time.Millisecond)
			synctest.Wait()
			if !expired(l) {
				t.Fatal("not expired after the second client left")
			}
		})
	})
	t.Run("one of two leaves", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newLifetime(time.Second)
			l.connect()
			l.connect()
			l.disconnect()
			time.Sleep(time.Hour)
			synctest.Wait()
			if expired(l) {
				t.Fatal("expired with a client still connected")
			}
		})
	})
	t.Run("work keeps it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := newLifetime(time.Second)
			var mu sync.Mutex
			work := protocol.StayingFor{Processes: 1}
			l.work = func() protocol.StayingFor { mu.Lock(); defer mu.Unlock(); return work }
			l.connect()
			l.disconnect()
			time.Sleep(time.Hour)
			synctest.Wait()
			if expired(l) {
				t.Fatal("expired while a process ran")
			}
			mu.Lock()
			work = protocol.StayingFor{}
			mu.Unlock()
			// The check after the work ended finds none, and the next
			// one, a grace later, none either: then it leaves.
			time.Sleep(time.Second)
			synctest.Wait()
			if expired(l) {
				t.Fatal("expired at the first check without work")
			}
			time.Sleep(time.Second)
			synctest.Wait()
			if !expired(l) {
				t.Fatal("not expired a whole grace after the work ended")
			}
		})
	})
}
