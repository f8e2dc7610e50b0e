package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// A write replaces the file whole, with its mode; one that fails leaves
// the old file and no temporary file.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := Write(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if err != nil || string(b) != "two" || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("%q %v %v", b, fi.Mode(), err)
	}
	// A directory where the file should go: the rename fails.
	d := filepath.Join(dir, "d")
	os.Mkdir(d, 0o700)
	os.WriteFile(filepath.Join(d, "x"), nil, 0o600)
	if err := Write(d, []byte("x"), 0o600); err == nil {
		t.Error("replaced a directory")
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Error("wrote into a missing directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}
