package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/console"
)

// zeroclaw daemon install writes the systemd user unit and enables it
// with systemctl --user (here a stand-in on PATH that records what it
// is asked: the host's own services are never touched); status says it
// is installed; uninstall disables and removes it. Without systemctl the
// unit is written all the same and the commands are printed.
func TestDaemonInstallAndUninstall(t *testing.T) {
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	os.MkdirAll(bin, 0o755)
	log := filepath.Join(base, "systemctl.log")
	os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho \"$@\" >> "+log+"\n"), 0o755)
	vars := map[string]string{"ZEROCLAW_CONFIG_DIR": filepath.Join(base, "cfg"), "HOME": filepath.Join(base, "home"),
		"XDG_CONFIG_HOME": filepath.Join(base, "xdg"), "PATH": bin, "USER": "someone", "ZEROCLAW_TEST_MAIN": "1"}
	cli := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := console.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] },
			Environ: append(hermetic(os.Environ()), "ZEROCLAW_CONFIG_DIR="+vars["ZEROCLAW_CONFIG_DIR"])}
		code := Main(context.Background(), args, env)
		return code, out.String(), errb.String()
	}
	unit := filepath.Join(base, "xdg", "systemd", "user", "zeroclaw.service")
	code, out, errs := cli("daemon", "install")
	if code != 0 || !strings.Contains(out, "wrote "+unit) || !strings.Contains(out, "enabled the systemd service zeroclaw") {
		t.Fatalf("install: %d %q %q", code, out, errs)
	}
	b, err := os.ReadFile(unit)
	exe, _ := os.Executable()
	if err != nil || !strings.Contains(string(b), "ExecStart="+exe+" daemon\n") || !strings.Contains(string(b), "Environment=ZEROCLAW_CONFIG_DIR="+vars["ZEROCLAW_CONFIG_DIR"]) {
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
