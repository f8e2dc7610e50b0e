//go:build unix

package tool

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Writing or editing through a symlink inside the session directory
// changes the file it points to; the link stays a link.
func TestWriteThroughSymlinkWritesItsTarget(t *testing.T) {
	env := fixture(t)
	os.Symlink("a.txt", filepath.Join(env.Cwd, "link.txt"))
	os.Symlink(filepath.Join(env.Cwd, "sub", "b.go"), filepath.Join(env.Cwd, "abs-link"))
	if r := run(t, env, "edit_file", `{"path":"link.txt","old":"alpha","new":"ALPHA"}`); r.IsError {
		t.Fatalf("edit through link: %+v", r)
	}
	if r := run(t, env, "write_file", `{"path":"abs-link","content":"package b\n"}`); r.IsError {
		t.Fatalf("write through link: %+v", r)
	}
	for link, target := range map[string]string{"link.txt": "a.txt", "abs-link": "sub/b.go"} {
		fi, err := os.Lstat(filepath.Join(env.Cwd, link))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink", link)
		}
		b, _ := os.ReadFile(filepath.Join(env.Cwd, target))
		if !strings.HasPrefix(string(b), "ALPHA") && !strings.HasPrefix(string(b), "package b\n") {
			t.Errorf("%s: %q", target, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(env.Cwd, "sub", "b.go")); string(b) != "package b\n" {
		t.Errorf("b.go: %q", b)
	}
}

// A FIFO (or any file that is not regular) is refused before a byte is
// read, so no tool call blocks on one; search passes it by.
func TestFIFOIsRefusedNotWaitedOn(t *testing.T) {
	env := fixture(t)
	if err := syscall.Mkfifo(filepath.Join(env.Cwd, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := run(t, env, "read_file", `{"path":"pipe"}`); !r.IsError || !strings.Contains(r.Output, "not a regular file") {
		t.Errorf("read of a FIFO: %+v", r)
	}
	if r := run(t, env, "edit_file", `{"path":"pipe","old":"a","new":"b"}`); !r.IsError || !strings.Contains(r.Output, "not a regular file") {
		t.Errorf("edit of a FIFO: %+v", r)
	}
	if r := run(t, env, "search", `{"pattern":"beta"}`); r.IsError || strings.Count(r.Output, "\n") != 2 {
		t.Errorf("search beside a FIFO: %+v", r)
	}
}

// search reads a bounded part of a huge file, not all of it.
func TestSearchIsBoundedOnHugeFiles(t *testing.T) {
	env := fixture(t)
	f, err := os.Create(filepath.Join(env.Cwd, "sparse.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("needle at the start\n")
	f.Truncate(512 << 20) // 512 MiB, sparse: zeros from here
	f.Close()
	os.WriteFile(filepath.Join(env.Cwd, "text.txt"), []byte(strings.Repeat("hay\n", 1<<20)+"needle at the end\n"), 0o644)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := run(t, env, "search", `{"pattern":"needle"}`)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("search allocated %d MiB", alloc>>20)
	}
	// The sparse file is binary (NULs in its first bytes) and skipped
	// unread; the 4 MiB text file's needle lies past the per-file bound.
	if strings.Contains(r.Output, "needle") || !strings.Contains(r.Output, "1 files over 1048576 bytes were searched in their first") {
		t.Errorf("search: %q", r.Output)
	}
}

func TestConfinement(t *testing.T) {
	env := fixture(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	os.Symlink(outside, filepath.Join(env.Cwd, "link"))
	for _, tc := range []struct{ tool, input string }{
		{"read_file", `{"path":"../x"}`},
		{"read_file", `{"path":"` + filepath.Join(outside, "secret") + `"}`},
		{"read_file", `{"path":"link/secret"}`},
		{"write_file", `{"path":"link/new","content":"x"}`},
		{"write_file", `{"path":"../../evil","content":"x"}`},
		{"list_dir", `{"path":"/"}`},
		{"search", `{"pattern":"s","path":"link"}`},
		{"edit_file", `{"path":"link/secret","old":"s","new":"t"}`},
	} {
		r := run(t, env, tc.tool, tc.input)
		if !r.IsError || !strings.Contains(r.Output, "outside the session directory") {
			t.Errorf("%s %s: %+v, want refusal", tc.tool, tc.input, r)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Error("a write escaped through the symlink")
	}
	// Risk "full" lifts confinement.
	env.Confine = false
	if r := run(t, env, "read_file", `{"path":"link/secret"}`); r.IsError || r.Output != "s" {
		t.Errorf("unconfined read: %+v", r)
	}
}

// edit_file with replace_all changes every occurrence; without it a
// repeated text is refused and the file stays as it was.
func TestEditFileReplaceAll(t *testing.T) {
	env := fixture(t) // a.txt: "alpha\nbeta\ngamma beta\n"
	path := filepath.Join(env.Cwd, "a.txt")
	if r := run(t, env, "edit_file", `{"path":"a.txt","old":"beta","new":"BETA"}`); !r.IsError || !strings.Contains(r.Output, "occurs 2 times") || !strings.Contains(r.Output, "replace_all") {
		t.Fatalf("repeated text without replace_all: %+v", r)
	}
	if b, _ := os.ReadFile(path); string(b) != "alpha\nbeta\ngamma beta\n" {
		t.Fatalf("a refused edit changed the file: %q", b)
	}
	if r := run(t, env, "edit_file", `{"path":"a.txt","old":"beta","new":"BETA","replace_all":true}`); r.IsError || r.Output != "edited a.txt (2 replacements)" {
		t.Fatalf("replace_all: %+v", r)
	}
	if b, _ := os.ReadFile(path); string(b) != "alpha\nBETA\ngamma BETA\n" {
		t.Errorf("after replace_all: %q", b)
	}
}

// multi_edit applies its edits in order, each to what the ones before
// left, in one write; when one cannot apply, none is made.
func TestMultiEditIsAllOrNone(t *testing.T) {
	env := fixture(t)
	path := filepath.Join(env.Cwd, "a.txt")
	r := run(t, env, "multi_edit", `{"path":"a.txt","edits":[{"old":"alpha","new":"one"},{"old":"one\nbeta","new":"one\ntwo"},{"old":"nowhere","new":"x"}]}`)
	if !r.IsError || r.Output != "edit 3: old text not found in a.txt; nothing was changed" {
		t.Fatalf("failing third edit: %+v", r)
	}
	if b, _ := os.ReadFile(path); string(b) != "alpha\nbeta\ngamma beta\n" {
		t.Fatalf("a failed multi_edit changed the file: %q", b)
	}
	if r := run(t, env, "multi_edit", `{"path":"a.txt","edits":[{"old":"x","new":"y"},{"old":"","new":"z"}]}`); !r.IsError || !strings.Contains(r.Output, "edit 2: old and new are required") {
		t.Fatalf("empty old: %+v", r)
	}
	r = run(t, env, "multi_edit", `{"path":"a.txt","edits":[{"old":"alpha","new":"one"},{"old":"one\nbeta","new":"one\ntwo"},{"old":"beta","new":"three","replace_all":true}]}`)
	if r.IsError || r.Output != "edited a.txt (3 replacements)" {
		t.Fatalf("multi_edit: %+v", r)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\ngamma three\n" {
		t.Errorf("after multi_edit: %q", b)
	}
	if r := run(t, env, "multi_edit", `{"path":"a.txt","edits":[]}`); !r.IsError {
		t.Errorf("no edits: %+v", r)
	}
}
