package attach

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

func TestSaveDedupMarkersAndLimits(t *testing.T) {
	s := &Store{Dir: filepath.Join(t.TempDir(), "uploads")}
	src := filepath.Join(t.TempDir(), "notes.md")
	os.WriteFile(src, []byte("# notes\n"), 0o644)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	files, err := s.SaveAll(context.Background(), []protocol.Attachment{
		{Path: src},
		{DataB64: base64.StdEncoding.EncodeToString(png), Filename: "shot.png"},
		{DataB64: base64.StdEncoding.EncodeToString([]byte("# notes\n")), Filename: "again.md"},
	})
	if err != nil {
		t.Fatal(err)
	}
	md, img, dup := files[0], files[1], files[2]
	if !strings.HasPrefix(md.RefID, "sha256:") || md.SizeBytes != 8 || md.Deduplicated || md.Marker != "[Document: notes.md] "+md.Path || filepath.Ext(md.Path) != ".md" {
		t.Errorf("md %+v", md)
	}
	if img.Marker != "[IMAGE:"+img.Path+"]" || img.MimeType != "image/png" {
		t.Errorf("image %+v", img)
	}
	if !dup.Deduplicated || dup.RefID != md.RefID || dup.Path != md.Path {
		t.Errorf("same bytes not deduplicated: %+v vs %+v", dup, md)
	}
	if b, _ := os.ReadFile(md.Path); string(b) != "# notes\n" {
		t.Errorf("stored %q", b)
	}
	if fi, _ := os.Stat(md.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("upload mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(s.Dir)
	if len(ents) != 2 {
		t.Errorf("%d files in uploads (temp files left?)", len(ents))
	}
	if got := Markers(files[:2]); got != md.Marker+"\n"+img.Marker {
		t.Errorf("markers %q", got)
	}

	big := filepath.Join(t.TempDir(), "big")
	os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644)
	// A FIFO is refused at once instead of waiting for a writer forever.
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "fifo"))
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(src, link)
	for _, tc := range []struct {
		a    protocol.Attachment
		want string
	}{
		{protocol.Attachment{Path: "rel.txt"}, "not absolute"},
		{protocol.Attachment{Path: "/no/such/file"}, "no such file"},
		{protocol.Attachment{Path: t.TempDir()}, "not a regular file"},
		{protocol.Attachment{Path: big}, "the limit is"},
		{protocol.Attachment{DataB64: "!!!"}, "not base64"},
		{protocol.Attachment{}, "path or dataB64 is required"},
		{protocol.Attachment{Path: src, DataB64: "AA=="}, "not both"},
		{protocol.Attachment{Path: fifo}, "not a regular file"},
		{protocol.Attachment{Path: link}, "is a symlink"},
	} {
		_, err := s.SaveAll(context.Background(), []protocol.Attachment{{DataB64: "AA=="}, tc.a})
		var ae *Error
		if !errors.As(err, &ae) || ae.Index != 1 || !strings.Contains(ae.Reason, tc.want) {
			t.Errorf("%+v: %v, want attachments[1] ... %s", tc.a, err, tc.want)
		}
	}
	half := base64.StdEncoding.EncodeToString(make([]byte, MaxFileBytes-10))
	if _, err := s.SaveAll(context.Background(), []protocol.Attachment{{DataB64: half}, {DataB64: half}, {DataB64: half}}); err == nil || !strings.Contains(err.Error(), "of one request exceed") {
		t.Errorf("request limit: %v", err)
	}
}
