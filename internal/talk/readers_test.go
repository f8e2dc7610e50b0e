package talk

import (
	"bufio"
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/protocol/prototest"
)

// fakeDaemon is a client whose daemon answers every call with {} and
// passes on the methods called.
func fakeDaemon(t *testing.T) (*client.Client, <-chan string) {
	a, b := net.Pipe()
	called := make(chan string, 64)
	d := client.New(b, jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		called <- r.Method
		return struct{}{}, nil
	}))
	c := client.New(a, nil)
	t.Cleanup(func() { c.Close(); d.Close() })
	return c, called
}

// The line renderer (zeroclaw prompt, the chat a line at a time,
// sessions show) shows every event type of protocol.Events (a line
// written, an approval asked, the turn's end seen) or names it in
// plainLeavesOut (and then writes nothing): a new event type with
// neither fails here.
func TestLineRendererShowsOrLeavesOutEveryEvent(t *testing.T) {
	c, called := fakeDaemon(t)
	var out strings.Builder
	r := &renderer{out: &out, errw: &out, format: "text", approve: "ask", c: c, sessionID: "s",
		answers: &plainLines{br: bufio.NewReader(strings.NewReader("n\n")), w: &out}}
	ctx := context.Background()
	for i, ev := range prototest.Samples() {
		typ := ev.EventType()
		if e, ok := ev.(protocol.ApprovalResolvedEvent); ok {
			e.By = "timeout" // the one resolution a line at a time says
			ev = e
		}
		before := out.String()
		complete := r.handle(ctx, event{update: prototest.Update("s", int64(i+1), ev)})
		shown := out.String() != before || complete
		if typ == protocol.EventApprovalRequest && (<-called) != protocol.MethodSessionApprove {
			t.Errorf("%s: asked, but not answered", typ)
		}
		leftOut := slices.Contains(plainLeavesOut, typ)
		switch {
		case leftOut && shown:
			t.Errorf("%s: named as left out, yet shown: %q", typ, strings.TrimPrefix(out.String(), before))
		case !leftOut && !shown:
			t.Errorf("%s: the line renderer neither shows it nor names it in plainLeavesOut", typ)
		}
	}
	checkNames(t, "plainLeavesOut", plainLeavesOut)

	// An event that does not decode is said, and the next one shown.
	out.Reset()
	r.handle(ctx, event{update: []byte(`{"sessionId":"s","seq":100,"type":"tool_call","name":{"a":1}}`)})
	r.handle(ctx, event{update: prototest.Update("s", 101, protocol.AgentMessageChunkEvent{Text: "after it"})})
	if got := out.String(); !strings.Contains(got, "(event 100 could not be read: tool_call (seq 100): json: cannot unmarshal") || !strings.HasSuffix(got, "after it") {
		t.Errorf("an undecodable event, then a reply: %q", got)
	}
}

// The full-screen chat shows every event type of protocol.Events (a line
// printed above the view, or the view changed: the queue, a tool's
// progress, the context in the footer) or names it in tuiLeavesOut (and
// then shows nothing); approval_request is asked through Approve.
func TestChatShowsOrLeavesOutEveryEvent(t *testing.T) {
	env, _, _ := (&harness{t: t}).env("")
	ch := newChat(env, ChatOptions{}, false)
	ch.ns = &protocol.SessionNewResult{SessionID: "s", AgentAlias: "default", Model: "echo"}
	m := &tui{ctx: context.Background(), ch: ch, ta: textarea.New(), spin: spinner.New(), width: 80, height: 40, out: newPrintQueue(), ready: true, busy: true}
	seen := func() string {
		m.out.mu.Lock()
		printed := strings.Join(m.out.lines, "\n")
		m.out.mu.Unlock()
		return printed + "\n--\n" + m.View()
	}
	asked := make(chan *approval, 1)
	r := &renderer{ui: fakeUI{asked}}
	for i, ev := range prototest.Samples() {
		typ := ev.EventType()
		u := prototest.Parsed("s", int64(i+1), ev)
		if typ == protocol.EventApprovalRequest {
			r.toUI(context.Background(), u)
			if a := <-asked; a.RequestID != "requestId" {
				t.Errorf("%s: asked %+v", typ, a)
			}
			continue
		}
		switch e := ev.(type) {
		case protocol.ApprovalResolvedEvent:
			// Said when it withdraws an ask still open here.
			m.asking = &asking{approval: &approval{RequestID: e.RequestID, ToolName: "shell"}, reply: make(chan [2]string, 1)}
		case protocol.TurnCompleteEvent:
			// Said for another client's turn that ended short.
			m.other, e.StopReason = "phone (cl_1)", "cancelled"
			u = prototest.Parsed("s", int64(i+1), e)
		}
		before := seen()
		m.event(u)
		shown := seen() != before
		leftOut := slices.Contains(tuiLeavesOut, typ)
		switch {
		case leftOut && shown:
			t.Errorf("%s: named as left out, yet shown", typ)
		case !leftOut && !shown:
			t.Errorf("%s: the chat neither shows it nor names it in tuiLeavesOut", typ)
		}
	}
	checkNames(t, "tuiLeavesOut", tuiLeavesOut)

	before := seen()
	m.event(protocol.SessionUpdate{EventHeader: protocol.EventHeader{SessionID: "s", Seq: 100, Type: "hook"},
		Event: protocol.UndecodableEvent{Type: "hook", Err: "hook (seq 100): json: cannot unmarshal object"}})
	if got := strings.TrimPrefix(seen(), before[:strings.Index(before, "\n--\n")]); !strings.Contains(got, "(event 100 could not be read: hook (seq 100): json: cannot unmarshal object)") {
		t.Errorf("an undecodable event in the chat: %q", got)
	}
}

// checkNames fails for a name in a reader's list that is not an event type.
func checkNames(t *testing.T, list string, names []string) {
	t.Helper()
	for _, typ := range names {
		if !slices.Contains(protocol.EventTypes, typ) {
			t.Errorf("%s names %q, not an event type", list, typ)
		}
	}
}

// fakeUI is a full-screen chat that passes on what it is asked.
type fakeUI struct{ asked chan *approval }

func (fakeUI) Event(update) {}
func (f fakeUI) Approve(a *approval) (string, string) {
	f.asked <- a
	return "", ""
}
func (fakeUI) Elicit(*protocol.ElicitationParams) protocol.ElicitationResult {
	return protocol.ElicitationResult{}
}
