package client_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// serve runs a daemon in-process on the echo provider with risk full.
func serve(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dirs, _ := config.ResolveDirs(filepath.Join(base, "cfg"), func(string) string { return "" })
	os.MkdirAll(dirs.ConfigDir, 0o700)
	os.WriteFile(dirs.ConfigFile(), []byte("[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nrisk = \"full\"\n"), 0o600)
	cfg, err := config.Load(dirs.ConfigFile(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Dirs: dirs, Config: cfg, Ready: func(string) { close(ready) }, Getenv: func(string) string { return "" }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return dirs.Endpoint
}

// Replay reads a session whole and in order, page by page within the
// client's frame limit, with every event the daemon had to cut fetched
// whole; until stops it where asked.
func TestReplayReadsEverythingWithinTheFrameLimit(t *testing.T) {
	sock := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const limit = 128 << 10
	c, err := client.Dial(ctx, sock, client.Options{Capabilities: &protocol.ClientCapabilities{MaxFrameBytes: limit}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cwd := t.TempDir()
	big := strings.Repeat("a line of the big file\n", 9000) // 207,000 bytes: read whole, cut in any frame
	os.WriteFile(filepath.Join(cwd, "big.txt"), []byte(big), 0o644)
	var ns protocol.SessionNewResult
	if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: "r", Cwd: cwd}, &ns); err != nil {
		t.Fatal(err)
	}
	prompt := "/chunks 5000\n" + strings.Repeat("/tool read_file {\"path\":\"big.txt\"}\n", 3)
	var pr protocol.SessionPromptResult
	if err := c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: "r", Prompt: &prompt}, &pr); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	whole := 0
	last, err := c.Replay(ctx, "r", 0, 0, func(ev json.RawMessage, u protocol.SessionUpdate) error {
		seqs = append(seqs, u.Seq)
		if r, ok := u.Event.(protocol.ToolResultEvent); ok {
			if u.Cut != nil || r.RawOutput[:min(len(r.RawOutput), 1<<10)] != big[:1<<10] {
				t.Errorf("tool_result %d not whole: %d bytes", u.Seq, len(r.RawOutput))
			}
			if r.RawOutput == big {
				whole++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("replayed seq %d at %d", s, i)
		}
	}
	if whole != 3 || last != int64(len(seqs)) || len(seqs) < 5000 {
		t.Fatalf("replayed %d events (last %d), %d whole tool results", len(seqs), last, whole)
	}
	n := 0
	if last, err := c.Replay(ctx, "r", 10, 20, func(json.RawMessage, protocol.SessionUpdate) error { n++; return nil }); err != nil || n != 10 || last != 20 {
		t.Fatalf("replay 10..20: %d events, last %d, %v", n, last, err)
	}
}

// An attachment of the documented per-file limit (10 MiB, 13.3 MiB of
// base64: over the 8 MiB frame) gets through: uploaded in parts, then
// attached to the prompt by its refId.
func TestAttachmentAtTheLimitFitsThroughTheSocket(t *testing.T) {
	sock := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	data := make([]byte, 10<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	files, err := c.Inline(ctx, []protocol.Attachment{{DataB64: base64.StdEncoding.EncodeToString(data), Filename: "blob.bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if files[0].RefID == "" || files[0].DataB64 != "" {
		t.Fatalf("not uploaded: %+v", files[0].RefID)
	}
	if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: "att", Cwd: t.TempDir()}, nil); err != nil {
		t.Fatal(err)
	}
	text := "see the file"
	var pr protocol.SessionPromptResult
	if err := c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: "att", Prompt: &text, Attachments: files}, &pr); err != nil {
		t.Fatal(err)
	}
	i := strings.Index(pr.Content, "[Document: blob.bin] ")
	if i < 0 {
		t.Fatalf("no marker in %q", pr.Content)
	}
	path := strings.Fields(pr.Content[i+len("[Document: blob.bin] "):])[0]
	stored, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(stored, data) {
		t.Fatalf("stored upload: %d bytes, %v", len(stored), err)
	}
}
