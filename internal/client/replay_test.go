package client_test

import (
	"context"
	"encoding/json"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/protocol/prototest"
)

// Replay hands on every event type of protocol.Events as its own Go
// type with every member, a type this build does not know as an
// UnknownEvent, and a stored event that does not decode as an
// UndecodableEvent (type, members as stored, why), in order, and goes on
// past it to the end, across pages.
func TestReplayHandsOnEveryEvent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	samples := prototest.Samples()
	var stored []json.RawMessage
	for i, ev := range samples {
		stored = append(stored, prototest.Update("s", int64(i+1), ev))
	}
	n := int64(len(stored))
	stored = append(stored,
		json.RawMessage(`{"sessionId":"s","seq":`+jsonInt(n+1)+`,"type":"tool_call","name":{"not":"a string"}}`),
		json.RawMessage(`{"sessionId":"s","seq":`+jsonInt(n+2)+`,"type":"from_the_future","x":1}`),
		prototest.Update("s", n+3, protocol.AgentMessageChunkEvent{Text: "after them"}))
	// The daemon: session/history, three events a page.
	a, b := net.Pipe()
	d := client.New(b, jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		var p protocol.SessionHistoryParams
		json.Unmarshal(r.Params, &p)
		end := min(p.SinceSeq+3, int64(len(stored)))
		return protocol.SessionHistoryResult{Events: stored[p.SinceSeq:end], More: end < int64(len(stored))}, nil
	}))
	defer d.Close()
	c := client.New(a, nil)
	defer c.Close()
	var got []protocol.SessionUpdate
	last, err := c.Replay(ctx, "s", 0, 0, func(_ json.RawMessage, u protocol.SessionUpdate) error {
		got = append(got, u)
		return nil
	})
	if err != nil || last != n+3 || len(got) != len(stored) {
		t.Fatalf("replay: last %d, %d events, %v; want %d, %d", last, len(got), err, n+3, len(stored))
	}
	for i, ev := range samples {
		if !reflect.DeepEqual(got[i].Event, ev) {
			t.Errorf("%s: handed on as\n%#v\nwant\n%#v", ev.EventType(), got[i].Event, ev)
		}
	}
	if x, ok := got[n].Event.(protocol.UndecodableEvent); !ok || x.Type != protocol.EventToolCall || got[n].Seq != n+1 || string(x.Fields) != string(stored[n]) || x.Err == "" {
		t.Errorf("the undecodable event: %#v", got[n])
	}
	if x, ok := got[n+1].Event.(protocol.UnknownEvent); !ok || x.Type != "from_the_future" {
		t.Errorf("the unknown event: %#v", got[n+1])
	}
	if x, ok := got[n+2].Event.(protocol.AgentMessageChunkEvent); !ok || x.Text != "after them" {
		t.Errorf("the event after them: %#v", got[n+2])
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }
