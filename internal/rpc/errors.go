package rpc

import (
	"errors"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

var errNotInitialized = jsonrpc.NewError(protocol.CodeNotInitialized,
	map[string]string{"kind": "not_initialized"}, "first call must be initialize")

// wire is the one table that turns the errors of the layers below into
// JSON-RPC errors with a code and a kind.
func wire(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	var pe *protocol.ParamsError
	if errors.As(err, &pe) {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, map[string]string{"kind": "invalid_params", "field": pe.Field}, "%s", pe.Error())
	}
	for _, m := range []struct {
		err  error
		code int64
		kind string
	}{
		{session.ErrNotFound, protocol.CodeSessionNotFound, "session_not_found"},
		{session.ErrLimit, protocol.CodeSessionLimit, "session_limit"},
		{session.ErrBusy, protocol.CodeSessionBusy, "session_busy"},
		{session.ErrForbidden, protocol.CodeForbidden, "forbidden"},
	} {
		if errors.Is(err, m.err) {
			return jsonrpc.NewError(m.code, map[string]string{"kind": m.kind}, "%s", err.Error())
		}
	}
	return err
}
