package rpc

import (
	"errors"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

var errNotInitialized = jsonrpc.NewError(protocol.CodeNotInitialized,
	map[string]string{"kind": "not_initialized"}, "first call must be initialize")

// wire is the one table that turns the errors of the layers below into
// JSON-RPC errors with a code and a kind.
func wire(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	var pe *protocol.ParamsError
	if errors.As(err, &pe) {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, map[string]string{"kind": "invalid_params", "field": pe.Field}, "%s", pe.Error())
	}
	return err
}
