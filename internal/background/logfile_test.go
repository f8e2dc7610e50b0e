package background

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A process that floods its output (the attack: gigabytes in seconds)
// fills the disk no further than [tools] process_log_bytes: the two
// files together hold at most the bound, the newest output is there to
// its last byte, and the file says how much older output was dropped.
func TestFloodedOutputStaysWithinItsBoundOnDisk(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	const bound, lines = 256 << 10, 200000 // ~2.6 MB of output
	dir := t.TempDir()
	tab := NewTable(dir, 0, bound, 0, nil)
	defer tab.Close(nil, 0)
	p, err := tab.New("flood")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do echo line $i; i=$((i+1)); done", lines))
	if _, err := exec.LookPath("seq"); err == nil {
		cmd = exec.Command("sh", "-c", fmt.Sprintf("seq 0 %d | sed 's/^/line /'", lines-1))
	}
	wc, err := p.Attach(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wc.Close()
	p.Run(cmd, Hooks{})
	p.Wait(context.Background())
	total := p.Info().OutputBytes
	if total < 4*bound {
		t.Fatalf("the flood printed only %d bytes", total)
	}
	cur, err := os.ReadFile(filepath.Join(dir, p.ID()+".log"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(dir, p.ID()+".log.1"))
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := bytes.Cut(cur, []byte("\n"))
	if bytes.HasPrefix(old, []byte("[zeroclaw: ")) {
		_, old, _ = bytes.Cut(old, []byte("\n")) // its own line, from the rotation before
	}
	if int64(len(body)+len(old)) > bound {
		t.Errorf("on disk: %d + %d bytes of output, bound %d", len(old), len(body), bound)
	}
	want := fmt.Sprintf("line %d\n", lines-1)
	if !strings.HasSuffix(string(body), want) {
		t.Errorf("the newest output is not kept: ends %q", string(body[max(0, len(body)-40):]))
	}
	var dropped int64
	if _, err := fmt.Sscanf(string(head), "[zeroclaw: %d bytes of older output were dropped", &dropped); err != nil {
		t.Fatalf("the file does not say what was dropped: %q", head)
	}
	if dropped+int64(len(body)+len(old)) != total {
		t.Errorf("dropped %d + kept %d != printed %d", dropped, len(body)+len(old), total)
	}
	// The older half goes on where the dropped part ends: every line
	// of the two files, in order, is the next line.
	kept := strings.Split(strings.TrimSuffix(string(old)+string(body), "\n"), "\n")
	var first int
	fmt.Sscanf(kept[1], "line %d", &first) // kept[0] may be a line's end
	for i, l := range kept[1:] {
		if l != fmt.Sprintf("line %d", first+i) {
			t.Fatalf("line %d of what is kept is %q, want line %d", i+1, l, first+i)
		}
	}
}

// Below its bound a process's output is all in one file, with no line
// of ours in it.
func TestSmallOutputIsKeptWhole(t *testing.T) {
	dir := t.TempDir()
	l, err := openLog(filepath.Join(dir, "p.log"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		fmt.Fprintf(l, "line %d\n", i)
	}
	l.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "p.log"))
	if !strings.HasPrefix(string(b), "line 0\n") || !strings.HasSuffix(string(b), "line 99\n") {
		t.Errorf("kept: %q…", b[:20])
	}
	if _, err := os.Stat(filepath.Join(dir, "p.log.1")); !os.IsNotExist(err) {
		t.Errorf("an older half exists: %v", err)
	}
}
