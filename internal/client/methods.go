package client

import (
	"context"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// call makes one call into a fresh R.
func call[R any](ctx context.Context, c *Client, method string, params any) (*R, error) {
	var r R
	if err := c.Call(ctx, method, params, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// NewSession calls session/new: it makes, resumes or attaches to a
// session.
func (c *Client) NewSession(ctx context.Context, p protocol.SessionNewParams) (*protocol.SessionNewResult, error) {
	return call[protocol.SessionNewResult](ctx, c, protocol.MethodSessionNew, p)
}

// Prompt calls session/prompt: answered when the turn ends (its events
// reach the Handler meanwhile).
func (c *Client) Prompt(ctx context.Context, p protocol.SessionPromptParams) (*protocol.SessionPromptResult, error) {
	return call[protocol.SessionPromptResult](ctx, c, protocol.MethodSessionPrompt, p)
}

// Await calls session/await: the result of the prompt sent under
// clientMessageID, once its turn ends.
func (c *Client) Await(ctx context.Context, sessionID, clientMessageID string) (*protocol.SessionPromptResult, error) {
	return call[protocol.SessionPromptResult](ctx, c, protocol.MethodSessionAwait, protocol.SessionAwaitParams{SessionID: sessionID, ClientMessageID: clientMessageID})
}

// Steer calls session/steer.
func (c *Client) Steer(ctx context.Context, p protocol.SessionSteerParams) (*protocol.SessionSteerResult, error) {
	return call[protocol.SessionSteerResult](ctx, c, protocol.MethodSessionSteer, p)
}

// Queue calls session/queue.
func (c *Client) Queue(ctx context.Context, sessionID string) (*protocol.SessionQueueResult, error) {
	return call[protocol.SessionQueueResult](ctx, c, protocol.MethodSessionQueue, protocol.SessionRef{SessionID: sessionID})
}

// QueueRemove calls session/queue/remove, or session/queue/clear when
// id is "".
func (c *Client) QueueRemove(ctx context.Context, sessionID, id string) (*protocol.SessionQueueResult, error) {
	if id == "" {
		return call[protocol.SessionQueueResult](ctx, c, protocol.MethodSessionQueueClear, protocol.SessionRef{SessionID: sessionID})
	}
	return call[protocol.SessionQueueResult](ctx, c, protocol.MethodSessionQueueRemove, protocol.SessionQueueRemoveParams{SessionID: sessionID, ID: id})
}

// Cancel calls session/cancel; false when nothing ran.
func (c *Client) Cancel(ctx context.Context, sessionID string) (bool, error) {
	r, err := call[protocol.SessionCancelResult](ctx, c, protocol.MethodSessionCancel, protocol.SessionRef{SessionID: sessionID})
	if err != nil {
		return false, err
	}
	return r.Cancelled, nil
}

// CloseSession calls session/close.
func (c *Client) CloseSession(ctx context.Context, sessionID string) error {
	_, err := call[protocol.SessionCloseResult](ctx, c, protocol.MethodSessionClose, protocol.SessionRef{SessionID: sessionID})
	return err
}

// DeleteSession calls session/delete.
func (c *Client) DeleteSession(ctx context.Context, sessionID string) error {
	_, err := call[protocol.SessionDeleteResult](ctx, c, protocol.MethodSessionDelete, protocol.SessionRef{SessionID: sessionID})
	return err
}

// Approve calls session/approve; false when the request was unknown,
// timed out or answered already.
func (c *Client) Approve(ctx context.Context, p protocol.SessionApproveParams) (bool, error) {
	r, err := call[protocol.SessionApproveResult](ctx, c, protocol.MethodSessionApprove, p)
	if err != nil {
		return false, err
	}
	return r.Accepted, nil
}

// List calls session/list: one page.
func (c *Client) List(ctx context.Context, p protocol.SessionListParams) (*protocol.SessionListResult, error) {
	return call[protocol.SessionListResult](ctx, c, protocol.MethodSessionList, p)
}

// EachSession calls fn with every stored session, most recently updated
// first, walking session/list a page of 500 at a time, until fn returns
// false.
func (c *Client) EachSession(ctx context.Context, fn func(protocol.SessionInfo) bool) error {
	for cursor := ""; ; {
		page, err := c.List(ctx, protocol.SessionListParams{Cursor: cursor, Limit: 500})
		if err != nil {
			return err
		}
		for _, s := range page.Sessions {
			if !fn(s) {
				return nil
			}
		}
		if page.NextCursor == nil {
			return nil
		}
		cursor = *page.NextCursor
	}
}

// Get calls session/get.
func (c *Client) Get(ctx context.Context, sessionID string) (*protocol.SessionInfo, error) {
	return call[protocol.SessionInfo](ctx, c, protocol.MethodSessionGet, protocol.SessionRef{SessionID: sessionID})
}

// History calls session/history: one page (Replay reads a whole
// session).
func (c *Client) History(ctx context.Context, p protocol.SessionHistoryParams) (*protocol.SessionHistoryResult, error) {
	return call[protocol.SessionHistoryResult](ctx, c, protocol.MethodSessionHistory, p)
}

// Configure calls session/configure.
func (c *Client) Configure(ctx context.Context, p protocol.SessionConfigureParams) (*protocol.SessionConfigureResult, error) {
	return call[protocol.SessionConfigureResult](ctx, c, protocol.MethodSessionConfigure, p)
}

// Compact calls session/compact.
func (c *Client) Compact(ctx context.Context, sessionID string) (*protocol.SessionCompactResult, error) {
	return call[protocol.SessionCompactResult](ctx, c, protocol.MethodSessionCompact, protocol.SessionRef{SessionID: sessionID})
}

// Rename calls session/rename.
func (c *Client) Rename(ctx context.Context, sessionID, title string) (*protocol.SessionInfo, error) {
	return call[protocol.SessionInfo](ctx, c, protocol.MethodSessionRename, protocol.SessionRenameParams{SessionID: sessionID, Title: title})
}

// Watch calls session/watch: session/changed notifications reach the
// Handler from then on.
func (c *Client) Watch(ctx context.Context) error {
	_, err := call[protocol.SessionWatchResult](ctx, c, protocol.MethodSessionWatch, struct{}{})
	return err
}

// Models calls models for an agent ("": the default).
func (c *Client) Models(ctx context.Context, agentAlias string) (*protocol.ModelsResult, error) {
	return call[protocol.ModelsResult](ctx, c, protocol.MethodModels, protocol.ModelsParams{AgentAlias: agentAlias})
}

// Reload calls daemon/reload.
func (c *Client) Reload(ctx context.Context) (*protocol.ReloadResult, error) {
	return call[protocol.ReloadResult](ctx, c, protocol.MethodReload, struct{}{})
}

// GatewayPair calls gateway/pair: a one-time pairing code.
func (c *Client) GatewayPair(ctx context.Context) (*protocol.GatewayPairResult, error) {
	return call[protocol.GatewayPairResult](ctx, c, protocol.MethodGatewayPair, struct{}{})
}

// GatewayTokens calls gateway/tokens.
func (c *Client) GatewayTokens(ctx context.Context) (*protocol.GatewayTokensResult, error) {
	return call[protocol.GatewayTokensResult](ctx, c, protocol.MethodGatewayTokens, struct{}{})
}

// GatewayRevoke calls gateway/revoke; false when there was no such
// credential.
func (c *Client) GatewayRevoke(ctx context.Context, tokenID string) (bool, error) {
	r, err := call[protocol.GatewayRevokeResult](ctx, c, protocol.MethodGatewayRevoke, protocol.GatewayRevokeParams{TokenID: tokenID})
	if err != nil {
		return false, err
	}
	return r.Revoked, nil
}
