package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/sandbox"
)

// sandboxed runs command through the shell tool under sb in ws.
func sandboxed(t testing.TB, sb *Sandbox, ws, command string) Result {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"command": command})
	env := &Env{Cwd: ws, Confine: true, Commands: Commands{Sandbox: sb, Environ: os.Environ()}}
	return shell{}.Run(context.Background(), env, in)
}

func needLandlock(t *testing.T) {
	if s := sandbox.Available(); s.EnforcedBy != "landlock" {
		t.Skipf("no sandbox here: %s", s.Reason)
	}
}

// Escapes tried through real commands under workspace-write: every write
// outside the directory, the temp dir and sandbox.writable is refused.
func TestSandboxWorkspaceWrite(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	ws, out, tmp, extra := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "tmp"), filepath.Join(base, "extra")
	for _, d := range []string{ws, out, tmp, extra} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(out, "existing"), []byte("theirs\n"), 0o644)
	exe, _ := os.Executable()
	sb := &Sandbox{Exe: exe, Temp: []string{tmp}, Writable: []string{extra}, Network: true, Mode: "workspace-write"}

	// Inside, the temp dir and sandbox.writable: allowed; moves inside too.
	if r := sandboxed(t, sb, ws, fmt.Sprintf("echo in > in.txt && mkdir -p a b && echo m > a/m && mv a/m b/m && echo t > %s/t && echo e > %s/e && cat in.txt", tmp, extra)); r.IsError || r.Output != "in\n" {
		t.Fatalf("writes inside: %+v", r)
	}
	escapes := []struct{ name, command string }{
		{"the home directory", "echo x > " + out + "/f"},
		{"through the temp dir's parent", "echo x > " + tmp + "/../home/f"},
		{"a symlink in the directory pointing out", "ln -s " + out + " link && echo x > link/f"},
		{"a hard link to a file outside", "ln " + out + "/existing hl; echo x >> hl; echo x >> " + out + "/existing"},
		{"mv out", "mv in.txt " + out + "/f"},
		{"a script written in the directory and run", "printf 'echo x > " + out + "/f\\n' > s.sh && sh s.sh"},
		{"setsid, nohup and a double fork", "setsid sh -c 'echo x > " + out + "/f' ; nohup sh -c 'echo x > " + out + "/g' >/dev/null 2>&1; (sh -c 'echo x > " + out + "/h' &); sleep 0.2; exit 1"},
	}
	for _, e := range escapes {
		r := sandboxed(t, sb, ws, e.command)
		if !r.IsError {
			t.Errorf("%s: the command succeeded: %q", e.name, r.Output)
		}
		ents, _ := os.ReadDir(out)
		if len(ents) != 1 {
			var names []string
			for _, x := range ents {
				names = append(names, x.Name())
			}
			t.Fatalf("%s: wrote outside: %v", e.name, names)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "existing")); string(b) != "theirs\n" {
			t.Fatalf("%s: changed a file outside: %q", e.name, b)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "in.txt")); err != nil {
		t.Errorf("in.txt moved out: %v", err)
	}
	r := sandboxed(t, sb, ws, "echo x > "+out+"/f")
	if !strings.Contains(r.Output, "the sandbox (workspace-write) lets commands write only in the session's directory") {
		t.Errorf("a refused write does not say why: %q", r.Output)
	}

	// read-only: nothing but the temp dir.
	ro := *sb
	ro.ReadOnly, ro.Mode = true, "read-only"
	if r := sandboxed(t, &ro, ws, "echo x > new.txt"); !r.IsError {
		t.Errorf("read-only wrote in the directory: %+v", r)
	}
	if r := sandboxed(t, &ro, ws, "echo x > "+tmp+"/ro && cat "+tmp+"/ro"); r.IsError {
		t.Errorf("read-only could not write the temp dir: %+v", r)
	}
}

// network = false: no TCP connect (to a local listener) and no bind.
func TestSandboxNetwork(t *testing.T) {
	needLandlock(t)
	if !sandbox.Available().NetworkRules {
		t.Skip("Landlock before ABI 4 cannot deny the network")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ws := t.TempDir()
	exe, _ := os.Executable()
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	sb := &Sandbox{Exe: exe, Temp: []string{t.TempDir()}, Network: true, Mode: "workspace-write"}
	if r := sandboxed(t, sb, ws, connect); r.IsError || r.Output != "connected\n" {
		t.Fatalf("with the network: %+v", r)
	}
	sb.Network = false
	r := sandboxed(t, sb, ws, connect)
	if !r.IsError || strings.Contains(r.Output, "connected") || !strings.Contains(r.Output, "the sandbox denies network access") {
		t.Errorf("without the network: %+v", r)
	}
}

// A cancelled command in the sandbox has the grace one out of it has: its
// TERM trap runs to the end (the shim used to kill everything at once).
func TestSandboxedCommandGetsItsGrace(t *testing.T) {
	needLandlock(t)
	ws := t.TempDir()
	exe, _ := os.Executable()
	sb := &Sandbox{Exe: exe, Temp: []string{t.TempDir()}, Network: true, Mode: "workspace-write"}
	in, _ := json.Marshal(map[string]any{"command": "trap 'sleep 0.3; echo > stopped; exit 0' TERM; echo > started; while :; do sleep 0.05; done"})
	env := &Env{Cwd: ws, Confine: true, Commands: Commands{Sandbox: sb, Environ: os.Environ()}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() { done <- shell{}.Run(ctx, env, in) }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
	}
	cancel()
	r := <-done
	if _, err := os.Stat(filepath.Join(ws, "stopped")); err != nil {
		t.Errorf("the TERM trap did not finish (%v): %+v", err, r)
	}
}

// A background process, with or without a terminal, is confined as a
// foreground command is: the same escapes fail the same way.
func TestSandboxHoldsInTheBackground(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	ws, out, tmp := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "tmp")
	for _, d := range []string{ws, out, tmp} {
		os.MkdirAll(d, 0o755)
	}
	exe, _ := os.Executable()
	sb := &Sandbox{Exe: exe, Temp: []string{tmp}, Network: true, Mode: "workspace-write"}
	table := background.NewTable("", 0, 0, 0, nil)
	defer table.Close(nil, 0)
	env := &Env{Cwd: ws, Confine: true, Commands: Commands{Sandbox: sb, Environ: os.Environ(), Processes: table}}
	for _, tty := range []bool{false, true} {
		for _, command := range []string{
			"echo x > " + out + "/f",
			"ln -s " + out + " link$$ && echo x > link$$/f",
			"setsid sh -c 'echo x > " + out + "/f'; (sh -c 'echo x > " + out + "/g' &); sleep 0.2; exit 1",
			"echo inside > in.txt",
		} {
			in, _ := json.Marshal(map[string]any{"command": command, "background": true, "tty": tty})
			r := shell{}.Run(context.Background(), env, in)
			var d struct{ Process struct{ ID string } }
			if json.Unmarshal(r.Details, &d) != nil || d.Process.ID == "" {
				t.Fatalf("start (tty %v) %q: %+v", tty, command, r)
			}
			p := table.Get(d.Process.ID)
			p.Wait(context.Background())
			info := p.Info()
			inside := strings.HasPrefix(command, "echo inside")
			if (info.ExitCode != nil && *info.ExitCode == 0) != inside {
				t.Errorf("tty %v, %q: exit code %v: %s", tty, command, info.ExitCode, p.Output(0, 0).Data)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Fatalf("tty %v, %q: wrote outside: %v", tty, command, ents)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "in.txt")); string(b) != "inside\n" {
		t.Errorf("the write inside: %q", b)
	}
}
