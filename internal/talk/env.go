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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
)

// Version is the client version told to the daemon (the cli sets it to
// zeroclaw's at its init; nothing writes it after).
var Version = "0.1.0-dev"

// Env is what a command may touch: its streams and environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Environ is the environment handed to processes the command starts.
	Environ []string
}

// ExitError carries an exit code out of a command.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Exitf is an ExitError with a message.
func Exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

func exitf(code int, format string, args ...any) error { return Exitf(code, format, args...) }

type exitError = ExitError

// HumanError is err for a person: a daemon's JSON-RPC error shows its
// message and, where it has one, its reason, never the wire code.
func HumanError(err error) string {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return err.Error()
	}
	msg := strings.Replace(err.Error(), je.Error(), je.Message, 1)
	var data struct {
		Reason string `json:"reason"`
		Hint   string `json:"hint"`
	}
	if json.Unmarshal(je.Data, &data) == nil {
		for _, extra := range []string{data.Reason, data.Hint} {
			if extra != "" && !strings.Contains(msg, extra) {
				msg += " (" + extra + ")"
			}
		}
	}
	return msg
}

func humanError(err error) string { return HumanError(err) }

func resolve(env Env, configDir string) (config.Dirs, error) {
	return config.ResolveDirs(configDir, env.Getenv)
}

// Connect dials the daemon, starting one unless noStart.
func Connect(ctx context.Context, env Env, configDir string, noStart bool, o client.Options) (*client.Client, error) {
	return connect(ctx, env, configDir, noStart, o)
}

// IsTerminal reports whether x is a terminal.
func IsTerminal(x any) bool { return isTerminal(x) }

// UseColor: colour only on a terminal, and never when NO_COLOR is set
// (https://no-color.org) or the terminal is dumb.
func UseColor(env Env) bool { return useColor(env) }
