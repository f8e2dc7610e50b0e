package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shell tool on Windows runs cmd /c with the command line as given
// (quotes and & included), and a cancel ends the whole tree at once.
func TestShellOnWindows(t *testing.T) {
	env := &Env{Cwd: tempDirT(t)}
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
