package provider

import (
	"encoding/json"
	"sync/atomic"
)

// wire keeps what a transcript message was encoded to, per dialect. A
// message does not change once it is in a transcript, so each model call
// sends the bytes an earlier call made and encodes only what is new: the
// request of a session of 10,000 turns costs what writing its body must
// (docs/performance.md). A Transcript gives each message its own; copies
// of the message share it. Messages with images are encoded per call
// (their base64 is not kept in memory).
type wire struct {
	openai    atomic.Pointer[[]byte]
	anthropic atomic.Pointer[anEncoded]
}

// kept says whether m's encodings are kept.
func (m *Message) kept() bool { return m.wire != nil && len(m.Images) == 0 }

// withMessages writes head (a JSON object's members) with "messages"
// last, whose elements write appends (about size bytes of them), into one
// buffer made to measure.
func withMessages(head map[string]any, size int, write func(out []byte) []byte) ([]byte, error) {
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(h)+size+len(`,"messages":[]`)+8)
	out = append(out, h[:len(h)-1]...)
	if len(h) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"messages":[`...)
	out = write(out)
	return append(out, "]}"...), nil
}
