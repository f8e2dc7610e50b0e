package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/gate"
	"github.com/zeroclaw/zeroclaw/internal/mcptools"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
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
		shared, sharedNote := a.Extra, a.Note
		a.Extra = func(ctx context.Context) []tool.Tool {
			var ts []tool.Tool
			if shared != nil {
				ts = shared(ctx)
			}
			return append(ts, own.Tools(ctx)...)
		}
		a.Note = func() string {
			var notes []string
			if sharedNote != nil {
				notes = append(notes, sharedNote())
			}
			notes = append(notes, own.Unavailable())
			return strings.TrimSpace(strings.Join(notes, "\n"))
		}
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
	s.planTools(&a)
	if a.Tasks == nil {
		// No participant serves its sub-agents (at its depth a session
		// starts none): no task tools.
		a.Tools = slices.DeleteFunc(slices.Clone(a.Tools), tool.DrivesTasks)
	}
	// Every call goes through the one gate, as this turn's actor.
	a.Gate, a.Actor = s.m.gate, s.Actor()
	return &a
}

// processes is the session's table of background processes, made on
// first use.
func (s *Session) processes() *background.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.procs == nil {
		dir := ""
		if s.m.procDir != "" && protocol.ValidID(s.id) {
			dir = filepath.Join(s.m.procDir, s.id)
		}
		t := s.m.conf().cfg.Tools
		s.procs = background.NewTable(dir, t.OutputRingBytes, t.MaxProcesses, s.processChanged)
	}
	return s.procs
}

// refreshAgent builds the session's agent again after a config reload
// (the next turn uses the new config). An agent the new config no longer
// has keeps running as it was.
func (s *Session) refreshAgent() {
	l := s.m.conf()
	s.mu.Lock()
	stale := s.agentGen != l.gen
	s.mu.Unlock()
	if !stale {
		return
	}
	a, files, err := s.m.buildAgent(s.alias, s.mode, s.cwd)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agentGen = l.gen
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
		rt, blob, mime, err := s.m.readResource(ctx, s, r.Server, r.URI)
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
	s.mu.Lock()
	own := s.mcp
	s.mu.Unlock()
	for _, set := range []*mcptools.Set{own, s.m.conf().mcp} {
		out, ok, err := set.Prompt(ctx, strings.TrimPrefix(command, "/"), args)
		if err != nil {
			return "", fmt.Errorf("%s: %w", command, err)
		}
		if ok {
			if rest != "" {
				out += "\n\n" + rest
			}
			return out, nil
		}
	}
	return "", fmt.Errorf("%s: no MCP server that is ready has this prompt (a prompt that starts with /mcp__ names an MCP server's prompt)", command)
}

// MCPOffers serves session/mcp: the prompts and resources of the
// session's MCP servers (its own, then the shared ones).
func (m *Manager) MCPOffers(ctx context.Context, c *Client, id string) (*protocol.SessionMCPResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	own := s.mcp
	s.mu.Unlock()
	res := &protocol.SessionMCPResult{SessionID: id, Prompts: []protocol.MCPPrompt{}, Resources: []protocol.MCPResource{}}
	for _, set := range []*mcptools.Set{own, m.conf().mcp} {
		p, r := set.Offers(ctx)
		res.Prompts = append(res.Prompts, p...)
		res.Resources = append(res.Resources, r...)
	}
	return res, nil
}

// ReadResource reads an MCP server's resource for a prompt of session
// id: the session's own servers first, then the shared ones.
func (m *Manager) ReadResource(ctx context.Context, c *Client, id, server, uri string) (text string, blob []byte, mime string, err error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return "", nil, "", err
	}
	text, blob, mime, err = m.readResource(ctx, s, server, uri)
	if errors.Is(err, errNoServer) {
		err = &protocol.ParamsError{Field: "attachments", Reason: err.Error()}
	}
	return text, blob, mime, err
}

// errNoServer: no MCP server of that name serves the session.
var errNoServer = errors.New("no MCP server")

func (m *Manager) readResource(ctx context.Context, s *Session, server, uri string) (text string, blob []byte, mime string, err error) {
	s.mu.Lock()
	own := s.mcp
	s.mu.Unlock()
	for _, set := range []*mcptools.Set{own, m.conf().mcp} {
		text, blob, mime, ok, err := set.ReadResource(ctx, server, uri)
		if ok {
			return text, blob, mime, err
		}
	}
	return "", nil, "", fmt.Errorf("%w %q for this session", errNoServer, server)
}

// addMCP gives the session its own MCP servers, once (a session attached
// again keeps the ones it has).
func (s *Session) addMCP(servers map[string]config.MCPServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil && !s.t.shutting() {
		l := s.m.conf()
		// Its servers' root is the session's directory (roots/list).
		s.mcp = mcptools.NewSet(servers, l.environ, s.m.log.With("sessionId", s.id)).WithRoot(s.cwd).WithLogins(s.m.logins).
			OnChange(func() { s.m.mcpChanged(s.id) })
		if sb := s.sandboxLocked(); sb != nil {
			// The editor's servers run confined as commands do, writing
			// the session's directory.
			cwd := s.cwd
			s.mcp.Sandboxed(func(argv []string) ([]string, error) { return sb.Wrap(cwd, argv) })
		} else {
			s.mcp.Sandboxed(superviseMCP)
		}
		s.mcp.WithTurnWait(time.Duration(l.cfg.MCP.TurnWaitMs) * time.Millisecond).Start()
	}
}

// configResult says what the session runs on.
func (s *Session) configResult() *protocol.SessionConfigureResult {
	a := s.turnAgent()
	info := a.Provider.Info()
	model := a.Model
	if model == "" {
		model = info.Model
	}
	res := &protocol.SessionConfigureResult{SessionID: s.id, Provider: info.Name, ProviderKind: info.Kind, Model: model,
		URL: info.URL, Risk: a.Risk, ContextWindow: a.Provider.ContextWindow(a.Model), Reasoning: a.Reasoning, Sandbox: "off", Network: true}
	if sb := a.Commands.Sandbox; sb != nil && sb.Refuse == "" {
		res.Sandbox, res.Network = sb.Mode, sb.Network
	}
	return res
}

// processChanged tells every client of a background process that
// started or ended (process_update), and the model of one that ended on
// its own: at its next call (Notices).
func (s *Session) processChanged(p *background.Process) {
	info := wireProcess(p.Info())
	ev := protocol.ProcessUpdateEvent{Process: info}
	if info.State == background.Running {
		metrics.ProcessStarted()
		p.SetSeq(s.emit(ev))
		return
	}
	metrics.ProcessEnded(info.State)
	s.nmu.Lock()
	s.procsEnded = true
	s.nmu.Unlock()
	if info.State != background.Exited || p.Killed() {
		s.emit(ev)
		return
	}
	how := "exited"
	switch {
	case info.ExitCode != nil:
		how = fmt.Sprintf("exited with exit code %d", *info.ExitCode)
	case info.Signal != "":
		how = "ended by " + info.Signal
	}
	text := fmt.Sprintf("[background process %s (%s) %s", info.ID, info.Command, how)
	if tail := strings.TrimRight(p.Tail(2048), "\n"); tail != "" {
		text += "; its last output:\n" + tail + "\n"
	}
	text += "]"
	if s.m.conf().cfg.Tools.WakeOnExit && s.t.idle() {
		// An idle session wakes: a turn of its own tells the model.
		s.emit(ev)
		j := &job{id: protocol.NewID("q_", 6), prompt: text, queued: time.Now(), done: make(chan protocol.SessionPromptResult, 1)}
		if s.enqueue(j) != nil {
			s.addNotice(notice{text: text, process: p}) // it closes: the notice waits
		}
		return
	}
	// The model's notice is kept before the clients hear of the exit: a
	// prompt sent on hearing it finds the notice.
	s.addNotice(notice{text: text, process: p})
	s.emit(ev)
}

func (s *Session) addNotice(n notice) {
	s.nmu.Lock()
	s.notices = append(s.notices, n)
	s.nmu.Unlock()
}

// reportLost reports lost, as a stored session is loaded, the
// background processes a previous daemon left running (it died without
// ending them: a kill -9, a crash); the reaper or the sandbox's shim
// ended them. Those that ran on while the session was closed (kept) are
// not lost.
func (s *Session) reportLost() {
	if s.m.procDir == "" || !protocol.ValidID(s.id) {
		return
	}
	dir := filepath.Join(s.m.procDir, s.id)
	if _, err := os.Stat(dir); err != nil {
		return // none ever ran
	}
	s.m.mu.Lock()
	kept := s.m.kept[s.id]
	s.m.mu.Unlock()
	for _, i := range background.LostIn(dir, kept) {
		metrics.ProcessEnded(background.Lost)
		s.emit(protocol.ProcessUpdateEvent{Process: wireProcess(i)})
	}
}

// notice is what the model is told before its next call: a background
// process that ended, unless a tool's read already showed it the end.
type notice struct {
	text    string
	process *background.Process
}

// Notices implements agent.Host: what the model must hear before its
// next call (a background process that ended), taken once each.
func (s *Session) Notices() []provider.Message {
	s.nmu.Lock()
	ns := s.notices
	s.notices = nil
	s.nmu.Unlock()
	var out []provider.Message
	for _, n := range ns {
		if n.process != nil && n.process.Seen() {
			continue
		}
		out = append(out, provider.Message{Role: provider.RoleUser, Text: n.text})
	}
	return out
}

// wireProcess is a process as the wire describes it.
func wireProcess(i background.Info) protocol.ProcessInfo {
	w := protocol.ProcessInfo{ID: i.ID, Command: i.Command, Pid: i.Pid, TTY: i.TTY, State: i.State, ExitCode: i.ExitCode,
		Signal: i.Signal, StartedAt: i.StartedAt.Format(time.RFC3339Nano), OutputBytes: i.OutputBytes}
	if i.EndedAt != nil {
		w.EndedAt = i.EndedAt.Format(time.RFC3339Nano)
	}
	return w
}

// process finds a background process of session id (c's).
func (m *Manager) process(c *Client, id, pid string) (*background.Process, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	t := s.procs
	s.mu.Unlock()
	var p *background.Process
	if t != nil {
		p = t.Get(pid)
	}
	if p == nil {
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("no process %s in this session (process/list lists them)", pid)}
	}
	return p, nil
}

// ProcessList serves process/list.
func (m *Manager) ProcessList(c *Client, id string) (*protocol.ProcessListResult, error) {
	s, err := m.lookup(c, id)
	if err != nil {
		return nil, err
	}
	return &protocol.ProcessListResult{Processes: s.processInfos()}, nil
}

// processInfos describes the session's background processes.
func (s *Session) processInfos() []protocol.ProcessInfo {
	s.mu.Lock()
	t := s.procs
	s.mu.Unlock()
	out := []protocol.ProcessInfo{}
	if t != nil {
		for _, i := range t.List() {
			out = append(out, wireProcess(i))
		}
	}
	return out
}

// processOutputMax bounds a read of process/output.
const processOutputMax = 64 << 10

// ProcessOutput serves process/output.
func (m *Manager) ProcessOutput(c *Client, p protocol.ProcessOutputParams) (*protocol.ProcessOutputResult, error) {
	bp, err := m.processToRead(c, p)
	if err != nil {
		return nil, err
	}
	return readOutput(bp, p), nil
}

// ProcessOutputWait is process/output with waitMs: the process is found
// now, and the wait (up to waitMs, or ctx) is the function returned.
func (m *Manager) ProcessOutputWait(c *Client, p protocol.ProcessOutputParams) (func(ctx context.Context) *protocol.ProcessOutputResult, error) {
	bp, err := m.processToRead(c, p)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) *protocol.ProcessOutputResult {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(min(p.WaitMs, processOutputWaitMax))*time.Millisecond)
		bp.WaitOutput(wctx, p.Since)
		cancel()
		return readOutput(bp, p)
	}, nil
}

// processOutputWaitMax bounds process/output's waitMs.
const processOutputWaitMax = 30000

func (m *Manager) processToRead(c *Client, p protocol.ProcessOutputParams) (*background.Process, error) {
	if p.Since < 0 || p.MaxBytes < 0 || p.WaitMs < 0 {
		return nil, &protocol.ParamsError{Field: "since", Reason: "since, maxBytes and waitMs may not be negative"}
	}
	return m.process(c, p.SessionID, p.ID)
}

func readOutput(bp *background.Process, p protocol.ProcessOutputParams) *protocol.ProcessOutputResult {
	max := p.MaxBytes
	if max == 0 || max > processOutputMax {
		max = processOutputMax
	}
	o := bp.Output(p.Since, max)
	out := string(o.Data)
	if p.PlainText {
		out = background.Plain(o.Data)
	}
	return &protocol.ProcessOutputResult{Output: out, Next: o.Next, Dropped: o.Dropped, State: o.State, ExitCode: o.ExitCode}
}

// ProcessKill serves process/kill: TERM (or the signal named) to its
// group, then KILL after the shell tool's grace; it answers once the
// process has ended.
func (m *Manager) ProcessKill(c *Client, p protocol.ProcessKillParams) (*protocol.ProcessKillResult, error) {
	bp, err := m.process(c, p.SessionID, p.ID)
	if err != nil {
		return nil, err
	}
	sig, err := tool.SignalNamed(p.Signal)
	if err != nil {
		return nil, &protocol.ParamsError{Field: "signal", Reason: err.Error()}
	}
	if !bp.Running() {
		return &protocol.ProcessKillResult{Killed: false}, nil
	}
	bp.Kill(sig, tool.KillGrace)
	return &protocol.ProcessKillResult{Killed: true}, nil
}

// ProcessWrite serves process/write: a client types into a process.
func (m *Manager) ProcessWrite(c *Client, p protocol.ProcessWriteParams) (*protocol.ProcessWriteResult, error) {
	bp, err := m.process(c, p.SessionID, p.ID)
	if err != nil {
		return nil, err
	}
	if err := refused(m.Decide(gate.Request{Actor: c.Actor(), Action: gate.Action{Kind: gate.ProcessWrite, Name: protocol.MethodProcessWrite}})); err != nil {
		return nil, err
	}
	n, err := bp.Write(p.Input)
	if err != nil {
		return nil, &protocol.ParamsError{Field: "id", Reason: fmt.Sprintf("%s: %v", p.ID, err)}
	}
	return &protocol.ProcessWriteResult{Written: n}, nil
}
