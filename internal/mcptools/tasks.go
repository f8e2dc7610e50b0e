package mcptools

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
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

// wireWatch reads what a connection's server sends as it passes: which
// of its tools need tasks, and the schemas of its latest questions as
// the server wrote them.
type wireWatch struct {
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
func (w *wireWatch) schema(message string) json.RawMessage {
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
func (w *wireWatch) question(b []byte) {
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
func (w *wireWatch) needsTasks(name string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.needs[name]
}

// line reads one line of what the server sent: a tools/list answer
// updates what is known of each tool it lists.
func (w *wireWatch) line(b []byte) {
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
func (w *wireWatch) reader(r io.ReadCloser) io.ReadCloser {
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
	w    *wireWatch
	next http.RoundTripper
}

func (b watchBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = b.w.reader(resp.Body)
	}
	return resp, err
}
