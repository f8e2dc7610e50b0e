package tool

import (
	"encoding/json"
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
		a.InPlans = within(t, env, input, filepath.Join(env.Cwd, gate.PlanDir))
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

// DrivesTasks says whether t is one of the tools that start and drive
// sub-agents (a session that may start none is given none of them).
func DrivesTasks(t Tool) bool {
	switch t.(type) {
	case task, taskStatus, taskSend, taskCancel:
		return true
	}
	return false
}
