package eventlog

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// encodeEvent builds the params of one session/update:
// {"sessionId":..,"seq":..,"type":..,"turnId":..,<fields>} (turnId only
// for a turn's events): the event's own members after the header.
func encodeEvent(quotedID []byte, seq int64, typ, turn string, ev protocol.EventBody) []byte {
	// A chunk's text is written straight into the body (the streaming
	// hot path: one allocation, no reflection); any other event's fields
	// are encoding/json's, spliced in.
	var text string
	var fields []byte
	switch e := ev.(type) {
	case protocol.AgentMessageChunkEvent:
		text = e.Text
	case protocol.AgentThoughtChunkEvent:
		text = e.Text
	default:
		fields = MustJSON(ev)
	}
	b := make([]byte, 0, len(quotedID)+len(typ)+len(turn)+len(fields)+len(text)+64)
	b = append(b, `{"sessionId":`...)
	b = append(b, quotedID...)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if turn != "" { // turn_<hex>: nothing to escape
		b = append(b, `,"turnId":"`...)
		b = append(b, turn...)
		b = append(b, '"')
	}
	if fields == nil {
		b = append(b, `,"text":`...)
		b = appendString(b, text)
		return append(b, '}')
	}
	if len(fields) > 2 { // more than "{}"
		b = append(b, ',')
		b = append(b, fields[1:]...)
		return b
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, as encoding/json would (less
// its HTML escaping, which a socket protocol does not need).
func appendString(b []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return append(b, MustJSON(s)...) // escapes, and replaces invalid UTF-8 with U+FFFD
}

// MustJSON encodes v as encoding/json does, less its HTML escaping,
// which would make each "<" six bytes on the wire and in the store: an
// event's fields, and the session's other stored bodies (its messages,
// its inputs). It panics when v cannot be encoded (every body is a type
// of ours: a bug).
func MustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("session: cannot encode event: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
