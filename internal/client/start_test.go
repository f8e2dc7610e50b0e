package client_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

// With ZEROCLAW_CLIENT_TEST_DAEMON set, the test binary is the zeroclaw
// that DialOrStart starts: `daemon --config-dir DIR [--ephemeral]` runs
// an ephemeral daemon there ("fail": it says why on stderr and exits 1).
func TestMain(m *testing.M) {
	if mode := os.Getenv("ZEROCLAW_CLIENT_TEST_DAEMON"); mode != "" {
		os.Exit(fakeZeroclaw(mode, os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

func fakeZeroclaw(mode string, args []string) int {
	if mode == "fail" {
		os.Stderr.WriteString("config.toml:3: agents.default.provider = \"nope\": no [providers.nope]\n")
		return 1
	}
	dir := ""
	for i, a := range args {
		if a == "--config-dir" && i+1 < len(args) {
			dir = args[i+1]
		}
	}
	dirs, err := config.ResolveDirs(dir, func(string) string { return "" })
	if err != nil {
		return 2
	}
	cfg := config.Default(func(string) string { return "" })
	err = daemon.Run(context.Background(), daemon.Options{Version: "test", Dirs: dirs, Config: cfg, Ephemeral: true,
		Grace: 200 * time.Millisecond, Getenv: func(string) string { return "" }})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}

// Start on demand: no daemon answers, so one is started (this test
// binary, as zeroclaw), and clients racing to start one all reach the
// one that won the lock; a daemon that cannot start says why, with its
// log.
func TestDialOrStartStartsOneDaemon(t *testing.T) {
	base := t.TempDir()
	dirs, _ := config.ResolveDirs(filepath.Join(base, "cfg"), func(string) string { return "" })
	env := append(os.Environ(), "ZEROCLAW_CLIENT_TEST_DAEMON=run")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	so := client.StartOptions{ConfigDir: dirs.ConfigDir, DataDir: dirs.DataDir, Env: env}
	var wg sync.WaitGroup
	pids := make(chan int, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.DialOrStart(ctx, dirs.Endpoint, client.Options{}, so)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			pids <- c.Init.ServerPID
		}()
	}
	wg.Wait()
	close(pids)
	first := 0
	for pid := range pids {
		if first == 0 {
			first = pid
		}
		if pid != first || pid == os.Getpid() {
			t.Errorf("clients reached daemons %d and %d (this process is %d)", first, pid, os.Getpid())
		}
	}
	// The ephemeral daemon leaves after its last client: wait until it is
	// gone and reaped (DialOrStart's reaper ends with it), so the temp dir
	// can go and goleak sees no waiter.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if processGone(first) {
			break
		}
	}
	if _, err := os.Stat(dirs.Endpoint); !os.IsNotExist(err) {
		t.Errorf("the ephemeral daemon left its socket behind: %v", err)
	}

	// A daemon that cannot start.
	bad, _ := config.ResolveDirs(filepath.Join(base, "bad"), func(string) string { return "" })
	so = client.StartOptions{ConfigDir: bad.ConfigDir, DataDir: bad.DataDir, Env: append(os.Environ(), "ZEROCLAW_CLIENT_TEST_DAEMON=fail")}
	_, err := client.DialOrStart(ctx, bad.Endpoint, client.Options{}, so)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "no [providers.nope]") ||
		!strings.Contains(err.Error(), filepath.Join(bad.DataDir, "daemon.log")) {
		t.Errorf("a daemon that cannot start: %v", err)
	}
}
