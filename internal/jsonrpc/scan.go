package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// The envelope scanner reads the top-level members of a frame that
// json.Valid has already accepted, without building a map: it records the
// raw value of the six member names the protocol knows (exact,
// case-sensitive, as JSON-RPC requires; encoding/json's struct decoding
// would fold case) and skips every other value. A repeated member keeps its
// last value, as encoding/json does.

type field uint8

const (
	fVersion field = 1 << iota
	fMethod
	fID
	fParams
	fResult
	fError
)

type envelope struct {
	seen                                     field
	version, method, id, params, result, err json.RawMessage
}

func (e *envelope) has(f field) bool { return e.seen&f != 0 }

// scanEnvelope scans a valid JSON object. It reports false when line is
// not an object.
func scanEnvelope(line []byte) (envelope, bool) {
	var env envelope
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return env, false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return env, true
	}
	for i < len(line) {
		kEnd := skipString(line, i)
		key := line[i:kEnd]
		i = skipSpace(line, kEnd)
		i = skipSpace(line, i+1) // the colon
		vEnd := skipValue(line, i)
		env.set(key, line[i:vEnd])
		i = skipSpace(line, vEnd)
		if i >= len(line) || line[i] == '}' {
			break
		}
		i = skipSpace(line, i+1) // the comma
	}
	return env, true
}

func (e *envelope) set(key, val []byte) {
	if len(key) < 2 || key[0] != '"' || key[len(key)-1] != '"' {
		return
	}
	name := key[1 : len(key)-1] // compared in place: no string made per member
	if bytes.IndexByte(name, '\\') >= 0 {
		s, ok := jsonString(key)
		if !ok {
			return
		}
		name = []byte(s)
	}
	var f field
	var dst *json.RawMessage
	switch string(name) {
	case "jsonrpc":
		f, dst = fVersion, &e.version
	case "method":
		f, dst = fMethod, &e.method
	case "id":
		f, dst = fID, &e.id
	case "params":
		f, dst = fParams, &e.params
	case "result":
		f, dst = fResult, &e.result
	case "error":
		f, dst = fError, &e.err
	default:
		return
	}
	e.seen |= f
	*dst = val
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
			i++
		}
		return i
	}
}
