package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// What each tool may change, as the gate (internal/gate) sees it: the
// tools declare it here, so nothing outside this package names a tool
// to decide what it may do.

// Classer is a tool that declares its class.
type Classer interface {
	Class() gate.Class
}

func (shell) Class() gate.Class     { return gate.RunsCommand }
func (writeFile) Class() gate.Class { return gate.EditsFiles }
func (editFile) Class() gate.Class  { return gate.EditsFiles }
func (multiEdit) Class() gate.Class { return gate.EditsFiles }

// ClassOf is t's class: what it declares; else it only looks when it
// says it only reads (an MCP server's readOnlyHint) or never asks and is
// of a kind that only looks; it fetches when it reads the web; else it
// may change anything.
func ClassOf(t Tool) gate.Class {
	if c, ok := t.(Classer); ok {
		return c.Class()
	}
	if ro, ok := t.(ReadOnlyer); ok && ro.ReadOnly() {
		return gate.Looks
	}
	switch t.Kind() {
	case protocol.KindFetch:
		return gate.Fetches
	case protocol.KindRead, protocol.KindSearch, protocol.KindThink:
		if !t.Asks() {
			return gate.Looks
		}
	}
	return gate.Changes
}

// Action describes a call of t with input, run with env, as the gate's
// action: its class, and whether every path it changes lies in the
// session's directory and in its plan directory.
func Action(t Tool, env *Env, name string, input json.RawMessage) gate.Action {
	a := gate.Action{Kind: gate.ToolCall, Name: name}
	if t == nil {
		return a
	}
	a.Known, a.Asks, a.Class = true, t.Asks(), ClassOf(t)
	if a.Class == gate.EditsFiles {
		a.InCwd = within(t, env, input, env.Cwd)
		// A plan is written only where the plan directory really is:
		// no symbolic link on the way (a cloned repo's
		// .zeroclaw/plans -> .. would take the write elsewhere).
		a.InPlans = within(t, env, input, filepath.Join(env.Cwd, gate.PlanDir)) && noLinksBelow(t, env, input, env.Cwd)
	}
	return a
}

// within says whether every path t's call may change lies under dir.
func within(t Tool, env *Env, input json.RawMessage, dir string) bool {
	e := EffectOf(t, env, input)
	if e.Anything || len(e.Paths) == 0 {
		return false
	}
	for _, p := range e.Paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return false
		}
	}
	return true
}

// noLinksBelow says whether no path t's call may change goes through a
// symbolic link below base (base itself may be one): every directory on
// the way, and the file itself when it exists, is what it says.
func noLinksBelow(t Tool, env *Env, input json.RawMessage, base string) bool {
	for _, p := range EffectOf(t, env, input).Paths {
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return false
		}
		at := base
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			at = filepath.Join(at, part)
			fi, err := os.Lstat(at)
			if os.IsNotExist(err) {
				break // nothing further can be a link yet
			}
			if err != nil || fi.Mode()&os.ModeSymlink != 0 {
				return false
			}
		}
	}
	return true
}

// DrivesTasks says whether t is one of the tools that start and drive
// sub-agents (a session that may start none is given none of them).
func DrivesTasks(t Tool) bool {
	switch t.(type) {
	case task, taskStatus, taskSend, taskCancel:
		return true
	}
	return false
}
