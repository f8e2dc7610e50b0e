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

// GatewayToken describes a credential (never its secrets): a script's
// token (kind "token") or a browser's session ("browser"). Times are
// RFC 3339; LastUsedAt is null for one never used; ExpiresAt is when it
// lapses (a browser's session: unless it is used before).
type GatewayToken struct {
	TokenID    string  `json:"tokenId"`
	Name       string  `json:"name"`
	Kind       string  `json:"kind"`
	CreatedAt  string  `json:"createdAt"`
	LastUsedAt *string `json:"lastUsedAt"`
	ExpiresAt  string  `json:"expiresAt"`
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
	// Cookie asks for a browser's session (the dashboard): one half set
	// as an HttpOnly cookie, the other (Key) in the answer, for the page
	// to keep and send as X-Zeroclaw-Key.
	Cookie bool `json:"cookie,omitempty"`
}

// PairResponse is the answer of POST /pair: a script's Token, or a
// browser session's page Key (its cookie set beside), and when it
// lapses (RFC 3339).
type PairResponse struct {
	Token     string `json:"token,omitempty"`
	Key       string `json:"key,omitempty"`
	TokenID   string `json:"tokenId"`
	ExpiresAt string `json:"expiresAt"`
}
