package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultMaxFrame is the largest frame accepted unless configured otherwise.
const DefaultMaxFrame = 8 << 20

// FrameTooLargeError is returned by a Reader whose peer sent a line longer
// than the limit. The connection cannot be resynchronised after it.
type FrameTooLargeError struct {
	Limit int
	// ended: the line's end was read with it, so nothing of it is left
	// to drop (dropping "the rest of the line" would take the next one).
	ended bool
}

func (e *FrameTooLargeError) Error() string { return fmt.Sprintf("frame exceeds %d bytes", e.Limit) }

// Reader reads NDJSON frames: one message per line, a trailing \r tolerated,
// blank lines skipped.
type Reader struct {
	br    *bufio.Reader
	max   int
	long  []byte // reused for lines longer than the bufio buffer
	fatal error
}

// NewReader returns a Reader of frames of at most max bytes (0: DefaultMaxFrame).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	// A small buffer keeps idle connections cheap; longer lines go to long.
	return &Reader{br: bufio.NewReaderSize(r, 4<<10), max: max}
}

// Read returns the next non-blank frame without its line ending. The slice
// is valid until the next call. At the end of the stream it returns io.EOF;
// a final line without "\n" is still returned first.
func (r *Reader) Read() ([]byte, error) {
	if r.fatal != nil {
		return nil, r.fatal
	}
	for {
		line, err := r.readLine()
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			r.fatal = err
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				r.fatal = err
				return nil, err
			}
			continue
		}
		if err != nil {
			r.fatal = err // deliver this last line now, EOF next time
		}
		return line, nil
	}
}

func (r *Reader) readLine() ([]byte, error) {
	if cap(r.long) > 1<<20 {
		r.long = nil // do not hold a huge frame's buffer for the connection's life
	}
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		line = line[:len(line)-1]
		if len(line) > r.max {
			return nil, &FrameTooLargeError{Limit: r.max, ended: true}
		}
		return line, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > r.max {
			return nil, &FrameTooLargeError{Limit: r.max}
		}
		return line, err
	}
	r.long = append(r.long[:0], line...)
	for {
		line, err = r.br.ReadSlice('\n')
		r.long = append(r.long, line...)
		// The "\n" itself does not count against the limit.
		if n := len(r.long); n > r.max+1 || (n == r.max+1 && r.long[n-1] != '\n') {
			return nil, &FrameTooLargeError{Limit: r.max, ended: err == nil}
		}
		switch {
		case err == nil:
			return r.long[:len(r.long)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return r.long, err
		}
	}
}

// discardLine reads and drops input up to the end of the current line,
// at most limit bytes and for at most d, after a frame was refused for
// its size: the sender's write of it can complete, so it gets to read the
// error.
func (r *Reader) discardLine(limit int, d time.Duration, src io.Reader) {
	if dl, ok := src.(interface{ SetReadDeadline(time.Time) error }); ok {
		dl.SetReadDeadline(time.Now().Add(d))
		defer dl.SetReadDeadline(time.Time{})
	}
	for n := 0; n < limit; {
		line, err := r.br.ReadSlice('\n')
		n += len(line)
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
