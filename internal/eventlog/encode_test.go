package eventlog

import (
	"encoding/json"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// A body is what encoding/json would write, less its HTML escaping: the
// chunks' hand-written text as well as any other event's fields.
func TestEncodeEventIsJSONWithoutHTMLEscaping(t *testing.T) {
	q, _ := json.Marshal("s")
	for _, c := range []struct {
		ev   protocol.EventBody
		turn string
		want string
	}{
		{protocol.AgentMessageChunkEvent{Text: "plain"}, "", `{"sessionId":"s","seq":7,"type":"agent_message_chunk","text":"plain"}`},
		{protocol.AgentMessageChunkEvent{Text: "<a> & \"q\"\n\\"}, "turn_1", `{"sessionId":"s","seq":7,"type":"agent_message_chunk","turnId":"turn_1","text":"<a> & \"q\"\n\\"}`},
		{protocol.AgentThoughtChunkEvent{Text: "bad \xff utf-8, é"}, "", `{"sessionId":"s","seq":7,"type":"agent_thought_chunk","text":"bad \ufffd utf-8, é"}`},
		{protocol.UserMessageEvent{Text: "<b>"}, "", `{"sessionId":"s","seq":7,"type":"user_message","text":"<b>"}`},
		{protocol.TurnResumedEvent{}, "turn_2", `{"sessionId":"s","seq":7,"type":"turn_resumed","turnId":"turn_2","attempt":0}`},
	} {
		got := string(encodeEvent(q, 7, c.ev.EventType(), c.turn, c.ev))
		if got != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.ev, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%T: not JSON: %s", c.ev, got)
		}
	}
}

// What cannot be encoded is a bug of ours, and says so loudly.
func TestMustJSONPanicsOnWhatCannotBeEncoded(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a channel")
		}
	}()
	MustJSON(make(chan int))
}
