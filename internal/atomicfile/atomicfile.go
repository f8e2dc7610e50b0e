// Package atomicfile replaces a file whole or not at all: the bytes go to
// a temporary file beside it, are synced, and the temporary file is
// renamed over the old one, so a crash or a full disk leaves either the
// old file or the new one, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data (mode perm, for the file's owner as the
// umask allows). On an error the old file is as it was and no temporary
// file is left.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
