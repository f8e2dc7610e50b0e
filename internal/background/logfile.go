package background

import (
	"fmt"
	"os"
)

// DefaultLogBytes bounds a process's output on disk when the config does
// not ([tools] process_log_bytes).
const DefaultLogBytes = 64 << 20

// logFile is a process's output on disk, bounded: <id>.log holds the
// newest output and <id>.log.1 the half before it; when <id>.log would
// pass half the bound it becomes <id>.log.1 (the older half dropped)
// and a new <id>.log starts with a line saying how much was dropped in
// all. The two files never hold more than the bound (and that line).
type logFile struct {
	path    string
	limit   int64 // the bound for both files together
	f       *os.File
	size    int64 // what f holds
	dropped int64 // bytes of output no file holds any more
	held    int64 // what <id>.log.1 holds
}

func openLog(path string, limit int64) (*logFile, error) {
	if limit <= 0 {
		limit = DefaultLogBytes
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	os.Remove(path + ".1")
	return &logFile{path: path, limit: limit, f: f}, nil
}

// Write keeps p, dropping the oldest output when the bound is reached.
// It never fails: what cannot be written is dropped (a full disk stops
// no process), and the in-memory ring has it still.
func (l *logFile) Write(p []byte) (int, error) {
	n := len(p)
	half := l.limit / 2
	for len(p) > 0 {
		if l.f == nil {
			return n, nil
		}
		room := half - l.size
		if room <= 0 {
			l.rotate()
			continue
		}
		chunk := p[:min(int64(len(p)), room)]
		w, _ := l.f.Write(chunk)
		l.size += int64(w)
		if w < len(chunk) {
			l.dropped += int64(len(chunk) - w)
			l.size += int64(len(chunk) - w) // counted, so the next write rotates
		}
		p = p[len(chunk):]
	}
	return n, nil
}

// rotate makes the current file the older half and starts a new one.
func (l *logFile) rotate() {
	l.f.Close()
	l.dropped += l.held
	l.held = l.size
	os.Rename(l.path, l.path+".1")
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		l.f = nil
		return
	}
	l.f, l.size = f, 0
	if l.dropped > 0 {
		head := fmt.Sprintf("[zeroclaw: %d bytes of older output were dropped ([tools] process_log_bytes = %d); the output before this line is in %s.1]\n",
			l.dropped, l.limit, l.path)
		l.f.WriteString(head) // not output: it does not count against the bound
	} else {
		l.f.WriteString(fmt.Sprintf("[zeroclaw: the output before this line is in %s.1]\n", l.path))
	}
}

// Close closes the file.
func (l *logFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Name is the file's path.
func (l *logFile) Name() string { return l.path }
