package tool

import (
	"os"
	"testing"
)

// BenchmarkShellTrue is the shell tool running `true`, spawn to exit,
// without and with the sandbox (the shim, Landlock, the subreaper's
// sweep), in the same run: the ratio is what the sandbox costs a
// command.
func BenchmarkShellTrue(b *testing.B) {
	exe, _ := os.Executable()
	for _, c := range []struct {
		name string
		sb   *Sandbox
	}{{"sandbox=off", nil}, {"sandbox=workspace-write", &Sandbox{Exe: exe, Network: true, Mode: "workspace-write"}}} {
		b.Run(c.name, func(b *testing.B) {
			ws := b.TempDir()
			for range b.N {
				if r := sandboxed(b, c.sb, ws, "true"); r.IsError {
					b.Fatalf("%+v", r)
				}
			}
		})
	}
}
