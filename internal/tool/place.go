package tool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// place is where a file tool's paths lead. Confined, it is an os.Root
// opened on the session directory: every open, stat and rename is
// resolved by the kernel relative to that directory, and no path, ".."
// or symlink (however it changes meanwhile) can leave it. Unconfined (risk
// "full"), it is the file system, relative paths starting at the session
// directory.
type place struct {
	root *os.Root // nil when unconfined
	cwd  string
}

// openPlace opens the session directory for one tool call; close it after.
func openPlace(env *Env) (*place, error) {
	if !env.Confine {
		return &place{cwd: env.Cwd}, nil
	}
	r, err := os.OpenRoot(env.Cwd)
	if err != nil {
		return nil, fmt.Errorf("session directory: %v", err)
	}
	return &place{root: r, cwd: env.Cwd}, nil
}

// abs is the absolute path of a name in the place.
func (p *place) abs(name string) string {
	if p.root == nil || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(p.cwd, name)
}

func (p *place) close() {
	if p.root != nil {
		p.root.Close()
	}
}

// errOutside is a path that leads out of the session directory.
type errOutside struct{ path, cwd string }

func (e *errOutside) Error() string {
	return fmt.Sprintf("path %q is outside the session directory %s", e.path, e.cwd)
}

// name turns a tool's path argument into a name in the place: relative to
// the root when confined (an absolute path must lie inside the session
// directory), absolute otherwise.
func (p *place) name(arg string) (string, error) {
	if arg == "" {
		arg = "."
	}
	if p.root == nil {
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(p.cwd, arg)
		}
		return filepath.Clean(arg), nil
	}
	rel := arg
	if filepath.IsAbs(arg) {
		r, err := filepath.Rel(p.cwd, filepath.Clean(arg))
		if err != nil {
			return "", &errOutside{arg, p.cwd}
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &errOutside{arg, p.cwd}
	}
	return rel, nil
}

// explain turns a refusal of the root into the tool's words: a path that
// escapes through a symlink is "outside the session directory".
func (p *place) explain(arg string, err error) error {
	if p.root != nil && err != nil && strings.Contains(err.Error(), "escapes") {
		return &errOutside{arg, p.cwd}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && p.root != nil {
		return fmt.Errorf("%s: %v", arg, pe.Err)
	}
	return err
}

func (p *place) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if p.root != nil {
		return p.root.OpenFile(name, flag, perm)
	}
	return os.OpenFile(name, flag, perm)
}

func (p *place) lstat(name string) (os.FileInfo, error) {
	if p.root != nil {
		return p.root.Lstat(name)
	}
	return os.Lstat(name)
}

func (p *place) stat(name string) (os.FileInfo, error) {
	if p.root != nil {
		return p.root.Stat(name)
	}
	return os.Stat(name)
}

func (p *place) readlink(name string) (string, error) {
	if p.root != nil {
		return p.root.Readlink(name)
	}
	return os.Readlink(name)
}

func (p *place) mkdirAll(name string) error {
	if p.root != nil {
		return p.root.MkdirAll(name, 0o755)
	}
	return os.MkdirAll(name, 0o755)
}

func (p *place) rename(from, to string) error {
	if p.root != nil {
		return p.root.Rename(from, to)
	}
	return os.Rename(from, to)
}

func (p *place) remove(name string) {
	if p.root != nil {
		p.root.Remove(name)
		return
	}
	os.Remove(name)
}

// fsys is the place as an fs.FS for walking, and the walk's start in it.
func (p *place) fsys(name string) (fs.FS, string) {
	if p.root != nil {
		return p.root.FS(), filepath.ToSlash(name)
	}
	return os.DirFS(name), "."
}

// join names an entry found by walking from start (fs path) in the place.
func (p *place) join(start, walked string) string {
	if p.root != nil {
		return filepath.FromSlash(walked)
	}
	return filepath.Join(start, filepath.FromSlash(walked))
}

// openRegular opens a file for reading without blocking on it (a FIFO or
// device would hang the read) and refuses anything but a regular file,
// before reading a byte of it.
func (p *place) openRegular(name string) (*os.File, os.FileInfo, error) {
	f, err := p.openFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, fi, errIsDir
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	return f, fi, nil
}

var errIsDir = errors.New("is a directory")

// target follows a chain of symlinks at name (each resolved inside the
// place), so a write through a link writes the file it points to instead
// of replacing the link. A name that does not exist yet is its own target.
func (p *place) target(name string) (string, error) {
	for range 40 {
		fi, err := p.lstat(name)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return name, nil
		}
		link, err := p.readlink(name)
		if err != nil {
			return "", err
		}
		if p.root == nil {
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(name), link)
			}
			name = filepath.Clean(link)
			continue
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(p.cwd, filepath.Dir(name), link)
		}
		if name, err = p.name(link); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", name)
}

// readAll reads at most max bytes of f in pieces, stopping when ctx ends;
// it returns what it read and whether the file holds more.
func readAll(ctx context.Context, f *os.File, max int) ([]byte, bool, error) {
	buf := make([]byte, 0, min(max+1, 64<<10))
	for len(buf) <= max {
		if err := ctx.Err(); err != nil {
			return buf, false, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), max+1)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
	return buf[:max], true, nil
}
