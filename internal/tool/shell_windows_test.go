package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// The shell tool on Windows runs cmd /c with the command line as given
// (quotes and & included), and a cancel ends the whole tree at once.
func TestShellOnWindows(t *testing.T) {
	env := &Env{Cwd: testdir.New(t)}
	sh, _ := Lookup("shell")
	in, _ := json.Marshal(map[string]string{"command": `echo "one two" & echo three`})
	r := sh.Run(context.Background(), env, in)
	if r.IsError || !strings.Contains(r.Output, `"one two"`) || !strings.Contains(r.Output, "three") {
		t.Fatalf("cmd /c: %+v", r)
	}
	in, _ = json.Marshal(map[string]string{"command": `exit 3`})
	if r := sh.Run(context.Background(), env, in); !r.IsError || !strings.Contains(r.Output, "[exit code 3]") {
		t.Fatalf("exit code: %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	in, _ = json.Marshal(map[string]string{"command": `echo up> started.txt & ping -n 60 127.0.0.1`})
	go func() { done <- sh.Run(ctx, env, in) }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(env.Cwd, "started.txt")); err == nil {
			break // running
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
	}
	cancel()
	select {
	case r := <-done:
		if !strings.Contains(r.Output, "[cancelled]") {
			t.Fatalf("cancelled: %+v", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a cancelled command ran on")
	}
}

// [daemon] shell = "powershell" runs commands with PowerShell.
func TestShellPowerShell(t *testing.T) {
	if windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil {
		t.Skip("real Windows only: Wine's powershell.exe is a stub that runs nothing")
	}
	if _, err := exec.LookPath("powershell"); err != nil {
		t.Skip("no PowerShell on this machine")
	}
	env := &Env{Cwd: testdir.New(t), Commands: Commands{Shell: "powershell"}}
	sh, _ := Lookup("shell")
	r := sh.Run(context.Background(), env, json.RawMessage(`{"command":"Write-Output (1+2)"}`))
	if r.IsError || strings.TrimSpace(r.Output) != "3" {
		t.Fatalf("powershell: %+v", r)
	}
}
