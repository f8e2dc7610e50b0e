package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// Confinement with Windows paths: drive letters, drive-relative and rooted
// paths, UNC and \\?\ forms, either slash, lead nowhere outside the
// session directory. (Symlinks: see files_test.go, Unix; Wine's symlinks
// are not Windows reparse points.)
func TestConfinementWindowsPaths(t *testing.T) {
	env := fixture(t)
	outside := testdir.New(t)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	vol := filepath.VolumeName(env.Cwd)
	for _, path := range []string{
		filepath.Join(outside, "secret"),
		`\\?\` + filepath.Join(outside, "secret"),
		`\\localhost\C$\windows\win.ini`,
		vol + `\windows\win.ini`,
		`\windows\win.ini`,
		vol + `windows\win.ini`,
		`..\secret`,
		`sub\..\..\secret`,
		`sub/../../secret`,
		`C:..\secret`,
	} {
		for _, tool := range []string{"read_file", "write_file", "list_dir"} {
			in, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
			r := run(t, env, tool, string(in))
			if !r.IsError || !strings.Contains(r.Output, "outside the session directory") {
				t.Errorf("%s %s: %+v, want refusal", tool, path, r)
			}
		}
	}
	// Inside, either slash and an absolute path work.
	in, _ := json.Marshal(map[string]string{"path": filepath.Join(env.Cwd, "a.txt")})
	if r := run(t, env, "read_file", string(in)); r.IsError || !strings.Contains(r.Output, "alpha") {
		t.Errorf("absolute path inside: %+v", r)
	}
	if r := run(t, env, "read_file", `{"path":"sub/b.go"}`); r.IsError {
		t.Errorf("forward slashes: %+v", r)
	}
	if r := run(t, env, "read_file", `{"path":"sub\\b.go"}`); r.IsError {
		t.Errorf("backslashes: %+v", r)
	}
}
