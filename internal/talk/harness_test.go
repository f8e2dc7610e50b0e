package talk

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain() // the shell tool's sandbox runs this binary
	// The input's cursor blink is a Bubble Tea command that ends by
	// itself within its blink interval (530 ms) after the program left.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/charmbracelet/bubbles/cursor.(*Model).BlinkCmd.func1"))
}

// harness is a real daemon, in this process, on a real socket in a
// temp dir, with the offline echo provider; talk reaches it as zeroclaw
// prompt and chat do (--no-start: it never starts another).
type harness struct {
	t    *testing.T
	dirs config.Dirs
	cwd  string
	stop func()
}

const echoConfig = `
[providers.echo]
kind = "echo"
[agents.default]
provider = "echo"
risk = "supervised"
`

func startDaemon(t *testing.T, extra string) *harness {
	t.Helper()
	dir := filepath.Join(testdir.New(t), "cfg")
	dirs, err := config.ResolveDirs(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dirs: dirs, cwd: testdir.New(t)}
	h.start(echoConfig + extra)
	return h
}

// start runs the daemon (again) on the harness's directories.
func (h *harness) start(toml string) {
	t := h.t
	os.MkdirAll(h.dirs.ConfigDir, 0o700)
	path := filepath.Join(h.dirs.ConfigDir, "config.toml")
	if toml != "" {
		if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(path, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Version: "test", Dirs: h.dirs, Config: cfg, Getenv: func(string) string { return "" },
			Environ: []string{"PATH=" + os.Getenv("PATH")}, Ready: func(string) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("daemon did not start: %v", err)
	}
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
		})
	}
	t.Cleanup(h.stop)
}

// env is a command's environment: stdin as given, stdout and stderr
// kept.
func (h *harness) env(stdin string) (console.Env, *syncBuffer, *syncBuffer) {
	out, errb := &syncBuffer{}, &syncBuffer{}
	vars := map[string]string{"ZEROCLAW_CONFIG_DIR": h.dirs.ConfigDir, "NO_COLOR": "1"}
	return console.Env{Stdin: strings.NewReader(stdin), Stdout: out, Stderr: errb,
		Getenv: func(k string) string { return vars[k] }, Environ: []string{"PATH=" + os.Getenv("PATH")}}, out, errb
}

// prompt runs zeroclaw prompt.
func (h *harness) prompt(o PromptOptions, stdin string) (string, string, error) {
	env, out, errb := h.env(stdin)
	o.ConfigDir, o.NoStart = h.dirs.ConfigDir, true
	if o.Cwd == "" {
		o.Cwd = h.cwd
	}
	if o.Format == "" {
		o.Format = "text"
	}
	err := Prompt(context.Background(), env, o)
	return out.String(), errb.String(), err
}

// syncBuffer is a buffer written from one goroutine and read from
// another.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{} // signalled (without blocking) on each write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
