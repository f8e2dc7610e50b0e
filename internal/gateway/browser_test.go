package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

// browserDir returns a directory holding testdata/browser's npm packages:
// $ZEROCLAW_BROWSER_NODE_MODULES (what .ci/run installs), else an npm
// install into a cache directory.
func browserDir(t *testing.T) string {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the dashboard test needs Node 20 (.ci/run installs it all)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s: .ci/run installs Debian's chromium (or set CHROMIUM)", chromium)
	}
	dir := os.Getenv("ZEROCLAW_BROWSER_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "zeroclaw-browser-test")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
			os.MkdirAll(dir, 0o755)
			pkg, _ := os.ReadFile(filepath.Join("testdata", "browser", "package.json"))
			os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
			}
		}
	}
	script, _ := os.ReadFile(filepath.Join("testdata", "browser", "dashboard.mjs"))
	if err := os.WriteFile(filepath.Join(dir, "dashboard.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The dashboard in a real browser: pair with a code, start a session on
// the echo provider, have it run a command, approve it in the page, see
// the output and the answer; markup in model output stays text.
func TestDashboardInABrowser(t *testing.T) {
	dir := browserDir(t)
	g := start(t, func(c *config.Config, _ *daemon.Options) {
		a := c.Agents["default"]
		a.Risk = "supervised"
		c.Agents["default"] = a
	})
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	if keep := os.Getenv("ZEROCLAW_SCREENSHOT"); keep != "" { // to look at it
		shot = keep
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "dashboard.mjs", g.url+"/", g.code(), t.TempDir(), shot)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	raw, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the browser script: %v\n%s\n%s", err, raw, stderr)
	}
	var out struct {
		Error, ApprovalInput, ToolOutput, Answer string
		CookieVisibleToScript, Pwned             bool
		Images, Bold, JSLinks, Sessions          int
		PageErrors                               []string
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("the browser script printed %q", raw)
	}
	if out.Error != "" {
		t.Fatalf("in the browser: %s", out.Error)
	}
	if !strings.Contains(out.ApprovalInput, "echo hi") || !strings.Contains(out.ToolOutput, "hi") ||
		!strings.Contains(out.Answer, "tool shell returned: hi") {
		t.Errorf("approval input %q, tool output %q, answer %q", out.ApprovalInput, out.ToolOutput, out.Answer)
	}
	if out.CookieVisibleToScript {
		t.Error("the session cookie is readable by the page's script (not HttpOnly)")
	}
	if out.Images != 0 || out.Pwned || out.JSLinks != 0 {
		t.Errorf("markup in model output became markup: %d images, script ran %v, %d javascript: links", out.Images, out.Pwned, out.JSLinks)
	}
	if out.Bold == 0 || out.Sessions == 0 {
		t.Errorf("Markdown not rendered (%d bold) or no sessions listed (%d)", out.Bold, out.Sessions)
	}
	if len(out.PageErrors) > 0 {
		t.Errorf("script errors in the page: %v", out.PageErrors)
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Errorf("no screenshot: %v", err)
	}
	t.Logf("screenshot: %s", shot)
}
