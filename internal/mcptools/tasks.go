package mcptools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Tools that need MCP tasks (execution.taskSupport "required") fail on
// every plain call, and the SDK we use neither runs tasks nor decodes a
// tool's execution field. So the daemon reads a server's tool lists as
// they pass on the wire (a stdio server's stdout, an HTTP server's
// response bodies, a JSON-RPC message a line, or an SSE data line) and
// hides those tools from the model; status names them and says why.
// The same watcher keeps the schemas of form questions as sent (below).

// needsTasksWhy is what status says of a hidden tool.
const needsTasksWhy = "it needs MCP tasks (execution.taskSupport \"required\"), which zeroclaw does not run yet"

// maxWatchedLine bounds what a watcher keeps of one line; a longer one
// (no tool list is that long) passes unread.
const maxWatchedLine = 8 << 20

// taskWatch keeps which tools of a connection need tasks, and the
// schemas of its latest questions as the server wrote them.
type taskWatch struct {
	mu    sync.Mutex
	needs map[string]bool
	// asked is the requested schema of the latest form questions
	// (elicitation/create), by message, oldest first: the SDK decodes a
	// schema into a map, which loses the order of its fields, and a form
	// is asked in the server's order.
	asked []askedSchema
}

type askedSchema struct {
	message string
	schema  json.RawMessage
}

// keptSchemas bounds the questions a watcher remembers.
const keptSchemas = 8

// schema is the requested schema, as sent, of the latest question with
// this message; nil when the watcher did not see it.
func (w *taskWatch) schema(message string) json.RawMessage {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.asked) - 1; i >= 0; i-- {
		if w.asked[i].message == message {
			return w.asked[i].schema
		}
	}
	return nil
}

// question keeps the schemas of form questions: a request
// (elicitation/create), or the input requests of a result (the
// multi round-trip questions of MCP 2026-07-28).
func (w *taskWatch) question(b []byte) {
	type ask struct {
		Method string `json:"method"`
		Params struct {
			Message string          `json:"message"`
			Schema  json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	var m struct {
		ask
		Result struct {
			InputRequests map[string]ask `json:"inputRequests"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range append([]ask{m.ask}, slices.Collect(maps.Values(m.Result.InputRequests))...) {
		if a.Method != "elicitation/create" || len(a.Params.Schema) == 0 {
			continue
		}
		if len(w.asked) == keptSchemas {
			w.asked = append(w.asked[:0], w.asked[1:]...)
		}
		w.asked = append(w.asked, askedSchema{a.Params.Message, a.Params.Schema})
	}
}

// needsTasks says whether the server said the tool needs tasks.
func (w *taskWatch) needsTasks(name string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.needs[name]
}

// line reads one line of what the server sent: a tools/list answer
// updates what is known of each tool it lists.
func (w *taskWatch) line(b []byte) {
	tools, asks := bytes.Contains(b, []byte(`"taskSupport"`)), bytes.Contains(b, []byte(`"elicitation/create"`))
	if !tools && !asks {
		return // the cheap test: most lines are neither
	}
	b = bytes.TrimSpace(b)
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("data:")))
	if asks {
		w.question(b)
	}
	if !tools {
		return
	}
	var m struct {
		Result struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.needs == nil {
		w.needs = map[string]bool{}
	}
	for _, t := range m.Result.Tools {
		w.needs[t.Name] = t.Execution.TaskSupport == "required"
	}
}

// reader passes r through, showing each line to the watcher.
func (w *taskWatch) reader(r io.ReadCloser) io.ReadCloser {
	return &lineTap{r: r, on: w.line}
}

// lineTap passes a stream through, calling on with each whole line.
type lineTap struct {
	r    io.ReadCloser
	on   func([]byte)
	line []byte
	long bool // the line is past maxWatchedLine: not kept
}

func (t *lineTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			t.keep(chunk)
			break
		}
		t.keep(chunk[:i])
		t.end()
		chunk = chunk[i+1:]
	}
	if err != nil {
		t.end() // a last line without its newline
	}
	return n, err
}

func (t *lineTap) keep(b []byte) {
	if t.long {
		return
	}
	if len(t.line)+len(b) > maxWatchedLine {
		t.line, t.long = t.line[:0], true
		return
	}
	t.line = append(t.line, b...)
}

func (t *lineTap) end() {
	if !t.long && len(t.line) > 0 {
		t.on(t.line)
	}
	t.line, t.long = t.line[:0], false
	if cap(t.line) > 64<<10 {
		t.line = nil // a long line's buffer is not kept for the short ones
	}
}

func (t *lineTap) Close() error { return t.r.Close() }

// watchBodies shows an HTTP server's response bodies to the watcher.
type watchBodies struct {
	w    *taskWatch
	next http.RoundTripper
}

func (b watchBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = b.w.reader(resp.Body)
	}
	return resp, err
}

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
				j.skip(string(j.drop))
				return 0, err
			}
			if b == '\n' {
				j.skip(strings.TrimRight(string(j.drop), "\r"))
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
