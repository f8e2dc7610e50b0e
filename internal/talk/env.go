// Package talk is a conversation with the daemon in a terminal: one turn
// (zeroclaw prompt) or a chat (zeroclaw chat, full-screen on a terminal,
// a line at a time otherwise), the daemon's events shown for a person
// (or as NDJSON for a script) by one event formatter, the approvals and
// questions asked there, and the reconnect that carries a conversation
// across a daemon restart. The cli commands parse their flags and call
// Prompt and Chat.
package talk

import (
	"context"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/console"
)

// Version is the client version told to the daemon (the cli sets it to
// zeroclaw's at its init; nothing writes it after).
var Version = "0.1.0-dev"

func resolve(env console.Env, configDir string) (config.Dirs, error) {
	return config.ResolveDirs(configDir, env.Getenv)
}

// Connect dials the daemon, starting one unless noStart.
func Connect(ctx context.Context, env console.Env, configDir string, noStart bool, o client.Options) (*client.Client, error) {
	return connect(ctx, env, configDir, noStart, o)
}
