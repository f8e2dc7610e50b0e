package rpc

import (
	"errors"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// The errors rpc answers itself, each with its code and kind; wire
// (below) maps those of the layers beneath.
var (
	errNotInitialized = jsonrpc.NewError(protocol.CodeNotInitialized,
		map[string]string{"kind": "not_initialized"}, "first call must be initialize")
	errNoKeeper   = jsonrpc.NewError(jsonrpc.CodeInternalError, nil, "this daemon keeps no gateway credentials")
	errGatewayOff = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, map[string]string{"kind": "gateway_off"},
		"the gateway is not running: start the daemon with --gateway, or set [gateway] enabled = true")
)

// errOwnerOnly refuses a method to anyone but the daemon's own user.
func errOwnerOnly(name string) error {
	return jsonrpc.NewError(protocol.CodeForbidden, map[string]string{"kind": "forbidden"},
		"%s is allowed only to the daemon's own user, on its socket", name)
}

// errVersion refuses a protocol version this daemon does not speak.
func errVersion(v int) error {
	return jsonrpc.NewError(protocol.CodeVersionMismatch,
		protocol.VersionMismatchData{Supported: protocol.SupportedVersions, Kind: "version_mismatch"},
		"protocol version %d is not supported (supported: %v)", v, protocol.SupportedVersions)
}

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
	var tm *session.TurnMismatch
	if errors.As(err, &tm) {
		return jsonrpc.NewError(protocol.CodeSessionBusy, map[string]string{"kind": "turn_mismatch", "runningTurnId": tm.Running}, "%s", tm.Error())
	}
	var rf *session.Refused
	if errors.As(err, &rf) {
		return jsonrpc.NewError(protocol.CodeForbidden, map[string]string{"kind": "forbidden"}, "%s", rf.Error())
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
