package acp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/protocol/prototest"
)

// The bridge passes every event type of protocol.Events on to the editor
// (a session/update, a permission request, a background process's tool
// call) or names it in forwardLeavesOut (and then sends nothing): a new
// event type with neither fails here.
func TestForwardShowsOrLeavesOutEveryEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The editor: every frame it is sent, in order; a permission request
	// is answered cancelled.
	got := make(chan string, 256)
	ea, eb := net.Pipe()
	editor := jsonrpc.NewConn(eb, jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		got <- r.Method
		if r.Method == "session/request_permission" {
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
		}
		return nil, nil
	}), jsonrpc.Options{})
	go editor.Run(ctx)
	// The daemon answers every call with {}; an approval's answer is
	// told, so that the bridge's goroutine that sends it is done with
	// the connection before the test closes it.
	approved := make(chan struct{}, 8)
	da, db := net.Pipe()
	daemon := client.New(db, jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method == protocol.MethodSessionApprove {
			approved <- struct{}{}
		}
		return struct{}{}, nil
	}))
	d := client.New(da, nil)
	defer d.Close()
	defer daemon.Close()
	b := &Bridge{log: slog.New(slog.DiscardHandler), d: d, live: map[string]bool{"s": true}, on: map[string]*client.Client{}, seen: map[string]int64{},
		approvals: map[string]string{}, runs: map[string]string{}, shells: map[string]string{}, calls: map[string]toolCall{}}
	b.acp = jsonrpc.NewConn(ea, jsonrpc.HandlerFunc(b.handle), jsonrpc.Options{})
	go b.acp.Run(ctx)
	defer b.acp.Close()

	// sent is what the editor was sent for one event: the frames before
	// a marker sent after it, and, for what the bridge sends from a
	// goroutine of its own (a permission asked, a process followed),
	// until it has async frames.
	sent := func(async int) []string {
		b.acp.Notify("test/marker", nil)
		var frames []string
		for {
			select {
			case m := <-got:
				if m != "test/marker" {
					frames = append(frames, m)
					continue
				}
				for len(frames) < async {
					select {
					case m := <-got:
						frames = append(frames, m)
					case <-ctx.Done():
						return frames
					}
				}
				return frames
			case <-ctx.Done():
				t.Fatal("the marker never came")
			}
		}
	}
	seq := int64(0)
	forward := func(ev protocol.EventBody) {
		seq++
		b.forward(prototest.Parsed("s", seq, ev), false)
	}
	for _, ev := range prototest.Samples() {
		typ := ev.EventType()
		switch e := ev.(type) {
		case protocol.ApprovalResolvedEvent:
			e.Decision = protocol.DecisionAllowOnce // an allowed call goes on
			ev = e
		case protocol.ToolProgressEvent:
			// A task's progress, the one ACP has a place for.
			forward(protocol.ToolCallEvent{ToolCallID: e.ToolCallID, Name: "task", Kind: protocol.KindThink})
			sent(0)
		}
		forward(ev)
		leftOut := slices.Contains(forwardLeavesOut, typ)
		async := 0
		switch {
		case leftOut:
		case typ == protocol.EventApprovalRequest:
			async = 1 // the permission asked
		case typ == protocol.EventProcessUpdate:
			async = 2 // a process that ended before: its call opened and ended
		}
		shown := len(sent(async)) > 0
		if typ == protocol.EventApprovalRequest {
			select {
			case <-approved:
			case <-ctx.Done():
				t.Fatal("the bridge never answered the daemon's approval request")
			}
		}
		switch {
		case leftOut && shown:
			t.Errorf("%s: named as left out, yet sent to the editor", typ)
		case !leftOut && !shown:
			t.Errorf("%s: the bridge neither passes it on nor names it in forwardLeavesOut", typ)
		}
	}
	for _, typ := range forwardLeavesOut {
		if !slices.Contains(protocol.EventTypes, typ) {
			t.Errorf("forwardLeavesOut names %q, not an event type", typ)
		}
	}
	// An event that does not decode is passed over, and the next one sent.
	u, _ := protocol.ParseUpdate(json.RawMessage(`{"sessionId":"s","seq":100,"type":"plan","entries":"not a list"}`))
	b.forward(u, false)
	if f := sent(0); len(f) != 0 {
		t.Errorf("an undecodable event: the editor was sent %v", f)
	}
}
