// Package mcptest builds, once per test binary, the MCP test server
// (internal/mcptools/testdata/server): a real server on the official Go
// SDK that the tests of every package drive.
package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
