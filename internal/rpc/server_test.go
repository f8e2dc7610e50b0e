package rpc

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/sandbox"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	sandbox.ShimMain()
	goleak.VerifyTestMain(m)
}

// peer is the client end of a connection served by ServeConn over a pipe.
type peer struct {
	t       *testing.T
	nc      net.Conn
	br      *bufio.Reader
	lastLen int // bytes of the last answer's frame
}

func serve(t *testing.T, tune func(*Options)) *peer {
	t.Helper()
	return servePeer(t, Peer{Label: "test", UID: 0}, tune)
}

// call sends a request and returns its answer, skipping notifications.
func (p *peer) call(frame string) map[string]any {
	p.t.Helper()
	go p.nc.Write([]byte(frame + "\n"))
	for {
		p.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := p.br.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("answer to %.60s: %v", frame, err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			p.t.Fatalf("invalid JSON: %v", err)
		}
		if _, ok := m["id"]; ok {
			p.lastLen = len(line) - 1
			return m
		}
	}
}

func result(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %v", m)
	}
	return r
}

func errorOf(m map[string]any) (float64, string, string) {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	data, _ := e["data"].(map[string]any)
	kind, _ := data["kind"].(string)
	return code, msg, kind
}

func TestInitializeNegotiatesTheFrameLimit(t *testing.T) {
	p := serve(t, nil)
	r := result(t, p.call(`{"jsonrpc":"2.0","method":"initialize","params":{"clientCapabilities":{"maxFrameBytes":1000}},"id":1}`))
	if r["maxFrameBytes"].(float64) != 8<<20 {
		t.Fatalf("initialize: %v", r)
	}
	// A client that announced less than 64 KiB is sent at most 64 KiB:
	// a history page is at most half of that.
	result(t, p.call(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"s","cwd":"/"},"id":2}`))
	result(t, p.call(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":"/chunks 3000"},"id":3}`))
	h := result(t, p.call(`{"jsonrpc":"2.0","method":"session/history","params":{"sessionId":"s"},"id":4}`))
	if n := len(h["events"].([]any)); n == 0 || p.lastLen > 32<<10 || h["more"] != true {
		t.Fatalf("history page: %d events, %d bytes, more %v", n, p.lastLen, h["more"])
	}
}

// The one table: errors of the layers below reach the wire with their
// code and kind.
func TestErrorsReachTheWireWithCodeAndKind(t *testing.T) {
	p := serve(t, nil)
	if code, _, kind := errorOf(p.call(`{"jsonrpc":"2.0","method":"status","id":0}`)); code != -32010 || kind != "not_initialized" {
		t.Fatalf("before initialize: %v %v", code, kind)
	}
	result(t, p.call(`{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}`))
	for _, c := range []struct {
		frame, kind string
		code        float64
	}{
		{`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"nope","prompt":"x"},"id":2}`, "session_not_found", -32000},
		{`{"jsonrpc":"2.0","method":"session/new","params":{"mode":"poetry"},"id":3}`, "invalid_params", -32602},
		{`{"jsonrpc":"2.0","method":"session/event","params":{"sessionId":"nope","seq":1},"id":4}`, "session_not_found", -32000},
		{`{"jsonrpc":"2.0","method":"shutdown","id":5}`, "", 0},
	} {
		code, msg, kind := errorOf(p.call(c.frame))
		if code != c.code || kind != c.kind {
			t.Errorf("%.60s: %v %q %q, want %v %q", c.frame, code, kind, msg, c.code, c.kind)
		}
	}
}

// file/upload takes a file in parts and stores it as an attachment; an
// unknown upload id, bad base64 and a fifth open upload are refused.
func TestFileUploadInParts(t *testing.T) {
	p := serve(t, nil)
	result(t, p.call(`{"jsonrpc":"2.0","method":"initialize","params":{},"id":1}`))
	data := strings.Repeat("part of a file\n", 10000)
	var id string
	for off := 0; off < len(data); off += 40000 {
		end := min(off+40000, len(data))
		params := map[string]any{"dataB64": base64.StdEncoding.EncodeToString([]byte(data[off:end])), "final": end == len(data), "filename": "f.txt"}
		if id != "" {
			params["uploadId"] = id
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "file/upload", "params": params, "id": 2})
		r := result(t, p.call(string(b)))
		id = r["uploadId"].(string)
		if r["receivedBytes"].(float64) != float64(end) {
			t.Fatalf("received %v, want %d", r["receivedBytes"], end)
		}
		if end == len(data) {
			f := r["file"].(map[string]any)
			if f["sizeBytes"].(float64) != float64(len(data)) || !strings.HasPrefix(f["refId"].(string), "sha256:") {
				t.Fatalf("stored file %v", f)
			}
		}
	}
	if code, _, _ := errorOf(p.call(`{"jsonrpc":"2.0","method":"file/upload","params":{"uploadId":"up_nope","dataB64":""},"id":3}`)); code != -32602 {
		t.Errorf("unknown upload: %v", code)
	}
	if code, _, _ := errorOf(p.call(`{"jsonrpc":"2.0","method":"file/upload","params":{"dataB64":"!!"},"id":4}`)); code != -32602 {
		t.Errorf("bad base64: %v", code)
	}
	for i := range 4 {
		result(t, p.call(`{"jsonrpc":"2.0","method":"file/upload","params":{"dataB64":"QQ=="},"id":5}`))
		_ = i
	}
	if code, msg, _ := errorOf(p.call(`{"jsonrpc":"2.0","method":"file/upload","params":{"dataB64":"QQ=="},"id":6}`)); code != -32602 || !strings.Contains(msg, "open already") {
		t.Errorf("fifth open upload: %v %q", code, msg)
	}
}

// A result bigger than the client's limit is cut to fit, with a marker.
func TestOversizedResultIsCut(t *testing.T) {
	p := serve(t, nil)
	result(t, p.call(`{"jsonrpc":"2.0","method":"initialize","params":{"clientCapabilities":{"maxFrameBytes":65536}},"id":1}`))
	result(t, p.call(`{"jsonrpc":"2.0","method":"session/new","params":{"sessionId":"s","cwd":"/"},"id":2}`))
	prompt := strings.Repeat("<word> ", 20000) // echoed: a 160 KB answer
	b, _ := json.Marshal(prompt)
	r := result(t, p.call(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":`+string(b)+`},"id":3}`))
	if p.lastLen > 65536 || r["cut"] == nil || !strings.HasPrefix(r["content"].(string), "echo: <word> <word>") {
		t.Fatalf("answer of %d bytes, cut %v", p.lastLen, r["cut"])
	}
}
