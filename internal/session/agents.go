package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/agentkit"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The agent a session runs: built from the config, rebuilt after a
// reload, copied per turn with the session's own model, risk and MCP
// servers.

// turnAgent is the session's agent with its own settings: a copy per
// turn, so session/configure never changes a running turn.
func (s *Session) turnAgent() *agent.Agent {
	s.refreshAgent()
	s.mu.Lock()
	a := *s.agent
	if own := s.mcp; own != nil {
		agentkit.WithOwnMCP(&a, own)
	}
	if s.model != "" {
		a.Model = s.model
	}
	if s.risk != "" {
		a.Risk = s.risk
	}
	if s.reasoning != "" {
		a.Reasoning = s.reasoning
	}
	s.mu.Unlock()
	a.Commands.Sandbox = s.sandbox()
	a.Commands.Processes = s.processes()
	kind := s.turnKind()
	for _, p := range s.m.participants() {
		p.TurnStarting(s, kind, &a)
	}
	// The mode switched mid-turn applies from the next tool call.
	a.RiskNow = func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return cmp.Or(s.risk, s.agent.Risk)
	}
	if a.Tasks == nil {
		// No participant serves its sub-agents (at its depth a session
		// starts none): no task tools, and a call of one says why.
		why := "sub-agents are not available here"
		if max := s.m.conf().Config().Subagents.MaxDepth; s.Lineage().Depth >= max {
			why = fmt.Sprintf("sub-agents nest at most %d deep ([subagents] max_depth): this session may start none", max)
		}
		a.Withheld = map[string]string{}
		for _, t := range a.Tools {
			if tool.DrivesTasks(t) {
				a.Withheld[t.Spec().Name] = why
			}
		}
		a.Tools = slices.DeleteFunc(slices.Clone(a.Tools), tool.DrivesTasks)
	}
	// Every call goes through the one gate, as this turn's actor; a
	// child's, within what its parent holds at that call.
	a.Gate, a.Actor = s.m.gate, s.Actor()
	a.Offered = func(names map[string]bool) { s.tools.Store(&names) }
	if s.Parent() != nil {
		a.Grant = s.grant
	}
	return &a
}

// grant is what the session's parent holds now, and so the most the
// session may: the tools its parent's model was last offered (its tools,
// its MCP servers', its participants'), as narrowed by its own parent,
// and the
// narrowest mode of its ancestors now. nil when it has no live parent.
func (s *Session) grant() *gate.Grant {
	p := s.Parent()
	if p == nil {
		return nil
	}
	g := &gate.Grant{Mode: p.Mode()}
	if names := p.tools.Load(); names != nil {
		g.Tools = *names
	}
	if up := p.grant(); up != nil {
		g.Mode = gate.Narrower(g.Mode, up.Mode)
		if up.Tools != nil {
			both := map[string]bool{}
			for n := range g.Tools {
				if up.Tools[n] {
					both[n] = true
				}
			}
			if g.Tools == nil {
				both = up.Tools
			}
			g.Tools = both
		}
	}
	return g
}

// refreshAgent builds the session's agent again after a config reload
// (the next turn uses the new config). An agent the new config no longer
// has keeps running as it was.
func (s *Session) refreshAgent() {
	k := s.m.conf()
	s.mu.Lock()
	stale := s.agentGen != k.Gen()
	s.mu.Unlock()
	if !stale {
		return
	}
	a, files, err := k.Build(s.alias, s.mode, s.cwd)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agentGen = k.Gen()
	if err != nil {
		s.m.log.Warn("session keeps its agent: the reloaded config cannot build it", "sessionId", s.id, "err", err)
		return
	}
	s.agent, s.instructions = a, files
}

// prepare reads what a prompt names, when its turn starts: an MCP
// server's prompt it starts with becomes that prompt's text; the MCP
// resources attached are read, a text one joined to the prompt, a binary
// one stored and attached as a file is.
func (s *Session) prepare(ctx context.Context, j *job) error {
	text, err := s.expandMCPPrompt(ctx, j.prompt)
	if err != nil {
		return err
	}
	for _, r := range j.resources {
		rt, blob, mime, err := s.readResource(ctx, r.Server, r.URI)
		if err != nil {
			return fmt.Errorf("attachments: %s: %w", r.URI, err)
		}
		if blob == nil {
			text = strings.TrimLeft(text+"\n\n[Resource: "+r.URI+"]\n"+rt, "\n")
			continue
		}
		if s.m.uploads == nil {
			return fmt.Errorf("attachments: %s: no place to keep a binary resource", r.URI)
		}
		f, err := s.m.uploads.Put(blob, mime)
		if err != nil {
			return fmt.Errorf("attachments: %s: %w", r.URI, err)
		}
		text = strings.TrimLeft(text+"\n\n"+f.Marker, "\n")
		if strings.HasPrefix(f.MimeType, "image/") {
			j.images = append(j.images, provider.Image{MimeType: f.MimeType, Path: f.Path})
		}
	}
	j.prompt = text
	return nil
}

// expandMCPPrompt makes a prompt that starts with an MCP server's prompt
// as a slash command ("/mcp__SERVER__PROMPT args") that prompt's text,
// with what follows its first line kept after it; another prompt is
// returned as it is.
func (s *Session) expandMCPPrompt(ctx context.Context, text string) (string, error) {
	if !strings.HasPrefix(text, "/mcp__") {
		return text, nil
	}
	first, rest, _ := strings.Cut(text, "\n")
	command, args, _ := strings.Cut(first, " ")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, ok, err := s.mcpSets().Prompt(ctx, strings.TrimPrefix(command, "/"), args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", command, err)
	}
	if ok {
		if rest != "" {
			out += "\n\n" + rest
		}
		return out, nil
	}
	return "", fmt.Errorf("%s: no MCP server that is ready has this prompt (a prompt that starts with /mcp__ names an MCP server's prompt)", command)
}

// mcpSets are the MCP servers the session asks: its own, then the
// shared ones.
func (s *Session) mcpSets() mcptools.Sets {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mcptools.Sets{s.mcp, s.m.conf().MCP()}
}

// MCPOffers serves session/mcp: the prompts and resources of the
// session's MCP servers (its own, then the shared ones).
func (m *Manager) MCPOffers(ctx context.Context, c *Client, id string) (*protocol.SessionMCPResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	p, r := s.mcpSets().Offers(ctx)
	return &protocol.SessionMCPResult{SessionID: id, Prompts: p, Resources: r}, nil
}

// ReadResource reads an MCP server's resource for a prompt of session
// id: the session's own servers first, then the shared ones.
func (m *Manager) ReadResource(ctx context.Context, c *Client, id, server, uri string) (text string, blob []byte, mime string, err error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return "", nil, "", err
	}
	text, blob, mime, err = s.readResource(ctx, server, uri)
	if errors.Is(err, errNoServer) {
		err = &protocol.ParamsError{Field: "attachments", Reason: err.Error()}
	}
	return text, blob, mime, err
}

// errNoServer: no MCP server of that name serves the session.
var errNoServer = errors.New("no MCP server")

func (s *Session) readResource(ctx context.Context, server, uri string) (text string, blob []byte, mime string, err error) {
	text, blob, mime, ok, err := s.mcpSets().ReadResource(ctx, server, uri)
	if !ok {
		return "", nil, "", fmt.Errorf("%w %q for this session", errNoServer, server)
	}
	return text, blob, mime, err
}

// addMCP gives the session its own MCP servers, once (a session attached
// again keeps the ones it has).
func (s *Session) addMCP(servers map[string]config.MCPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil && !s.t.Shutting() {
		// The editor's servers run confined as commands do, writing the
		// session's directory.
		k := s.m.conf()
		s.mcp = k.SessionMCP(s.id, s.cwd, servers, k.Sandbox(s.sbMode, s.noNetwork), func() { s.m.mcpChanged(s.id) })
	}
}
