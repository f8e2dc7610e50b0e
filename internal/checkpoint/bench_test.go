package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// trees are the benchmarks' directories, made once per run of the
// test binary (50,000 files take a while to write) and removed by
// TestMain.
var trees = map[int]string{}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		for _, dir := range trees {
			os.RemoveAll(dir)
		}
		os.Exit(code)
	}))
}

// benchTree is a directory of n files (100 to a directory, 200 bytes
// each) with a .gitignore.
func benchTree(b *testing.B, n int) string {
	if dir, ok := trees[n]; ok {
		return dir
	}
	root, err := os.MkdirTemp("", "zc-bench-tree-")
	if err != nil {
		b.Fatal(err)
	}
	trees[n] = root
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644)
	data := make([]byte, 200)
	for i := range n {
		dir := filepath.Join(root, "pkg"+strconv.Itoa(i/100))
		if i%100 == 0 {
			os.MkdirAll(dir, 0o755)
		}
		copy(data, fmt.Sprintf("file %d\n", i))
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)+".go"), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkCheckpointFileTool is what a checkpoint adds to a file tool's
// write of one file (Changing, the write, Changed) in a directory of
// 500 and of 50,000 files: it must not depend on the tree's size.
func BenchmarkCheckpointFileTool(b *testing.B) {
	for _, n := range []int{500, 50000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := benchTree(b, n)
			s, err := Open(b.TempDir(), root, Options{})
			if err != nil {
				b.Fatal(err)
			}
			p := filepath.Join(root, "pkg1", "f100.go")
			s.Begin(1, "bench", 1, 0, false)
			s.Changing(nil, true) // the index exists (a command ran before)
			b.ResetTimer()
			for i := range b.N {
				s.Changing([]string{p}, false)
				os.WriteFile(p, []byte("edit "+strconv.Itoa(i)), 0o644)
				s.Changed([]string{p}, false)
			}
			b.StopTimer()
			s.End()
		})
	}
}

// BenchmarkCheckpointCommand is what a checkpoint adds to a command that
// changes one file in a directory of 50,000 files (the scan after it;
// the one before a turn's first command runs beside the model's call),
// against BenchmarkStatWalk, a bare walk that stats every entry.
func BenchmarkCheckpointCommand(b *testing.B) {
	root := benchTree(b, 50000)
	s, err := Open(b.TempDir(), root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(root, "pkg7", "f700.go")
	s.Begin(1, "bench", 1, 0, false)
	s.Changing(nil, true)
	b.ResetTimer()
	for i := range b.N {
		s.Changing(nil, true)
		os.WriteFile(p, []byte("command "+strconv.Itoa(i)), 0o644)
		s.Changed(nil, true)
	}
	b.StopTimer()
	if t, _ := s.End(); len(t.Changes) != 1 {
		b.Fatalf("changes %+v", t.Changes)
	}
}

func BenchmarkStatWalk(b *testing.B) {
	root := benchTree(b, 50000)
	b.ResetTimer()
	for range b.N {
		n := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				if _, err := d.Info(); err == nil {
					n++
				}
			}
			return nil
		})
		if n < 50000 {
			b.Fatalf("walked %d", n)
		}
	}
}
