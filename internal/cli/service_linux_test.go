package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/console"
	"github.com/zeroclaw/zeroclaw/internal/service"
)

// zeroclaw daemon install writes the systemd user unit and enables it
// with systemctl --user (here a stand-in on PATH that records what it
// is asked: the host's own services are never touched); status says it
// is installed; uninstall disables and removes it. Without systemctl the
// unit is written all the same and the commands are printed. The unit
// runs the daemon with the config directory --config-dir chose and the
// data directory ZEROCLAW_DATA_DIR chose, both made absolute.
func TestDaemonInstallAndUninstall(t *testing.T) {
	// The test binary runs from go test's temporary build directory,
	// which install refuses (TestDaemonInstallRefusesABinaryOthersCouldReplace).
	checkServiceExe = func(string) error { return nil }
	t.Cleanup(func() { checkServiceExe = service.CheckExe })
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	os.MkdirAll(bin, 0o755)
	log := filepath.Join(base, "systemctl.log")
	os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho \"$@\" >> "+log+"\n"), 0o755)
	t.Chdir(base)
	vars := map[string]string{"ZEROCLAW_CONFIG_DIR": filepath.Join(base, "cfg"), "ZEROCLAW_DATA_DIR": "data", "HOME": filepath.Join(base, "home"),
		"XDG_CONFIG_HOME": filepath.Join(base, "xdg"), "PATH": bin, "USER": "someone", "ZEROCLAW_TEST_MAIN": "1"}
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := console.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] },
			Environ: append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+vars["ZEROCLAW_CONFIG_DIR"])}
		code := Main(context.Background(), args, env)
		return code, out.String(), errb.String()
	}
	unit := filepath.Join(base, "xdg", "systemd", "user", "zeroclaw.service")
	code, out, errs := cli("--config-dir", "flagged", "daemon", "install")
	if code != 0 || !strings.Contains(out, "wrote "+unit) || !strings.Contains(out, "enabled the systemd service zeroclaw") {
		t.Fatalf("install: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(unit)
	exe, _ := os.Executable()
	if err != nil || !strings.Contains(string(b), "ExecStart="+exe+" daemon --config-dir "+filepath.Join(base, "flagged")+"\n") ||
		!strings.Contains(string(b), "Environment=ZEROCLAW_DATA_DIR="+filepath.Join(base, "data")+"\n") || strings.Contains(string(b), "ZEROCLAW_CONFIG_DIR") {
		t.Fatalf("the unit: %v\n%s", err, b)
	}
	if calls, _ := os.ReadFile(log); string(calls) != "--user daemon-reload\n--user enable --now zeroclaw.service\n" {
		t.Fatalf("systemctl was asked:\n%s", calls)
	}
	if code, _, errs := cli("status"); code == 0 || !strings.Contains(errs, "service: installed (systemd, "+unit+")") {
		t.Fatalf("status: %d %q", code, errs)
	}
	os.Remove(log)
	if code, out, errs := cli("daemon", "uninstall"); code != 0 || !strings.Contains(out, "removed "+unit) {
		t.Fatalf("uninstall: %d %q %q", code, out, errs)
	}
	if calls, _ := os.ReadFile(log); string(calls) != "--user disable --now zeroclaw.service\n--user daemon-reload\n" {
		t.Fatalf("systemctl was asked:\n%s", calls)
	}
	if _, err := os.Stat(unit); err == nil {
		t.Fatal("the unit is still there")
	}
	if code, _, errs := cli("daemon", "uninstall"); code == 0 || !strings.Contains(errs, "no service is installed") {
		t.Fatalf("uninstall again: %d %q", code, errs)
	}
	// No systemctl: written, and the commands said.
	vars["PATH"] = filepath.Join(base, "empty")
	code, out, errs = cli("daemon", "install")
	if code != 0 || !strings.Contains(out, "run it yourself:\n  systemctl --user daemon-reload\n  systemctl --user enable --now zeroclaw.service\n") {
		t.Fatalf("install without systemctl: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(unit); err != nil {
		t.Fatalf("the unit was not written: %v", err)
	}
}

// A service runs what sits at its path at every login, so install
// refuses, saying why and what to do, a zeroclaw that will be gone or
// that another local user could replace: a build of go run (here the
// test binary at a go-build path, as go run leaves it) and one in a
// directory every user may write. Nothing is written.
func TestDaemonInstallRefusesABinaryOthersCouldReplace(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	for _, c := range []struct{ dir, why string }{
		{filepath.Join(base, "go-build3141", "b001", "exe"), "which is a temporary build of go run or go test (in its go-build3141 directory), deleted when it ends"},
		{filepath.Join(base, "shared"), "which lies in " + filepath.Join(base, "shared") + ", a directory that every user may write (mode 0777): another user could put another program in its place"},
	} {
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(c.dir, "zeroclaw")
		if err := os.Link(self, exe); err != nil {
			data, err := os.ReadFile(self)
			if err != nil || os.WriteFile(exe, data, 0o755) != nil {
				t.Fatalf("copy the test binary: %v", err)
			}
		}
		if strings.HasSuffix(c.dir, "shared") {
			os.Chmod(c.dir, 0o777)
		}
		xdg := filepath.Join(base, "xdg")
		cmd := exec.Command(exe, "daemon", "install", "--no-enable")
		cmd.Env = append(hermetic(os.Environ()), "ZEROCLAW_TEST_MAIN=1", "ZEROCLAW_CONFIG_DIR="+filepath.Join(base, "cfg"),
			"HOME="+filepath.Join(base, "home"), "XDG_CONFIG_HOME="+xdg, "PATH="+filepath.Join(base, "empty"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "the service would run "+exe+", "+c.why) ||
			!strings.Contains(string(out), "go install ./cmd/zeroclaw") || !strings.Contains(string(out), "~/.local/bin") {
			t.Errorf("install from %s: %v\n%s", exe, err, out)
		}
		if _, err := os.Stat(filepath.Join(xdg, "systemd", "user", "zeroclaw.service")); err == nil {
			t.Errorf("install from %s wrote the unit", exe)
		}
	}
}
