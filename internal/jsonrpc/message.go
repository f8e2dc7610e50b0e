// Package jsonrpc is zeroclaw's NDJSON JSON-RPC 2.0 engine: a framer, the
// envelope classifier and a Conn that serves requests and sends its own in
// both directions. It knows nothing of the daemon's methods.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// ID is a request id exactly as it appeared on the wire: a JSON string,
// number or null. The zero ID (no bytes) means "no id": a notification.
type ID struct{ raw json.RawMessage }

// StringID returns the ID for the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: b}
}

// NullID is the JSON null id.
var NullID = ID{raw: json.RawMessage("null")}

// IsZero reports whether the ID is absent (a notification).
func (id ID) IsZero() bool { return len(id.raw) == 0 }

// Raw returns the id's JSON encoding, or null when absent.
func (id ID) Raw() json.RawMessage {
	if id.IsZero() {
		return NullID.raw
	}
	return id.raw
}

// String returns the id for logs.
func (id ID) String() string { return string(id.Raw()) }

// key returns a canonical form for matching responses against pending calls:
// two spellings of the same string id ("a" and "\u0061") match.
func (id ID) key() string {
	if len(id.raw) > 0 && id.raw[0] == '"' {
		var s string
		if json.Unmarshal(id.raw, &s) == nil {
			return "s:" + s
		}
	}
	return "r:" + string(id.raw)
}

// Request is an incoming request or notification.
type Request struct {
	ID     ID              // zero for a notification
	Method string          // the method name
	Params json.RawMessage // nil when absent; always an object or array otherwise
}

// IsNotification reports whether the request has no id.
func (r *Request) IsNotification() bool { return r.ID.IsZero() }

// Response is an incoming response to one of our own calls.
type Response struct {
	ID     ID
	Result json.RawMessage // set on success; the bytes "null" for a null result
	Error  *Error          // set on failure
}

// message is one classified incoming frame.
type message struct {
	req  *Request
	resp *Response
}

// verdict says what to do with a frame that is not a usable message.
type verdict struct {
	reply *Error // answer with this error, id replyID
	id    ID
	drop  string // or drop the frame, logging this reason (never the content)
}

// kindOf returns the first significant byte of a JSON value.
func kindOf(raw json.RawMessage) byte {
	if i := skipSpace(raw, 0); i < len(raw) {
		return raw[i]
	}
	return 0
}

func validID(raw json.RawMessage) bool {
	switch k := kindOf(raw); {
	case k == '"', k == '-', k >= '0' && k <= '9':
		return true
	case k == 'n':
		return true // null; json.Valid already vouched for the spelling
	}
	return false
}

func isJSONString(raw json.RawMessage, want string) bool {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		return string(raw[1:len(raw)-1]) == want // compared in place
	}
	s, ok := jsonString(raw)
	return ok && s == want
}

// jsonString decodes a JSON string value; the fast path takes strings
// without escapes as they are.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// classify applies the envelope rules of the protocol to one frame. The
// message it returns does not alias line, which the framer reuses.
func classify(line []byte) (message, *verdict) {
	if lspHeader(line) {
		return message{}, &verdict{reply: &Error{Code: CodeParseError, Message: "parse error: this endpoint speaks NDJSON (one JSON object per line), not LSP framing (Content-Length headers)"}}
	}
	if !validJSON(line) {
		var v any
		err := json.Unmarshal(line, &v)
		msg := "parse error"
		if err != nil {
			msg += ": " + err.Error()
		}
		return message{}, &verdict{reply: &Error{Code: CodeParseError, Message: msg}}
	}
	switch kindOf(line) {
	case '{':
	case '[':
		return message{}, invalid(ID{}, "batch arrays are not supported")
	default:
		return message{}, invalid(ID{}, "frame must be a JSON object")
	}
	// One copy serves every raw value the message keeps.
	env, ok := scanEnvelope(bytes.Clone(line))
	if !ok {
		return message{}, invalid(ID{}, "frame must be a JSON object")
	}
	switch {
	case env.has(fMethod) && kindOf(env.method) == '"' && !env.has(fResult) && !env.has(fError):
		return classifyRequest(&env)
	case !env.has(fMethod) && (env.has(fResult) || env.has(fError)):
		return classifyResponse(&env)
	case env.has(fMethod) && kindOf(env.method) != '"':
		return message{}, invalid(ID{}, "method must be a string")
	case env.has(fMethod):
		return message{}, invalid(ID{}, "a frame cannot have both method and result/error")
	default:
		return message{}, invalid(ID{}, "frame is neither a request nor a response")
	}
}

func invalid(id ID, rule string) *verdict {
	return &verdict{reply: &Error{Code: CodeInvalidRequest, Message: "invalid request: " + rule}, id: id}
}

func classifyRequest(env *envelope) (message, *verdict) {
	var id ID
	if env.has(fID) {
		if !validID(env.id) {
			return message{}, invalid(ID{}, "id must be a string, number or null")
		}
		id = ID{raw: env.id}
		if !utf8.Valid(env.id) {
			// Output is always valid UTF-8: the id is echoed with each
			// invalid byte as U+FFFD, as encoding/json decodes it.
			var s string
			json.Unmarshal(env.id, &s)
			id = StringID(s)
		}
	}
	if !env.has(fVersion) || !isJSONString(env.version, "2.0") {
		return message{}, invalid(id, `jsonrpc must be "2.0"`)
	}
	method, ok := jsonString(env.method)
	if !ok {
		return message{}, invalid(id, "method must be a string")
	}
	params := env.params
	if env.has(fParams) {
		switch kindOf(params) {
		case '{', '[':
		case 'n':
			return message{}, invalid(id, "params must be an object or array, not null")
		default:
			return message{}, invalid(id, "params must be an object or array")
		}
	}
	return message{req: &Request{ID: id, Method: method, Params: params}}, nil
}

func classifyResponse(env *envelope) (message, *verdict) {
	drop := func(reason string) (message, *verdict) { return message{}, &verdict{drop: reason} }
	if !env.has(fVersion) || !isJSONString(env.version, "2.0") {
		return drop(`response without jsonrpc "2.0"`)
	}
	if env.has(fResult) && env.has(fError) {
		return drop("response with both result and error")
	}
	if env.has(fParams) {
		return drop("response with params")
	}
	if !env.has(fID) {
		return drop("response without id")
	}
	if !validID(env.id) {
		return drop("response with an invalid id")
	}
	resp := &Response{ID: ID{raw: env.id}}
	if env.has(fResult) {
		resp.Result = env.result
	} else {
		e, err := decodeError(env.err)
		if err != nil {
			return drop("response with a malformed error: " + err.Error())
		}
		resp.Error = e
	}
	return message{resp: resp}, nil
}

// decodeError checks that raw is {code:int, message:string, data?}.
func decodeError(raw json.RawMessage) (*Error, error) {
	if kindOf(raw) != '{' {
		return nil, fmt.Errorf("error is not an object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("error is not an object")
	}
	code, ok := m["code"]
	if !ok {
		return nil, fmt.Errorf("error.code missing")
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(code)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("error.code is not an integer")
	}
	msg, ok := m["message"]
	var s string
	if !ok || kindOf(msg) != '"' || json.Unmarshal(msg, &s) != nil {
		return nil, fmt.Errorf("error.message is not a string")
	}
	return &Error{Code: n, Message: s, Data: m["data"]}, nil
}

// lspHeader reports whether a line is an LSP-style frame header
// ("Content-Length: 123", in any case): a client that frames as LSP
// does is told what this endpoint speaks instead of "parse error".
func lspHeader(line []byte) bool {
	const h = "content-length:"
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
		i++
	}
	line = line[i:]
	return len(line) >= len(h) && bytes.EqualFold(line[:len(h)], []byte(h))
}
