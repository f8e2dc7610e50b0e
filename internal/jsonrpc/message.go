// Package jsonrpc is zeroclaw's NDJSON JSON-RPC 2.0 engine: a framer, the
// envelope classifier and a Conn that serves requests and sends its own in
// both directions. It knows nothing of the daemon's methods.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
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
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
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
	var s string
	return kindOf(raw) == '"' && json.Unmarshal(raw, &s) == nil && s == want
}

// classify applies the envelope rules of the protocol to one frame.
func classify(line []byte) (message, *verdict) {
	if !json.Valid(line) {
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
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil {
		return message{}, invalid(ID{}, "frame must be a JSON object")
	}
	method, hasMethod := env["method"]
	_, hasResult := env["result"]
	_, hasError := env["error"]
	switch {
	case hasMethod && kindOf(method) == '"' && !hasResult && !hasError:
		return classifyRequest(env)
	case !hasMethod && (hasResult || hasError):
		return classifyResponse(env)
	case hasMethod && kindOf(method) != '"':
		return message{}, invalid(ID{}, "method must be a string")
	case hasMethod:
		return message{}, invalid(ID{}, "a frame cannot have both method and result/error")
	default:
		return message{}, invalid(ID{}, "frame is neither a request nor a response")
	}
}

func invalid(id ID, rule string) *verdict {
	return &verdict{reply: &Error{Code: CodeInvalidRequest, Message: "invalid request: " + rule}, id: id}
}

func classifyRequest(env map[string]json.RawMessage) (message, *verdict) {
	var id ID
	rawID, hasID := env["id"]
	if hasID {
		if !validID(rawID) {
			return message{}, invalid(ID{}, "id must be a string, number or null")
		}
		id = ID{raw: bytes.TrimSpace(rawID)}
	}
	if v, ok := env["jsonrpc"]; !ok || !isJSONString(v, "2.0") {
		return message{}, invalid(id, `jsonrpc must be "2.0"`)
	}
	var method string
	if err := json.Unmarshal(env["method"], &method); err != nil {
		return message{}, invalid(id, "method must be a string")
	}
	params, hasParams := env["params"]
	if hasParams {
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

func classifyResponse(env map[string]json.RawMessage) (message, *verdict) {
	drop := func(reason string) (message, *verdict) { return message{}, &verdict{drop: reason} }
	if v, ok := env["jsonrpc"]; !ok || !isJSONString(v, "2.0") {
		return drop(`response without jsonrpc "2.0"`)
	}
	result, hasResult := env["result"]
	rawErr, hasError := env["error"]
	if hasResult && hasError {
		return drop("response with both result and error")
	}
	if _, ok := env["params"]; ok {
		return drop("response with params")
	}
	rawID, ok := env["id"]
	if !ok {
		return drop("response without id")
	}
	if !validID(rawID) {
		return drop("response with an invalid id")
	}
	resp := &Response{ID: ID{raw: bytes.TrimSpace(rawID)}}
	if hasResult {
		resp.Result = result
	} else {
		e, err := decodeError(rawErr)
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
