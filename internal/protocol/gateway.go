package protocol

// The gateway's credentials, managed over the socket by the daemon's own
// user (spec 10.1).
const (
	MethodGatewayPair   = "gateway/pair"
	MethodGatewayTokens = "gateway/tokens"
	MethodGatewayRevoke = "gateway/revoke"
)

// GatewayPairResult is a one-time pairing code; ExpiresAt is RFC 3339.
type GatewayPairResult struct {
	Code      string `json:"code"`
	ExpiresAt string `json:"expiresAt"`
	// URL is where the gateway listens, for the person to open.
	URL string `json:"url,omitempty"`
}

// GatewayToken describes a token (never the token itself). Times are
// RFC 3339; LastUsedAt is null for a token never used.
type GatewayToken struct {
	TokenID    string  `json:"tokenId"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"createdAt"`
	LastUsedAt *string `json:"lastUsedAt"`
}

// GatewayTokensResult lists the tokens, oldest first.
type GatewayTokensResult struct {
	Tokens []GatewayToken `json:"tokens"`
}

// GatewayRevokeParams names the token to revoke.
type GatewayRevokeParams struct {
	TokenID string `json:"tokenId"`
}

// GatewayRevokeResult says whether a token was revoked.
type GatewayRevokeResult struct {
	Revoked bool `json:"revoked"`
}

// PairRequest is the body of POST /pair.
type PairRequest struct {
	Code string `json:"code"`
	Name string `json:"name,omitempty"`
	// Cookie asks for the token as an HttpOnly session cookie (the
	// dashboard) instead of in the answer.
	Cookie bool `json:"cookie,omitempty"`
}

// PairResponse is the answer of POST /pair; Token is absent when it was
// set as a cookie.
type PairResponse struct {
	Token   string `json:"token,omitempty"`
	TokenID string `json:"tokenId"`
}
