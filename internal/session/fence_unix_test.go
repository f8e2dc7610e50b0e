//go:build unix

package session

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// A turn that outlives its session's close (a tool that ignores
// cancellation for a while) is fenced off: the id is loaded again at
// once, the new copy writes on from the stored seqs, and nothing the old
// turn does later reaches the store.
func TestTurnThatOutlivesCloseIsFencedOff(t *testing.T) {
	defer func(d time.Duration) { closeWait = d }(closeWait)
	closeWait = 50 * time.Millisecond
	h := newHarness(t, func(c *config.Config) {
		a := c.Agents["default"]
		a.Risk = "full"
		c.Agents["default"] = a
	})
	cl, _ := h.client(t, "c1")
	h.open(t, cl, "s")
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The command ignores SIGTERM: it ends only at the SIGKILL 2 s later.
	done, err := h.m.Prompt(cl, "s", `/tool shell {"command":"trap '' TERM; echo started > `+fifo+`; sleep 30"}`)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(fifo); err != nil || string(b) != "started\n" { // the command runs
		t.Fatalf("fifo: %q %v", b, err)
	}
	if err := h.m.Close(cl, "s"); err != nil {
		t.Fatal(err)
	}
	res := h.open(t, cl, "s") // the old turn is still running
	if r := h.prompt(t, cl, "s", "new copy"); r.StopReason != "end_turn" {
		t.Fatalf("prompt on the new copy: %+v %v", r, r.Error)
	}
	<-done // the old turn ends (its command killed), writing nothing
	rec, _ := h.st.GetSession(context.Background(), "s")
	evs, _ := h.st.Events(context.Background(), "s", 0, 0, 0)
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("stored seq %d at %d", e.Seq, i)
		}
	}
	if rec.LastSeq != int64(len(evs)) || rec.LastSeq <= res.LastSeq {
		t.Fatalf("stored %d events, last_seq %d, new copy attached at %d", len(evs), rec.LastSeq, res.LastSeq)
	}
	last := evs[len(evs)-1]
	if !bytes.Contains(last.Body, []byte(`"echo: new copy"`)) {
		t.Fatalf("the last stored event is %s, want the new copy's turn_complete", last.Body)
	}
}
