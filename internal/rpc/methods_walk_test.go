package rpc

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/goals"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/rewind"
	"github.com/zeroclaw/zeroclaw/internal/schema/schematest"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// servePeer is serve with the peer chosen (its uid; remote or not).
func servePeer(t *testing.T, p Peer, tune func(*Options)) *peer {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default(func(string) string { return "" })
	m, err := session.NewManager(session.Options{Config: cfg, Store: st, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Version: "test", Dirs: config.Dirs{DataDir: dir}, Config: cfg, Sessions: m, Goals: goals.New(m, st, nil), Checkpoints: rewind.New(m, st, nil)}
	if tune != nil {
		tune(&o)
	}
	srv := NewServer(o)
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() { defer close(done); srv.ServeConn(context.Background(), a, p) }()
	t.Cleanup(func() {
		b.Close()
		<-done
		srv.WaitPrompts(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Shutdown(ctx)
		st.Close()
	})
	return &peer{t: t, nc: b, br: bufio.NewReaderSize(b, 1<<20)}
}

// ask calls method with params and checks the result against the
// published schema; it returns the whole answer.
func (p *peer) ask(id int, method, params string) map[string]any {
	p.t.Helper()
	m := p.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	if r, ok := m["result"]; ok {
		b, _ := json.Marshal(r)
		schematest.Result(p.t, method, b)
	}
	return m
}

// Every method of the table, called as a client would, answers what the
// schema says; refusals reach the wire with their code and kind: an
// unknown session, the gateway's methods where no gateway keeps
// credentials, a reload where none is offered, and the owner's methods,
// path attachments and stdio MCP servers from a remote peer.
func TestEveryMethodAnswersItsSchema(t *testing.T) {
	stopped := make(chan struct{})
	p := servePeer(t, Peer{Label: "owner", UID: os.Geteuid()}, func(o *Options) { o.Shutdown = func() { close(stopped) } })
	result(t, p.ask(1, "initialize", `{"protocolVersion":1,"clientInfo":{"name":"walk","version":"1"},"clientCapabilities":{"elicitation":{"form":{}}}}`))
	if st := result(t, p.ask(2, "status", `{}`)); st["agents"] == nil || st["serverVersion"] != "test" {
		t.Errorf("status %v", st)
	}
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("A"), 0o644)
	ns := result(t, p.ask(3, "session/new", `{"sessionId":"walk","cwd":`+quoteJSON(cwd)+`}`))
	if ns["sessionId"] != "walk" {
		t.Fatalf("session/new %v", ns)
	}
	result(t, p.ask(4, "session/watch", `{}`))
	att := base64.StdEncoding.EncodeToString([]byte("notes"))
	files := result(t, p.ask(5, "file/attach", `{"files":[{"dataB64":"`+att+`","filename":"n.txt"}]}`))
	ref := files["files"].([]any)[0].(map[string]any)["refId"].(string)
	pr := result(t, p.ask(6, "session/prompt", `{"sessionId":"walk","prompt":"read\n/tool read_file {\"path\":\"a.txt\"}","attachments":[{"refId":"`+ref+`"}]}`))
	if pr["stopReason"] != protocol.StopEndTurn || !strings.Contains(pr["content"].(string), "tool read_file returned: A") {
		t.Errorf("prompt %v", pr)
	}
	for i, c := range []struct{ method, params string }{
		{"session/list", `{"query":"walk"}`},
		{"session/get", `{"sessionId":"walk"}`},
		{"session/rename", `{"sessionId":"walk","title":"walked"}`},
		{"session/history", `{"sessionId":"walk","limit":2}`},
		{"session/event", `{"sessionId":"walk","seq":1}`},
		{"session/configure", `{"sessionId":"walk","model":"echo","risk":"full"}`},
		{"models", `{}`},
		{"session/compact", `{"sessionId":"walk"}`},
		{"session/cancel", `{"sessionId":"walk"}`},
		{"session/approve", `{"sessionId":"walk","requestId":"apr_none","decision":"allow_once"}`},
		{"session/close", `{"sessionId":"walk"}`},
		{"session/delete", `{"sessionId":"walk"}`},
	} {
		result(t, p.ask(10+i, c.method, c.params))
	}
	for i, c := range []struct {
		method, params string
		code           float64
		kind           string
	}{
		{"session/get", `{"sessionId":"walk"}`, protocol.CodeSessionNotFound, "session_not_found"},
		{"session/rename", `{"sessionId":"walk","title":"x"}`, protocol.CodeSessionNotFound, "session_not_found"},
		{"session/cancel", `{}`, -32602, "invalid_params"},
		{"session/approve", `{"sessionId":"walk","requestId":"r","decision":"maybe"}`, -32602, "invalid_params"},
		{"gateway/pair", `{}`, -32603, ""},
		{"gateway/tokens", `{}`, -32603, ""},
		{"daemon/reload", `{}`, -32601, ""},
		{"no/such", `{}`, -32601, ""},
	} {
		code, msg, kind := errorOf(p.ask(40+i, c.method, c.params))
		if code != c.code || kind != c.kind {
			t.Errorf("%s %s: %v %q %q, want %v %q", c.method, c.params, code, kind, msg, c.code, c.kind)
		}
	}
	if r := result(t, p.ask(60, "shutdown", `{}`)); r["shuttingDown"] != true {
		t.Errorf("shutdown %v", r)
	}
	select { // the stop is asked once the answer is written
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Error("shutdown did not ask the daemon to stop")
	}

	// A gateway client: the owner's methods, paths on the daemon's
	// machine and commands to run there are refused.
	r := servePeer(t, Peer{Label: "ws:remote", UID: -1, Remote: true}, nil)
	if code, _, kind := errorOf(r.ask(1, "status", `{}`)); code != protocol.CodeNotInitialized || kind != "not_initialized" {
		t.Errorf("before initialize: %v %q", code, kind)
	}
	if code, _, kind := errorOf(r.ask(2, "initialize", `{"protocolVersion":2}`)); code != protocol.CodeVersionMismatch || kind != "version_mismatch" {
		t.Errorf("protocol 2: %v %q", code, kind)
	}
	result(t, r.ask(3, "initialize", `{"protocolVersion":1}`))
	for i, c := range []struct {
		method, params string
		code           float64
	}{
		{"shutdown", `{}`, protocol.CodeForbidden},
		{"daemon/reload", `{}`, protocol.CodeForbidden},
		{"gateway/pair", `{}`, protocol.CodeForbidden},
		{"gateway/revoke", `{"tokenId":"tok_x"}`, protocol.CodeForbidden},
		{"session/new", `{"mcpServers":[{"name":"x","command":"/bin/sh"}]}`, -32602},
		{"file/attach", `{"files":[{"path":"/etc/passwd"}]}`, -32602},
		{"session/prompt", `{"sessionId":"x","prompt":"hi","attachments":[{"path":"/etc/passwd"}]}`, -32602},
	} {
		if code, msg, _ := errorOf(r.ask(10+i, c.method, c.params)); code != c.code {
			t.Errorf("remote %s: %v %q, want %v", c.method, code, msg, c.code)
		}
	}
}

func quoteJSON(s string) string { b, _ := json.Marshal(s); return string(b) }
