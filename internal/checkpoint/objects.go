package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// objects is a content-addressed store: each content once, named by its
// SHA-256, in files of mode 0600 under dir (0700). A content is written
// to a temporary file and renamed into place, so an object that exists is
// whole.
type objects struct{ dir string }

func (o objects) path(hash string) string {
	return filepath.Join(o.dir, hash[:2], hash[2:])
}

// has says whether hash is stored.
func (o objects) has(hash string) bool {
	_, err := os.Lstat(o.path(hash))
	return err == nil
}

// put stores b and returns its hash.
func (o objects) put(b []byte) (string, error) {
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	if o.has(hash) {
		return hash, nil
	}
	return hash, o.write(hash, b)
}

func (o objects) write(hash string, b []byte) error {
	dir := filepath.Dir(o.path(hash))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), o.path(hash))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("checkpoint: store object: %w", err)
	}
	return nil
}

// get reads a stored content.
func (o objects) get(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("checkpoint: bad object name %q", hash)
	}
	b, err := os.ReadFile(o.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: object %s is missing", hash[:12])
	}
	return b, err
}

// prune removes every object keep does not name.
func (o objects) prune(keep map[string]bool) error {
	return filepath.WalkDir(o.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(o.dir, p)
		hash := filepath.Dir(rel) + filepath.Base(rel)
		if !keep[hash] {
			os.Remove(p)
		}
		return nil
	})
}

// readCapped reads at most max bytes of the file at p; ok is false when
// it holds more.
func readCapped(p string, max int64) (b []byte, ok bool, err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(b)) > max {
		return nil, false, nil
	}
	return b, true, nil
}
