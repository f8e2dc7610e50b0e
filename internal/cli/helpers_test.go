package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// endpointOf is the daemon endpoint of config dir dir: a socket, or on
// Windows a named pipe.
func endpointOf(dir string) string {
	return config.DefaultEndpoint(runtime.GOOS, filepath.Join(dir, "data"))
}

// waitEphemeralGone waits until the ephemeral daemon of dir has stopped
// by itself, without connecting (a connection would keep it): its socket
// is gone, or (a pipe leaves no file) its log says it stopped.
func waitEphemeralGone(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if runtime.GOOS == "windows" {
			log, _ := os.ReadFile(filepath.Join(dir, "data", "daemon.log"))
			if strings.Contains(string(log), "last client gone, stopping") {
				return
			}
		} else if _, err := os.Lstat(endpointOf(dir)); os.IsNotExist(err) {
			return
		}
	}
	t.Fatal("the started daemon is still running 10s after its last client left")
}

// lockedBuffer is a log a process writes while the test reads it;
// changed (if set) is signalled after each write.
type lockedBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.b.Write(p)
	l.mu.Unlock()
	if l.changed != nil {
		select {
		case l.changed <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// noContinue writes a config under which a turn a dead daemon cut ends
// interrupted instead of going on ([daemon] continue_interrupted =
// false): what the tests of that end check.
func noContinue(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[daemon]\ncontinue_interrupted = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}
