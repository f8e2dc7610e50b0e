package mcptools

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// jsonOnly passes a stdio server's stdout on a line at a time, less the
// lines that are not JSON-RPC (a stray print of the server's, a banner):
// those are logged (their start) and skipped, as the TypeScript SDK
// does, where the SDK's reader would end the connection on them.
type jsonOnly struct {
	r     *bufio.Reader
	c     io.Closer
	skip  func(start string)
	state int    // 0: at a line's start; 1: in a JSON line; 2: in a skipped line
	rest  []byte // of the JSON line read, not yet passed on
	drop  []byte

	mu    sync.Mutex
	start string // the first line skipped (its start)
}

// first is the start of the first line skipped, "" when none was.
func (j *jsonOnly) first() string {
	if j == nil {
		return ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.start
}

// skipped logs a line skipped and keeps the first.
func (j *jsonOnly) skipped(line string) {
	j.mu.Lock()
	if j.start == "" {
		j.start = line
	}
	j.mu.Unlock()
	j.skip(line)
}

func newJSONOnly(r io.ReadCloser, skip func(string)) *jsonOnly {
	return &jsonOnly{r: bufio.NewReaderSize(r, 64<<10), c: r, skip: skip}
}

// keptOfSkipped is how much of a skipped line the log shows.
const keptOfSkipped = 200

func (j *jsonOnly) Read(p []byte) (int, error) {
	for {
		switch j.state {
		case 0:
			b, err := j.r.ReadByte()
			if err != nil {
				return 0, err
			}
			switch {
			case b == '{' || b == '[':
				j.state = 1
				p[0] = b
				return 1, nil // the rest of the line follows
			case b == '\n' || b == '\r' || b == ' ' || b == '\t':
				continue // blank, or the space before a line's JSON
			default:
				j.state, j.drop = 2, append(j.drop[:0], b)
			}
		case 1:
			// The rest of the line, as the reader's buffer holds it (valid
			// until the next read of it, which waits until it is passed on).
			if len(j.rest) == 0 {
				var err error
				j.rest, err = j.r.ReadSlice('\n')
				if len(j.rest) == 0 {
					return 0, err
				}
			}
			n := copy(p, j.rest)
			j.rest = j.rest[n:]
			if len(j.rest) == 0 && p[n-1] == '\n' {
				j.state = 0
			}
			return n, nil
		case 2:
			b, err := j.r.ReadByte()
			if err != nil {
				j.skipped(string(j.drop))
				return 0, err
			}
			if b == '\n' {
				j.skipped(strings.TrimRight(string(j.drop), "\r"))
				j.state = 0
				continue
			}
			if len(j.drop) < keptOfSkipped {
				j.drop = append(j.drop, b)
			}
		}
	}
}

func (j *jsonOnly) Close() error { return j.c.Close() }
