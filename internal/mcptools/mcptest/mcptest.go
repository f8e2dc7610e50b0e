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

// Reference is the path of an MCP reference server's entry point (its
// npm package's name under @modelcontextprotocol, e.g. "server-everything"),
// from testdata/reference's packages: $ZEROCLAW_MCP_NODE_MODULES (what
// .ci/run installs), else an npm install into a cache directory. The test
// skips where there is no Node or npm.
func Reference(t testing.TB, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the MCP reference servers need Node 20 (.ci/run installs it all)")
	}
	dir := os.Getenv("ZEROCLAW_MCP_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "zeroclaw-mcp-reference")
		refOnce.Do(func() {
			_, file, _, _ := runtime.Caller(0)
			pkgJSON, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", "reference", "package.json"))
			if err != nil {
				refErr = err
				return
			}
			if old, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil && string(old) == string(pkgJSON) {
				if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol")); err == nil {
					return // installed already
				}
			}
			if _, err := exec.LookPath("npm"); err != nil {
				refErr = errSkip
				return
			}
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "package.json"), pkgJSON, 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				refErr = fmt.Errorf("npm install in %s: %v\n%s", dir, err, out)
			}
		})
		if refErr == errSkip {
			t.Skip("npm is not installed: the MCP reference servers come from npm (.ci/run installs them)")
		}
		if refErr != nil {
			t.Fatal(refErr)
		}
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the reference server %s: %v", pkg, err)
	}
	return entry
}

var (
	refOnce sync.Once
	refErr  error
	errSkip = fmt.Errorf("skip")
)
