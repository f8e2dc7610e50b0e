package mcptools

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// Tools that need MCP tasks (execution.taskSupport "required") fail on
// every plain call, and the SDK we use neither runs tasks nor decodes a
// tool's execution field. So the daemon reads a server's tool lists as
// they pass on the wire (a stdio server's stdout, an HTTP server's
// response bodies, a JSON-RPC message a line, or an SSE data line) and
// hides those tools from the model; status names them and says why.

// needsTasksWhy is what status says of a hidden tool.
const needsTasksWhy = "it needs MCP tasks (execution.taskSupport \"required\"), which zeroclaw does not run yet"

// maxWatchedLine bounds what a watcher keeps of one line; a longer one
// (no tool list is that long) passes unread.
const maxWatchedLine = 8 << 20

// taskWatch keeps which tools of a connection need tasks.
type taskWatch struct {
	mu    sync.Mutex
	needs map[string]bool
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
	if !bytes.Contains(b, []byte(`"taskSupport"`)) {
		return // the cheap test: most lines are not tool lists
	}
	b = bytes.TrimSpace(b)
	b = bytes.TrimSpace(bytes.TrimPrefix(b, []byte("data:")))
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
