package clientcalls

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// peer is the client's side: it answers each request as an editor would
// (through JSON, as the wire carries them), and keeps what it was sent.
type peer struct {
	calls    []string
	notes    []string
	answer   map[string]any
	fail     error
	caughtUp int
}

func (p *peer) Call(ctx context.Context, method string, params, result any) error {
	b, _ := json.Marshal(params)
	p.calls = append(p.calls, method+" "+string(b))
	if p.fail != nil {
		return p.fail
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if a, ok := p.answer[method]; ok && result != nil {
		b, _ := json.Marshal(a)
		return json.Unmarshal(b, result)
	}
	return nil
}

func (p *peer) Notify(method string, params any) error {
	p.notes = append(p.notes, method)
	return nil
}

func (p *peer) to() To {
	return To{Conn: p, SessionID: "s1", CaughtUp: func(context.Context) error { p.caughtUp++; return nil }}
}

func TestElicitorAsksTheClient(t *testing.T) {
	p := &peer{answer: map[string]any{protocol.MethodElicitationCreate: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}
	ask := p.to().Elicitor(false)
	a, err := ask(context.Background(), tool.Elicitation{Message: "name?"})
	if err != nil || a.Action != "accept" || string(a.Content) != `{"name":"Ada"}` || p.caughtUp != 1 {
		t.Fatalf("form: %+v %v (caught up %d)", a, err, p.caughtUp)
	}
	// A URL question to a client that cannot send the user anywhere is
	// declined without asking it.
	if a, err := ask(context.Background(), tool.Elicitation{Message: "log in", URL: "https://example.com"}); err != nil || a.Action != "decline" || len(p.calls) != 1 {
		t.Fatalf("url to a form-only client: %+v %v %v", a, err, p.calls)
	}
	p.answer[protocol.MethodElicitationCreate] = nil // "result": null
	if a, err := p.to().Elicitor(true)(context.Background(), tool.Elicitation{Message: "log in", URL: "https://example.com", ID: "e1"}); err != nil || a.Action != "decline" {
		t.Fatalf("a null answer: %+v %v", a, err)
	}
	if last := p.calls[len(p.calls)-1]; !json.Valid([]byte(last[len(protocol.MethodElicitationCreate)+1:])) {
		t.Fatalf("sent %q", last)
	}
	p.fail = errors.New("gone")
	if _, err := ask(context.Background(), tool.Elicitation{Message: "x"}); err == nil {
		t.Fatal("a failed call answered")
	}
}

func TestFSReadsAndWritesThroughTheClient(t *testing.T) {
	p := &peer{answer: map[string]any{protocol.MethodFSReadTextFile: map[string]any{"content": "unsaved"}}}
	if p.to().FS(false, false) != nil {
		t.Fatal("an fs for a client that does neither")
	}
	fs := p.to().FS(true, true)
	if got, err := fs.Read(context.Background(), "/a"); err != nil || got != "unsaved" {
		t.Fatalf("read: %q %v", got, err)
	}
	if err := fs.Write(context.Background(), "/a", "new"); err != nil || len(p.calls) != 2 || p.caughtUp != 2 {
		t.Fatalf("write: %v %v", err, p.calls)
	}
	if ro := p.to().FS(true, false); ro.Write != nil || ro.Read == nil {
		t.Fatal("a read-only client's fs writes")
	}
	stop := errors.New("not caught up")
	to := To{Conn: p, SessionID: "s1", CaughtUp: func(context.Context) error { return stop }}
	if _, err := to.FS(true, true).Read(context.Background(), "/a"); err != stop {
		t.Fatalf("read before the events: %v", err)
	}
	if err := to.FS(true, true).Write(context.Background(), "/a", "x"); err != stop {
		t.Fatalf("write before the events: %v", err)
	}
}

func TestTerminalRunsInTheClient(t *testing.T) {
	code := 3
	p := &peer{answer: map[string]any{protocol.MethodTerminalRun: map[string]any{"output": "hi\n", "exitCode": code}}}
	out, err := p.to().Terminal()(context.Background(), tool.TerminalRun{Command: "echo hi", Timeout: 5})
	if err != nil || out.Output != "hi\n" || out.ExitCode == nil || *out.ExitCode != 3 || len(p.notes) != 0 {
		t.Fatalf("run: %+v %v %v", out, err, p.notes)
	}
	// A cancelled turn tells the client to stop the command.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.to().Terminal()(ctx, tool.TerminalRun{Command: "sleep 9", Timeout: 5}); err == nil || len(p.notes) != 1 || p.notes[0] != protocol.MethodTerminalCancel {
		t.Fatalf("cancelled: %v %v", err, p.notes)
	}
	stop := errors.New("not caught up")
	to := To{Conn: p, SessionID: "s1", CaughtUp: func(context.Context) error { return stop }}
	if _, err := to.Terminal()(context.Background(), tool.TerminalRun{}); err != stop {
		t.Fatalf("before the events: %v", err)
	}
}
