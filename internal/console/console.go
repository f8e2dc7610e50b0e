// Package console is the terminal environment a command runs in: its
// streams and environment (Env), the exit code it ends with (ExitError),
// whether a stream is a terminal, whether to use colour, and errors said
// for a person. Both the commands (cli) and the conversations (talk) use
// it.
package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
)

// Env is what a command may touch: its streams and environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Environ is the environment handed to processes the command starts.
	Environ []string
}

// OS returns the process's real streams and environment.
func OS() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Environ: os.Environ()}
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

// IsTerminal reports whether x is a terminal.
func IsTerminal(x any) bool {
	f, ok := x.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// UseColor: colour only on a terminal, and never when NO_COLOR is set
// (https://no-color.org) or the terminal is dumb.
func UseColor(env Env) bool {
	return env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb"
}

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
