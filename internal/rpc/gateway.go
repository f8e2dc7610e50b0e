package rpc

import (
	"context"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The gateway's credentials: gateway/pair, gateway/tokens and
// gateway/revoke, only to the daemon's own user on the local socket (the
// table says so: a gateway client, however authenticated, cannot mint or
// revoke credentials).

func (b *binding) gatewayPair(context.Context, *noParams) (*protocol.GatewayPairResult, error) {
	k := b.srv.keeper
	if k == nil {
		return nil, errNoKeeper
	}
	url := b.srv.gatewayURLOrEmpty()
	if url == "" {
		return nil, errGatewayOff
	}
	code, exp := k.NewCode()
	b.srv.log.Info("gateway pairing code issued", "peer", b.peer.Label, "expires", exp)
	return &protocol.GatewayPairResult{Code: code, ExpiresAt: exp.UTC().Format(time.RFC3339), URL: url}, nil
}

func (b *binding) gatewayTokens(context.Context, *noParams) (*protocol.GatewayTokensResult, error) {
	k := b.srv.keeper
	if k == nil {
		return nil, errNoKeeper
	}
	res := &protocol.GatewayTokensResult{Tokens: []protocol.GatewayToken{}}
	for _, t := range k.List() {
		gt := protocol.GatewayToken{TokenID: t.ID, Name: t.Name, Kind: t.Kind, CreatedAt: rfc3339(t.CreatedMs), ExpiresAt: rfc3339(t.ExpiresMs)}
		if t.LastUsedMs > 0 {
			s := rfc3339(t.LastUsedMs)
			gt.LastUsedAt = &s
		}
		res.Tokens = append(res.Tokens, gt)
	}
	return res, nil
}

func (b *binding) gatewayRevoke(_ context.Context, p *protocol.GatewayRevokeParams) (*protocol.GatewayRevokeResult, error) {
	k := b.srv.keeper
	if k == nil {
		return nil, errNoKeeper
	}
	if p.TokenID == "" {
		return nil, &protocol.ParamsError{Field: "tokenId", Reason: "required"}
	}
	ok, err := k.Revoke(p.TokenID)
	if err != nil {
		return nil, err
	}
	if ok {
		b.srv.log.Info("gateway token revoked", "peer", b.peer.Label, "tokenId", p.TokenID)
	}
	return &protocol.GatewayRevokeResult{Revoked: ok}, nil
}

func rfc3339(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
