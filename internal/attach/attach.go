// Package attach stores the files attached to prompts (spec section 9):
// content-addressed under <data dir>/uploads, deduplicated by SHA-256,
// each written to a temporary file and renamed into place.
package attach

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Limits.
const (
	MaxFileBytes    = 10 << 20
	MaxRequestBytes = 20 << 20
)

// File is one stored attachment.
type File = protocol.StoredFile

// Error is a refused attachment; Index says which entry.
type Error struct {
	Index  int
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("attachments[%d]: %s", e.Index, e.Reason) }

// Store keeps uploads in Dir.
type Store struct{ Dir string }

// SaveAll stores every entry of one request, within the request limit.
// Reading stops when ctx ends.
func (s *Store) SaveAll(ctx context.Context, entries []protocol.Attachment) ([]File, error) {
	var total int64
	out := make([]File, 0, len(entries))
	for i, a := range entries {
		if a.RefID != "" {
			if a.Path != "" || a.DataB64 != "" {
				return nil, &Error{Index: i, Reason: "give one of path, dataB64 and refId"}
			}
			f, err := s.lookup(a.RefID, a.Filename, a.MimeType)
			if err != nil {
				return nil, &Error{Index: i, Reason: err.Error()}
			}
			out = append(out, f)
			continue
		}
		data, name, err := read(ctx, a)
		if err != nil {
			return nil, &Error{Index: i, Reason: err.Error()}
		}
		if total += int64(len(data)); total > MaxRequestBytes {
			return nil, &Error{Index: i, Reason: fmt.Sprintf("the attachments of one request exceed %d bytes", MaxRequestBytes)}
		}
		f, err := s.save(data, name, a.MimeType)
		if err != nil {
			return nil, fmt.Errorf("attachments[%d]: %w", i, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// read returns an entry's bytes and its file name.
func read(ctx context.Context, a protocol.Attachment) ([]byte, string, error) {
	switch {
	case a.Path != "" && a.DataB64 != "":
		return nil, "", errors.New("give path or dataB64, not both")
	case a.Path != "":
		if !filepath.IsAbs(a.Path) {
			return nil, "", fmt.Errorf("path %q is not absolute", a.Path)
		}
		// Never block on what is not a regular file (a FIFO waits for a
		// writer forever) and never follow a final symlink: open without
		// blocking, look, and only then read.
		f, err := os.OpenFile(a.Path, os.O_RDONLY|oNonblock|oNofollow, 0)
		if err != nil {
			if isLoop(err) {
				return nil, "", fmt.Errorf("%s is a symlink; give the path of the file itself", a.Path)
			}
			return nil, "", err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return nil, "", err
		}
		if !fi.Mode().IsRegular() {
			return nil, "", fmt.Errorf("%s is not a regular file", a.Path)
		}
		if fi.Size() > MaxFileBytes {
			return nil, "", fmt.Errorf("%s is %d bytes; the limit is %d", a.Path, fi.Size(), MaxFileBytes)
		}
		data, err := readCtx(ctx, f, MaxFileBytes+1)
		if err != nil {
			return nil, "", err
		}
		if len(data) > MaxFileBytes {
			return nil, "", fmt.Errorf("%s is over the limit of %d bytes", a.Path, MaxFileBytes)
		}
		name := a.Filename
		if name == "" {
			name = filepath.Base(a.Path)
		}
		return data, name, nil
	case a.DataB64 != "":
		if base64.StdEncoding.DecodedLen(len(a.DataB64)) > MaxFileBytes+3 {
			return nil, "", fmt.Errorf("the data is over the limit of %d bytes", MaxFileBytes)
		}
		data, err := base64.StdEncoding.DecodeString(a.DataB64)
		if err != nil {
			return nil, "", fmt.Errorf("dataB64 is not base64: %v", err)
		}
		if len(data) > MaxFileBytes {
			return nil, "", fmt.Errorf("the data is %d bytes; the limit is %d", len(data), MaxFileBytes)
		}
		return data, a.Filename, nil
	}
	return nil, "", errors.New("path or dataB64 is required")
}

// Put stores data (deduplicated by content) as an attachment would be.
func (s *Store) Put(data []byte, mimeType string) (File, error) {
	if len(data) > MaxFileBytes {
		return File{}, fmt.Errorf("%d bytes; the limit is %d", len(data), MaxFileBytes)
	}
	return s.save(data, "", mimeType)
}

func (s *Store) save(data []byte, name, mimeType string) (File, error) {
	if mimeType == "" && name != "" {
		mimeType = mime.TypeByExtension(filepath.Ext(name))
	}
	if mimeType == "" {
		mimeType = http.DetectContentType(data)
	}
	mimeType, _, _ = strings.Cut(mimeType, ";")
	ext := strings.ToLower(filepath.Ext(name))
	if ext == "" {
		if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
			ext = exts[0]
		}
	}
	if len(ext) > 16 || strings.ContainsAny(ext, `/\ `) {
		ext = ""
	}
	sum := sha256.Sum256(data)
	hexsum := hex.EncodeToString(sum[:])
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return File{}, err
	}
	path := filepath.Join(s.Dir, hexsum+ext)
	f := File{RefID: "sha256:" + hexsum, Path: path, SizeBytes: int64(len(data)), MimeType: mimeType}
	if name == "" {
		name = hexsum[:12] + ext
	}
	f.Marker = marker(path, name, mimeType)
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(data)) {
		f.Deduplicated = true
		return f, nil
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return File{}, err
	}
	return f, nil
}

// readCtx reads at most max bytes of r in pieces, stopping when ctx ends.
func readCtx(ctx context.Context, r io.Reader, max int) ([]byte, error) {
	var buf []byte
	chunk := make([]byte, 256<<10)
	for len(buf) < max {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(chunk[:min(len(chunk), max-len(buf))])
		buf = append(buf, chunk[:n]...)
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// Markers joins the marker lines of files, for the prompt.
func Markers(files []File) string {
	lines := make([]string, len(files))
	for i, f := range files {
		lines[i] = f.Marker
	}
	return strings.Join(lines, "\n")
}
