package rpc

import (
	"context"
	"reflect"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// method is one entry of the method table: the name, what it may be
// called by, and its handler. A new method is one entry here and its
// handler; initialize's capabilities and the unknown-method answer come
// from the table.
type method struct {
	name string
	// params and result are the Go types the method's params are
	// decoded into and its result encoded from (nil params: none); the
	// published schema is written from them.
	params, result reflect.Type
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
		{name: protocol.MethodInitialize, params: typeOf[protocol.InitializeParams](), result: typeOf[protocol.InitializeResult](), handle: (*binding).initialize},
		{name: protocol.MethodStatus, result: typeOf[protocol.StatusResult](), handle: func(b *binding, _ context.Context, _ *jsonrpc.Request) (any, error) { return b.status(), nil }},
		{name: protocol.MethodShutdown, result: typeOf[protocol.ShutdownResult](), ownerOnly: true, handle: (*binding).shutdownReq},
		{name: protocol.MethodReload, result: typeOf[protocol.ReloadResult](), ownerOnly: true, handle: (*binding).reloadReq},
		{name: protocol.MethodGatewayPair, result: typeOf[protocol.GatewayPairResult](), ownerOnly: true, handle: (*binding).gateway},
		{name: protocol.MethodGatewayTokens, result: typeOf[protocol.GatewayTokensResult](), ownerOnly: true, handle: (*binding).gateway},
		{name: protocol.MethodGatewayRevoke, params: typeOf[protocol.GatewayRevokeParams](), result: typeOf[protocol.GatewayRevokeResult](), ownerOnly: true, handle: (*binding).gateway},
		{name: protocol.MethodSessionNew, params: typeOf[protocol.SessionNewParams](), result: typeOf[protocol.SessionNewResult](), handle: (*binding).sessionNew},
		{name: protocol.MethodSessionPrompt, params: typeOf[protocol.SessionPromptParams](), result: typeOf[protocol.SessionPromptResult](), handle: (*binding).sessionPrompt},
		{name: protocol.MethodSessionCancel, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionCancelResult](), handle: (*binding).sessionCancel},
		{name: protocol.MethodSessionClose, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionCloseResult](), handle: (*binding).sessionClose},
		{name: protocol.MethodSessionApprove, params: typeOf[protocol.SessionApproveParams](), result: typeOf[protocol.SessionApproveResult](), handle: (*binding).sessionApprove},
		{name: protocol.MethodSessionList, params: typeOf[protocol.SessionListParams](), result: typeOf[protocol.SessionListResult](), handle: (*binding).sessionList},
		{name: protocol.MethodSessionHistory, params: typeOf[protocol.SessionHistoryParams](), result: typeOf[protocol.SessionHistoryResult](), handle: (*binding).sessionHistory},
		{name: protocol.MethodSessionDelete, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionDeleteResult](), handle: (*binding).sessionDelete},
		{name: protocol.MethodSessionEvent, params: typeOf[protocol.SessionEventParams](), result: typeOf[protocol.SessionEventResult](), handle: (*binding).sessionEvent},
		{name: protocol.MethodSessionGet, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionInfo](), handle: (*binding).sessionGet},
		{name: protocol.MethodSessionCompact, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionCompactResult](), handle: (*binding).sessionCompact},
		{name: protocol.MethodSessionConfigure, params: typeOf[protocol.SessionConfigureParams](), result: typeOf[protocol.SessionConfigureResult](), handle: (*binding).sessionConfigure},
		{name: protocol.MethodModels, params: typeOf[protocol.ModelsParams](), result: typeOf[protocol.ModelsResult](), handle: (*binding).models},
		{name: protocol.MethodFileAttach, params: typeOf[protocol.FileAttachParams](), result: typeOf[protocol.FileAttachResult](), handle: (*binding).fileAttach},
		{name: protocol.MethodFileUpload, params: typeOf[protocol.FileUploadParams](), result: typeOf[protocol.FileUploadResult](), handle: (*binding).fileUpload},
		{name: protocol.MethodSessionRename, params: typeOf[protocol.SessionRenameParams](), result: typeOf[protocol.SessionInfo](), handle: (*binding).sessionRename},
		{name: protocol.MethodSessionWatch, result: typeOf[protocol.SessionWatchResult](), handle: (*binding).sessionWatch},
		{name: protocol.MethodSessionSteer, params: typeOf[protocol.SessionSteerParams](), result: typeOf[protocol.SessionSteerResult](), handle: (*binding).sessionSteer},
		{name: protocol.MethodSessionQueue, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionQueueResult](), handle: (*binding).sessionQueue},
		{name: protocol.MethodSessionQueueRemove, params: typeOf[protocol.SessionQueueRemoveParams](), result: typeOf[protocol.SessionQueueResult](), handle: (*binding).sessionQueueRemove},
		{name: protocol.MethodSessionQueueClear, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionQueueResult](), handle: (*binding).sessionQueueClear},
		{name: protocol.MethodSessionQueueSteer, params: typeOf[protocol.SessionQueueRemoveParams](), result: typeOf[protocol.SessionSteerResult](), handle: (*binding).sessionQueueSteer},
		{name: protocol.MethodSessionCheckpoints, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionCheckpointsResult](), handle: (*binding).sessionCheckpoints},
		{name: protocol.MethodSessionRewind, params: typeOf[protocol.SessionRewindParams](), result: typeOf[protocol.SessionRewindResult](), handle: (*binding).sessionRewind},
		{name: protocol.MethodSessionDiff, params: typeOf[protocol.SessionDiffParams](), result: typeOf[protocol.SessionDiffResult](), handle: (*binding).sessionDiff},
		{name: protocol.MethodSessionFork, params: typeOf[protocol.SessionForkParams](), result: typeOf[protocol.SessionForkResult](), handle: (*binding).sessionFork},
		{name: protocol.MethodPermissionsList, params: typeOf[protocol.PermissionsListParams](), result: typeOf[protocol.PermissionsListResult](), ownerOnly: true, handle: (*binding).permissionsList},
		{name: protocol.MethodPermissionsRevoke, params: typeOf[protocol.PermissionsRevokeParams](), result: typeOf[protocol.PermissionsRevokeResult](), ownerOnly: true, handle: (*binding).permissionsRevoke},
		{name: protocol.MethodSessionMCP, params: typeOf[protocol.SessionRef](), result: typeOf[protocol.SessionMCPResult](), handle: (*binding).sessionMCP},
		{name: protocol.MethodSessionExport, params: typeOf[protocol.SessionExportParams](), result: typeOf[protocol.SessionExportResult](), handle: (*binding).sessionExport},
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

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }
