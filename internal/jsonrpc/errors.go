package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JSON-RPC 2.0 standard error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeRequestCancelled answers a request the peer cancelled
	// ($/cancelRequest), as LSP does.
	CodeRequestCancelled = -32800
)

// Error is a JSON-RPC error object. It is also a Go error, so a handler can
// return one (wrapped or not) and its code reaches the wire unchanged.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// NewError returns an error with the given code and message. A non-nil data
// is marshalled into the error's data member.
func NewError(code int64, data any, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	return e
}

// ErrClosed is returned by calls on a connection that has ended.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ErrMethodNotFound may be returned (wrapped) by a handler that does not
// know a method; the Conn answers -32601 naming the method.
var ErrMethodNotFound = errors.New("method not found")

// toWire turns a handler error into the error object that goes on the wire.
func toWire(method string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, ErrMethodNotFound) {
		return &Error{Code: CodeMethodNotFound, Message: "method not found: " + method}
	}
	return &Error{Code: CodeInternalError, Message: "internal error: " + err.Error()}
}
