package attach

import (
	"errors"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Upload is a file sent in parts (file/upload), for files whose base64
// would not fit in one frame: the parts go to a private temporary file,
// and Finish stores it as an attachment like any other.
type Upload struct {
	ID    string
	s     *Store
	f     *os.File
	bytes int64
}

// Begin starts an upload.
func (s *Store) Begin() (*Upload, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.Dir, ".upload-*")
	if err != nil {
		return nil, err
	}
	return &Upload{ID: protocol.NewID("up_", 8), s: s, f: f}, nil
}

// Write appends a part; the whole may not exceed MaxFileBytes.
func (u *Upload) Write(p []byte) error {
	if u.bytes+int64(len(p)) > MaxFileBytes {
		return fmt.Errorf("the upload is over the limit of %d bytes", MaxFileBytes)
	}
	n, err := u.f.Write(p)
	u.bytes += int64(n)
	return err
}

// Bytes is how much has been received.
func (u *Upload) Bytes() int64 { return u.bytes }

// Finish stores the upload (deduplicated by content) and removes its
// temporary file.
func (u *Upload) Finish(name, mimeType string) (File, error) {
	defer u.Abort()
	if _, err := u.f.Seek(0, io.SeekStart); err != nil {
		return File{}, err
	}
	data, err := io.ReadAll(io.LimitReader(u.f, MaxFileBytes+1))
	if err != nil {
		return File{}, err
	}
	return u.s.save(data, name, mimeType)
}

// Abort drops the upload.
func (u *Upload) Abort() {
	u.f.Close()
	os.Remove(u.f.Name())
}

// validRefID says whether refID is "sha256:" and 64 lower-case hex
// digits.
func validRefID(refID string) bool {
	hexsum, ok := strings.CutPrefix(refID, "sha256:")
	if !ok || len(hexsum) != 64 {
		return false
	}
	for i := 0; i < len(hexsum); i++ {
		if c := hexsum[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// lookup returns the stored attachment refID names (see File.RefID).
func (s *Store) lookup(refID, name, mimeType string) (File, error) {
	if !validRefID(refID) {
		return File{}, errors.New(`refId must be "sha256:" and 64 hex digits`)
	}
	hexsum := strings.TrimPrefix(refID, "sha256:")
	matches, _ := filepath.Glob(filepath.Join(s.Dir, hexsum+"*"))
	for _, path := range matches {
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		ext := filepath.Ext(path)
		if mimeType == "" {
			mimeType = mime.TypeByExtension(ext)
		}
		if mimeType == "" {
			head := make([]byte, 512)
			if f, err := os.Open(path); err == nil {
				n, _ := f.Read(head)
				f.Close()
				mimeType = http.DetectContentType(head[:n])
			}
		}
		mimeType, _, _ = strings.Cut(mimeType, ";")
		if name == "" {
			name = hexsum[:12] + ext
		}
		return File{RefID: refID, Path: path, SizeBytes: fi.Size(), MimeType: mimeType, Deduplicated: true,
			Marker: marker(path, name, mimeType)}, nil
	}
	return File{}, fmt.Errorf("no stored upload %s (upload it with file/upload or file/attach first)", refID)
}

func marker(path, name, mimeType string) string {
	if strings.HasPrefix(mimeType, "image/") {
		return "[IMAGE:" + path + "]"
	}
	return "[Document: " + name + "] " + path
}
