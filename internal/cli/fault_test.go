//go:build unix

package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// seenSeqs records, per session, the highest seq a client was shown.
type seenSeqs struct {
	mu  sync.Mutex
	max map[string]int64
}

func (s *seenSeqs) handler() jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method == protocol.MethodSessionUpdate {
			var u struct {
				SessionID string `json:"sessionId"`
				Seq       int64  `json:"seq"`
			}
			json.Unmarshal(r.Params, &u)
			s.mu.Lock()
			s.max[u.SessionID] = max(s.max[u.SessionID], u.Seq)
			s.mu.Unlock()
		}
		return nil, nil
	})
}

// kill -9 at random moments under a mixed load (sessions created,
// prompted, closed, deleted by several clients at once): after every
// crash the store's invariants hold (seq 1..N gapless, last_seq = max,
// no orphan rows), nothing a client was shown is missing, and no seq a
// client saw is ever given out again.
func TestRandomKillsUnderMixedLoadKeepTheStoreWhole(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	sock := filepath.Join(dir, "data", "daemon.sock")
	dbPath := filepath.Join(dir, "data", "zeroclaw.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	seen := &seenSeqs{max: map[string]int64{}}
	cwd := testdir.New(t)
	const workers, rounds = 4, 6
	for round := range rounds {
		cmd, logs := startDaemon(t, env)
		var wg sync.WaitGroup
		for w := range workers {
			wseed := rng.Uint64()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(wseed, 2))
				c, err := client.Dial(context.Background(), sock, client.Options{Handler: seen.handler()})
				if err != nil {
					return // the daemon died before we got in
				}
				defer c.Close()
				ctx := context.Background()
				keep := fmt.Sprintf("keep-%d", w) // never deleted: what it was shown must stay
				for {
					var err error
					switch op := r.IntN(10); {
					case op < 4:
						if err = c.Call(ctx, "session/new", map[string]any{"sessionId": keep, "cwd": cwd, "keep_siblings": true}, nil); err == nil {
							err = c.Call(ctx, "session/prompt", map[string]any{"sessionId": keep, "prompt": fmt.Sprintf("/chunks %d", 200+r.IntN(3000))}, nil)
						}
					default:
						id := fmt.Sprintf("churn-%d", r.IntN(5))
						if err = c.Call(ctx, "session/new", map[string]any{"sessionId": id, "cwd": cwd, "keep_siblings": true}, nil); err == nil && r.IntN(2) == 0 {
							err = c.Call(ctx, "session/prompt", map[string]any{"sessionId": id, "prompt": "/chunks 300"}, nil)
						}
						switch r.IntN(3) {
						case 0:
							c.Call(ctx, "session/close", map[string]any{"sessionId": id}, nil)
						case 1:
							c.Call(ctx, "session/delete", map[string]any{"sessionId": id}, nil)
						}
					}
					select {
					case <-c.Done():
						return
					default:
					}
					_ = err // busy, not attached, ...: go on until the daemon dies
				}
			}()
		}
		// The kill comes at a random moment: this wait is the fault's
		// timing, not a synchronisation.
		time.Sleep(time.Duration(150+rng.IntN(500)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		wg.Wait()
		if err := store.VerifyFile(context.Background(), dbPath); err != nil {
			t.Fatalf("round %d: the store after kill -9: %v\ndaemon log:\n%s", round, err, logs)
		}
		db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		seen.mu.Lock()
		for sid, n := range seen.max {
			if !strings.HasPrefix(sid, "keep-") {
				continue
			}
			var last int64
			if err := db.QueryRow(`SELECT last_seq FROM sessions WHERE id = ?`, sid).Scan(&last); err != nil || last < n {
				t.Errorf("round %d: %s: a client saw seq %d, the store holds up to %d (%v)", round, sid, n, last, err)
			}
		}
		seen.mu.Unlock()
		db.Close()
	}
	t.Logf("seqs seen: %v", seen.max)
	// After the last crash: each kept session numbers on after the last
	// seq any client saw.
	startDaemon(t, env)
	c, err := client.Dial(context.Background(), sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for sid, n := range seen.max {
		if !strings.HasPrefix(sid, "keep-") {
			continue
		}
		var nr protocol.SessionNewResult
		if err := c.Call(context.Background(), "session/new", map[string]any{"sessionId": sid, "keep_siblings": true}, &nr); err != nil {
			t.Fatal(err)
		}
		if nr.LastSeq < n {
			t.Errorf("%s resumed at lastSeq %d, but a client saw seq %d", sid, nr.LastSeq, n)
		}
	}
}

// exited waits until pid has exited (a pidfd turns readable), bounded.
func exited(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	if n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10000); err != nil || n != 1 {
		t.Fatalf("process %d still runs (%v)", pid, err)
	}
}

// hostPid is the pid, seen from here, of the process whose pid is pid in
// its own pid namespace and whose directory is dir (pid itself when
// none is in a namespace of its own).
func hostPid(t *testing.T, pid int, dir string) int {
	t.Helper()
	dir, _ = filepath.EvalSymlinks(dir)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(strings.TrimPrefix(line, "NSpid:"))
			if !strings.HasPrefix(line, "NSpid:") || len(f) < 2 || f[len(f)-1] != strconv.Itoa(pid) {
				continue
			}
			if cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); cwd == dir {
				host, _ := strconv.Atoi(f[0])
				return host
			}
		}
	}
	return pid
}

// A command the agent started does not outlive a daemon killed with -9:
// under the sandbox its shim gets the daemon's death as a signal and
// kills all the command started (a double fork and setsid included);
// without it, the next daemon kills its process group.
func TestCommandsOfAKilledDaemonAreReaped(t *testing.T) {
	for _, c := range []struct{ name, sandbox, command string }{
		{"sandboxed", "", `(setsid sh -c 'echo $$ > escaped.pid; sleep 60; echo escaped > escaped' &); sleep 60 & echo $! > child.pid; wait; echo survived > survived`},
		{"unsandboxed, reaped by the next daemon", "\n[sandbox]\nmode = \"off\"\n", `sleep 60 & echo $! > child.pid; wait; echo survived > survived`},
	} {
		t.Run(c.name, func(t *testing.T) { commandsOfAKilledDaemon(t, c.sandbox, c.command) })
	}
}

func commandsOfAKilledDaemon(t *testing.T, sandboxConf, command string) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"+sandboxConf), 0o600)
	cmd, _ := startDaemon(t, env)
	c, updates := dialUpdates(t, dir)
	cwd := testdir.New(t)
	ctx := context.Background()
	if err := c.Call(ctx, "session/new", map[string]any{"sessionId": "reap", "cwd": cwd}, nil); err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(map[string]string{"command": command})
	go c.Call(ctx, "session/prompt", map[string]any{"sessionId": "reap", "prompt": "/tool shell " + string(line)}, nil)
	for u := range updates {
		if u.Type == "tool_call" {
			break
		}
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(cwd, "child.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
	}
	escaped := 0
	if sandboxConf == "" {
		for deadline := time.Now().Add(10 * time.Second); escaped == 0; time.Sleep(5 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(cwd, "escaped.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
				escaped, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			if time.Now().After(deadline) {
				t.Fatal("the setsid child never started")
			}
		}
	}
	if sandboxConf == "" {
		// In namespaces of its own the command wrote its pid there.
		pid, escaped = hostPid(t, pid, cwd), hostPid(t, escaped, cwd)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if sandboxConf == "" {
		// No daemon runs now: the command's tree ends by itself, the
		// child that left its session and group too.
		exited(t, pid)
		exited(t, escaped)
	} else {
		if syscall.Kill(pid, 0) != nil {
			t.Fatal("the unsandboxed command died with the daemon: nothing to reap")
		}
		startDaemon(t, env)
		exited(t, pid)
	}
	if _, err := os.Stat(filepath.Join(cwd, "survived")); err == nil {
		t.Error("the command ran on to its end after its daemon was killed")
	}
	if _, err := os.Stat(filepath.Join(cwd, "escaped")); err == nil {
		t.Error("a setsid child of the command ran on to its end")
	}
}

// Out of file descriptors, the daemon does not exit: accepting backs off,
// and once connections go, new ones are served.
func TestFdExhaustionDoesNotStopTheDaemon(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	exe, _ := os.Executable()
	cmd := exec.Command("bash", "-c", `ulimit -n 48 && exec "$0" daemon`, exe)
	cmd.Env = env.Environ
	logs := &lockedBuffer{changed: make(chan struct{}, 1)}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exitedEarly := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(exitedEarly) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exitedEarly
	})
	sock := filepath.Join(dir, "data", "daemon.sock")
	var first *client.Client
	for deadline := time.Now().Add(10 * time.Second); first == nil; time.Sleep(10 * time.Millisecond) {
		first, _ = client.Dial(context.Background(), sock, client.Options{})
		if time.Now().After(deadline) {
			t.Fatalf("daemon not ready:\n%s", logs.String())
		}
	}
	first.Close()
	var conns []net.Conn
	for range 100 {
		nc, err := net.Dial("unix", sock)
		if err != nil {
			break // the backlog is full: enough
		}
		conns = append(conns, nc)
	}
	// Wait until the daemon has met the limit (its log says so), then let
	// the connections go.
	for deadline := time.After(15 * time.Second); !strings.Contains(logs.String(), "accept failed; retrying"); {
		select {
		case <-logs.changed:
		case <-exitedEarly:
			t.Fatalf("the daemon exited: %v\n%s", werr, logs.String())
		case <-deadline:
			t.Fatalf("the daemon never ran out of descriptors with %d connections open:\n%s", len(conns), logs.String())
		}
	}
	for _, nc := range conns {
		nc.Close()
	}
	var st *protocol.StatusResult
	for deadline := time.Now().Add(15 * time.Second); st == nil; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exitedEarly:
			t.Fatalf("the daemon exited: %v\n%s", werr, logs.String())
		default:
		}
		if c, err := client.Dial(context.Background(), sock, client.Options{}); err == nil {
			st, _ = c.Status(context.Background())
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon stopped serving after running out of descriptors:\n%s", logs.String())
		}
	}
}
