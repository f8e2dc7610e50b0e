//go:build unix

package daemon

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A connection that never initializes is closed after the deadline.
func TestUninitializedConnectionIsClosed(t *testing.T) {
	r := startWith(t, echoAgent, func(o *Options) { o.InitTimeout = 200 * time.Millisecond })
	nc, err := net.Dial("unix", r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("read on an idle uninitialized connection: %v, want EOF", err)
	}
}

// An attachment path that is a FIFO is refused at once; the connection
// and the daemon go on serving (a FIFO once blocked the read loop, and
// thousands of them exhausted the daemon's threads).
func TestFIFOAttachmentIsRefusedAtOnce(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sid := newSession(t, a, "")
	for range 200 {
		m := a.call("file/attach", `{"files":[{"path":`+quote(fifo)+`}]}`)
		if errCode(m) != -32602 || !strings.Contains(m["error"].(map[string]any)["message"].(string), "not a regular file") {
			t.Fatalf("FIFO attachment: %v", m)
		}
	}
	m := a.call("session/prompt", `{"sessionId":`+quote(sid)+`,"prompt":"x","attachments":[{"path":`+quote(fifo)+`}]}`)
	if errCode(m) != -32602 {
		t.Fatalf("FIFO prompt attachment: %v", m)
	}
	if st := result(t, a.call("status", `{}`)); st["activeSessions"].(float64) != 1 {
		t.Fatalf("status: %v", st)
	}
}

// No frame exceeds what the client accepts: initialize says the daemon's
// limit; a client announcing a small one gets history pages within half
// of it, events cut with a marker, and reads a cut event whole with
// session/event.
func TestFramesFitTheClientsLimit(t *testing.T) {
	r := startWith(t, echoAgent+"risk = \"full\"\n")
	cwd := t.TempDir()
	big := strings.Repeat("0123456789<>&\n", 18000) // 252,000 bytes, read_file returns it whole
	os.WriteFile(filepath.Join(cwd, "big.txt"), []byte(big), 0o644)
	const limit = 100 << 10
	nc, err := net.Dial("unix", r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 1<<20)
	largest := 0
	read := func() map[string]any {
		t.Helper()
		nc.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(line)-1)
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	call := func(frame string) map[string]any {
		t.Helper()
		nc.Write([]byte(frame + "\n"))
		for {
			if m := read(); m["id"] != nil {
				return m
			}
		}
	}
	init := result(t, call(`{"jsonrpc":"2.0","method":"initialize","params":{"clientCapabilities":{"maxFrameBytes":102400}},"id":1}`))
	if init["maxFrameBytes"].(float64) != 8<<20 {
		t.Fatalf("initialize: %v", init)
	}
	result(t, call(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"big","cwd":`+quote(cwd)+`},"id":2}`))
	prompt := strings.Repeat("/tool read_file {\"path\":\"big.txt\"}\n", 4)
	res := result(t, call(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"big","prompt":`+quote(prompt)+`},"id":3}`))
	if res["stopReason"] != "end_turn" {
		t.Fatalf("turn: %v", res)
	}
	// History: pages of at most half the limit, every event there, the
	// tool results cut with a marker.
	var cut float64
	since := 0.0
	n := 0
	for {
		h := result(t, call(`{"jsonrpc":"2.0","method":"session/history","params":{"sessionId":"big","sinceSeq":`+ftoa(since)+`},"id":4}`))
		for _, e := range h["events"].([]any) {
			ev := e.(map[string]any)
			n++
			since = ev["seq"].(float64)
			if ev["type"] == "tool_result" && ev["cut"] != nil {
				cut = ev["seq"].(float64)
			}
		}
		if !h["more"].(bool) {
			if float64(n) != h["lastSeq"].(float64) {
				t.Fatalf("history gave %d events, lastSeq %v", n, h["lastSeq"])
			}
			break
		}
	}
	if largest > limit {
		t.Fatalf("a frame of %d bytes, over the client's %d", largest, limit)
	}
	if cut == 0 {
		t.Fatal("no tool_result was cut to fit")
	}
	// session/event gives the cut event whole.
	var whole []byte
	for off := 0.0; ; {
		p := result(t, call(`{"jsonrpc":"2.0","method":"session/event","params":{"sessionId":"big","seq":`+ftoa(cut)+`,"offset":`+ftoa(off)+`},"id":5}`))
		b, _ := base64.StdEncoding.DecodeString(p["dataB64"].(string))
		whole = append(whole, b...)
		off += float64(len(b))
		if !p["more"].(bool) {
			break
		}
	}
	var ev struct {
		RawOutput string `json:"rawOutput"`
	}
	if err := json.Unmarshal(whole, &ev); err != nil || ev.RawOutput != big {
		t.Fatalf("the whole event: %v, %d bytes of output", err, len(ev.RawOutput))
	}
	if largest > limit {
		t.Fatalf("a frame of %d bytes, over the client's %d", largest, limit)
	}
}

// A prompting client that never reads delays nothing: its queued second
// turn runs at once after the first, while the client is still connected
// (a turn's end once waited up to the stall timeout for the prompter's
// socket).
func TestPrompterThatNeverReadsDelaysNothing(t *testing.T) {
	r := startWith(t, echoAgent)
	b := connect(t, r.dirs.Endpoint, "")
	sid := newSession(t, b, "")
	stuck, err := net.Dial("unix", r.dirs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	stuck.Write([]byte(`{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":` + quote(sid) + `,"keep_siblings":true},"id":2}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":` + quote(sid) + `,"prompt":"/chunks 50000"},"id":3}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":` + quote(sid) + `,"prompt":"second"},"id":4}` + "\n"))
	// b sees both turns end while the stuck client is still attached.
	for done := 0; done < 2; {
		if b.until("turn_complete") != nil {
			done++
		}
	}
	st := result(t, b.call("status", `{}`))
	if n := st["sessions"].([]any)[0].(map[string]any)["clients"].(float64); n != 2 {
		t.Fatalf("when the second turn ended, %v clients were attached, want 2 (the stuck one still there)", n)
	}
	last := b.snapshot()
	if ev := last[len(last)-1]; ev["type"] != "turn_complete" || ev["content"] != "echo: second" {
		t.Fatalf("last event %v", ev)
	}
}
