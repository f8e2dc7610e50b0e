// Package mcptest builds, once per test binary, the MCP test server
// (internal/mcptools/testdata/server): a real server on the official Go
// SDK that the tests of every package drive.
package mcptest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	once sync.Once
	bin  string
	err  error
)

// Server is the test server's binary, built on first use.
func Server(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "..", "testdata", "server")
		dir, e := os.MkdirTemp("", "zeroclaw-mcp-server")
		if e != nil {
			err = e
			return
		}
		bin = filepath.Join(dir, "server")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = src
		if out, e := cmd.CombinedOutput(); e != nil {
			err = fmt.Errorf("%v\n%s", e, out)
		}
	})
	if err != nil {
		t.Fatalf("building the MCP test server: %v", err)
	}
	return bin
}

// HTTP runs the test server over streamable HTTP on a loopback port,
// with more flags (-oauth ...), until the test ends; it returns its URL.
func HTTP(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(Server(t), append([]string{"-http", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the MCP test server said no URL: %v", err)
	}
	return strings.TrimSpace(line)
}
