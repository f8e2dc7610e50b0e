package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/atomicfile"
)

// objects is a content-addressed store: each content once, named by its
// SHA-256, under dir (0700, files 0600). A content is a loose file,
// written aside and renamed into place; the many contents of a first scan
// go into one pack instead (a file of contents end to end, and its index,
// written last), because creating 50,000 files costs far more than
// writing one. Objects are not synced one by one, so after a crash of the
// machine itself one may be torn: get checks every object against its
// name and refuses one that does not match.
type objects struct {
	dir   string
	packs map[string]packRef // the packed objects, by hash
	pack  *packWriter        // the pack being written (batch), if any
}

// packRef is where a packed object is.
type packRef struct {
	pack      string // the pack's file name
	off, size int64
}

// packWriter gathers a batch's new objects into one pack.
type packWriter struct {
	name  string
	f     *os.File
	off   int64
	index map[string][2]int64
}

func newObjects(dir string) objects {
	o := objects{dir: dir, packs: map[string]packRef{}}
	entries, _ := os.ReadDir(filepath.Join(dir, "packs"))
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok {
			continue
		}
		var idx map[string][2]int64
		if readJSON(filepath.Join(dir, "packs", e.Name()), &idx) != nil {
			continue
		}
		for h, r := range idx {
			o.packs[h] = packRef{pack: name + ".pack", off: r[0], size: r[1]}
		}
	}
	// A pack without its index is a batch a crash cut short.
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".pack"); ok {
			if _, err := os.Stat(filepath.Join(dir, "packs", name+".idx")); err != nil {
				os.Remove(filepath.Join(dir, "packs", e.Name()))
			}
		}
	}
	return o
}

func (o *objects) path(hash string) string {
	return filepath.Join(o.dir, hash[:2], hash[2:])
}

// has says whether hash is stored.
func (o *objects) has(hash string) bool {
	if _, ok := o.packs[hash]; ok {
		return true
	}
	if o.pack != nil {
		if _, ok := o.pack.index[hash]; ok {
			return true
		}
	}
	_, err := os.Lstat(o.path(hash))
	return err == nil
}

// put stores b and returns its hash.
func (o *objects) put(b []byte) (string, error) {
	hash := hashOf(b)
	if o.has(hash) {
		return hash, nil
	}
	if o.pack != nil {
		return hash, o.pack.add(hash, b)
	}
	return hash, o.write(hash, b)
}

// batch starts a pack: the objects put until done go into it.
func (o *objects) batch() error {
	dir := filepath.Join(o.dir, "packs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "pack-*.pack")
	if err != nil {
		return err
	}
	f.Chmod(0o600)
	o.pack = &packWriter{name: filepath.Base(f.Name()), f: f, index: map[string][2]int64{}}
	return nil
}

func (w *packWriter) add(hash string, b []byte) error {
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("checkpoint: store object: %w", err)
	}
	w.index[hash] = [2]int64{w.off, int64(len(b))}
	w.off += int64(len(b))
	return nil
}

// done ends the batch: the pack is closed and its index written, which
// makes its objects count.
func (o *objects) done() error {
	w := o.pack
	o.pack = nil
	if w == nil {
		return nil
	}
	err := w.f.Close()
	name := strings.TrimSuffix(w.name, ".pack")
	if len(w.index) == 0 {
		os.Remove(w.f.Name())
		return err
	}
	if err == nil {
		err = writeJSON(filepath.Join(o.dir, "packs", name+".idx"), w.index)
	}
	if err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("checkpoint: store objects: %w", err)
	}
	for h, r := range w.index {
		o.packs[h] = packRef{pack: w.name, off: r[0], size: r[1]}
	}
	return nil
}

func (o *objects) write(hash string, b []byte) error {
	dir := filepath.Dir(o.path(hash))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(o.path(hash), b, 0o600); err != nil {
		return fmt.Errorf("checkpoint: store object: %w", err)
	}
	return nil
}

// get reads a stored content, checked against its name.
func (o *objects) get(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("checkpoint: bad object name %q", hash)
	}
	var b []byte
	var err error
	if r, ok := o.packs[hash]; ok {
		b, err = readAt(filepath.Join(o.dir, "packs", r.pack), r.off, r.size)
	} else {
		b, err = os.ReadFile(o.path(hash))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: object %s is missing", hash[:12])
		}
	}
	if err != nil {
		return nil, err
	}
	if hashOf(b) != hash {
		return nil, fmt.Errorf("checkpoint: object %s is damaged (a crash of the machine?)", hash[:12])
	}
	return b, nil
}

func readAt(p string, off, size int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, off); err != nil && !(errors.Is(err, io.EOF) && size == 0) {
		return nil, err
	}
	return b, nil
}

// prune removes the loose objects keep does not name, and the packs none
// of whose objects it names.
func (o *objects) prune(keep map[string]bool) error {
	used := map[string]bool{}
	for h, r := range o.packs {
		if keep[h] {
			used[r.pack] = true
		}
	}
	for h, r := range o.packs {
		if !used[r.pack] {
			delete(o.packs, h)
			os.Remove(filepath.Join(o.dir, "packs", r.pack))
			os.Remove(filepath.Join(o.dir, "packs", strings.TrimSuffix(r.pack, ".pack")+".idx"))
		}
	}
	return filepath.WalkDir(o.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == "packs" {
				return filepath.SkipDir
			}
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
