package rpc

import (
	"context"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// method is one entry of the method table: the name, what it may be
// called by, and its handler. A new method is one entry here and its
// handler; initialize's capabilities and the unknown-method answer come
// from the table.
type method struct {
	name string
	// ownerOnly: only the daemon's own user may call it, on its socket
	// (so never a gateway client, whose uid is unknown): -32003 else.
	ownerOnly bool
	handle    func(b *binding, ctx context.Context, req *jsonrpc.Request) (any, error)
}

// table lists every method served, in the order initialize's
// capabilities show them (set in init: initialize lists the table).
var table []method

func init() {
	table = []method{
		{name: protocol.MethodInitialize, handle: (*binding).initialize},
		{name: protocol.MethodStatus, handle: func(b *binding, _ context.Context, _ *jsonrpc.Request) (any, error) { return b.status(), nil }},
		{name: protocol.MethodShutdown, ownerOnly: true, handle: (*binding).shutdownReq},
		{name: protocol.MethodReload, ownerOnly: true, handle: (*binding).reloadReq},
		{name: protocol.MethodGatewayPair, ownerOnly: true, handle: (*binding).gateway},
		{name: protocol.MethodGatewayTokens, ownerOnly: true, handle: (*binding).gateway},
		{name: protocol.MethodGatewayRevoke, ownerOnly: true, handle: (*binding).gateway},
		{name: protocol.MethodSessionNew, handle: (*binding).sessionNew},
		{name: protocol.MethodSessionPrompt, handle: (*binding).sessionPrompt},
		{name: protocol.MethodSessionCancel, handle: (*binding).sessionCancel},
		{name: protocol.MethodSessionClose, handle: (*binding).sessionClose},
		{name: protocol.MethodSessionApprove, handle: (*binding).sessionApprove},
		{name: protocol.MethodSessionList, handle: (*binding).sessionList},
		{name: protocol.MethodSessionHistory, handle: (*binding).sessionHistory},
		{name: protocol.MethodSessionDelete, handle: (*binding).sessionDelete},
		{name: protocol.MethodSessionEvent, handle: (*binding).sessionEvent},
		{name: protocol.MethodSessionGet, handle: (*binding).sessionGet},
		{name: protocol.MethodSessionCompact, handle: (*binding).sessionCompact},
		{name: protocol.MethodSessionConfigure, handle: (*binding).sessionConfigure},
		{name: protocol.MethodModels, handle: (*binding).models},
		{name: protocol.MethodFileAttach, handle: (*binding).fileAttach},
		{name: protocol.MethodFileUpload, handle: (*binding).fileUpload},
		{name: protocol.MethodSessionRename, handle: (*binding).sessionRename},
		{name: protocol.MethodSessionWatch, handle: (*binding).sessionWatch},
	}
	byName = make(map[string]*method, len(table))
	for i := range table {
		if byName[table[i].name] != nil {
			panic("rpc: method " + table[i].name + " twice in the table")
		}
		byName[table[i].name] = &table[i]
	}
}

// byName finds a method's entry.
var byName map[string]*method

// Methods lists the methods served, in the table's order (initialize's
// capabilities).
func Methods() []string {
	out := make([]string, len(table))
	for i, m := range table {
		out[i] = m.name
	}
	return out
}

// OwnerOnly reports whether only the daemon's own user may call name.
func OwnerOnly(name string) bool {
	m := byName[name]
	return m != nil && m.ownerOnly
}

// errOwnerOnly refuses a method to anyone but the daemon's own user.
func errOwnerOnly(name string) error {
	return jsonrpc.NewError(protocol.CodeForbidden, map[string]string{"kind": "forbidden"},
		"%s is allowed only to the daemon's own user, on its socket", name)
}
