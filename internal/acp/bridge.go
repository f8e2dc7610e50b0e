// Package acp serves the Agent Client Protocol (v1, NDJSON JSON-RPC on
// stdio) by bridging it to the daemon: an editor's session is a daemon
// session, durable and resumable, visible to every other client.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// ProtocolVersion is the ACP version served.
const ProtocolVersion = 1

// ACP error codes used beyond the JSON-RPC standard ones.
const codeResourceNotFound = -32002

// editorMaxFrame is the largest frame taken from the editor: 20 MiB of
// attachments in base64, and room for the rest.
const editorMaxFrame = 28 << 20

// Dialer connects to the daemon with the given handler for its
// notifications and requests.
// caps are what the bridge declares to the daemon (the editor's file
// access, when it offers it); editor is the editor's clientInfo name
// ("" when it gave none), for the daemon to show other clients.
type Dialer func(ctx context.Context, h jsonrpc.Handler, caps *protocol.ClientCapabilities, editor string) (*client.Client, error)

// Options configure a Bridge.
type Options struct {
	Version    string
	AgentAlias string
	Dial       Dialer
	Logger     *slog.Logger
}

// Bridge is one ACP connection bridged to one daemon connection.
type Bridge struct {
	o     Options
	log   *slog.Logger
	acp   *jsonrpc.Conn
	mu    sync.Mutex
	cmdMu sync.Mutex // one available_commands_update at a time
	d     *client.Client
	live  map[string]bool // sessions this bridge streams live
	// on is the daemon connection each live session is attached on: a
	// connection dialled again (the daemon restarted) attaches it anew.
	on map[string]*client.Client
	// seen is the last seq forwarded of each session: a session
	// attached anew shows the editor what it missed from there.
	seen       map[string]int64
	approvals  map[string]string                    // pending approval requestId -> toolCallId
	models     []string                             // what the provider offers (asked once)
	fs         *protocol.FSCapabilities             // the editor's file access (initialize)
	elicits    bool                                 // the editor answers elicitation/create (form)
	elicitsURL bool                                 // and url mode
	terminal   bool                                 // the editor runs commands (terminal/*)
	editor     string                               // the editor's clientInfo name
	lastSent   chan struct{}                        // closed when the last prompt or steer taken was sent
	runs       map[string]string                    // daemon runId -> the editor's terminalId
	shells     map[string]string                    // sessionId -> the shell tool call in progress
	calls      map[string]toolCall                  // toolCallId -> the call, until its result
	procs      map[string]chan protocol.ProcessInfo // a background process's tool call -> its end, to its follower
}

// editorGone is how long, once the editor closed stdin, its calls still
// running may take to be answered.
const editorGone = 300 * time.Millisecond

// Serve runs the bridge on rwc (the editor's stdio) until it ends.
func Serve(ctx context.Context, rwc io.ReadWriteCloser, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.AgentAlias == "" {
		o.AgentAlias = "default"
	}
	b := &Bridge{o: o, log: log, live: map[string]bool{}, on: map[string]*client.Client{}, seen: map[string]int64{}, approvals: map[string]string{}, runs: map[string]string{}, shells: map[string]string{},
		calls: map[string]toolCall{}}
	// The editor may send a prompt with a 10 MiB image (13.3 MiB of
	// base64): take frames up to the attachments' request limit.
	// An editor that closes our stdin is gone: what is running is not
	// waited for beyond a moment (a turn goes on in the daemon, and the
	// session stays loadable), so the process ends at once.
	b.acp = jsonrpc.NewConn(rwc, jsonrpc.HandlerFunc(b.handle), jsonrpc.Options{Logger: log, IDPrefix: "zc-acp-", MaxFrame: editorMaxFrame, EOFGrace: editorGone})
	err := b.acp.Run(ctx)
	b.mu.Lock()
	d := b.d
	b.mu.Unlock()
	if d != nil {
		d.Close()
	}
	return err
}

// daemon returns the daemon connection, dialling it on first use.
func (b *Bridge) daemon(ctx context.Context) (*client.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.d != nil {
		select {
		case <-b.d.Done():
			b.d = nil // gone: dial again
		default:
			return b.d, nil
		}
	}
	// Forms are always answered: by the editor when it shows them, else
	// by the bridge with the form's defaults (formByDefaults).
	caps := &protocol.ClientCapabilities{FS: b.fs, Terminal: b.terminal, Elicitation: &protocol.Elicitation{Form: &struct{}{}}}
	if b.elicits && b.elicitsURL {
		caps.Elicitation.URL = &struct{}{}
	}
	d, err := b.o.Dial(ctx, jsonrpc.HandlerFunc(b.fromDaemon), caps, b.editor)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, nil, "zeroclaw daemon: %v", err)
	}
	b.d = d
	return d, nil
}

func (b *Bridge) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if m, ok := methods[req.Method]; ok {
		return m(b, req)
	}
	return nil, jsonrpc.ErrMethodNotFound
}

func decode(req *jsonrpc.Request, v any) error {
	if len(req.Params) == 0 {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: params are required")
	}
	if err := json.Unmarshal(req.Params, v); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: %v", err)
	}
	return nil
}

// acpError maps a daemon error to the ACP codes.
func acpError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		switch je.Code {
		case protocol.CodeSessionNotFound:
			return jsonrpc.NewError(codeResourceNotFound, nil, "%s", je.Message)
		case protocol.CodeSessionBusy, protocol.CodeSessionLimit, protocol.CodeForbidden:
			return jsonrpc.NewError(jsonrpc.CodeInternalError, nil, "%s", je.Message)
		}
		return je
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, nil, "zeroclaw daemon: %v", err)
}

func (b *Bridge) initialize(p *initParams) (any, error) {
	if p.ProtocolVersion == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: protocolVersion is required")
	}
	// The file tools go through the editor when it offers (its unsaved
	// buffers are the truth; it shows writes as diffs).
	if fs := p.ClientCapabilities.FS; fs != nil && (fs.ReadTextFile || fs.WriteTextFile) {
		b.mu.Lock()
		b.fs = fs
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.editor = p.ClientInfo.Name
	b.mu.Unlock()
	// Commands run in the editor's terminal when it offers one.
	if p.ClientCapabilities.Terminal {
		b.mu.Lock()
		b.terminal = true
		b.mu.Unlock()
	}
	// The agent's questions (ask_user, poll) go to an editor that answers
	// forms.
	if el := p.ClientCapabilities.Elicitation; el != nil && el.Form != nil && string(*el.Form) != "null" {
		b.mu.Lock()
		b.elicits = true
		// And an MCP server's url-mode questions, when it opens URLs.
		b.elicitsURL = el.URL != nil && string(*el.URL) != "null"
		b.mu.Unlock()
	}
	return map[string]any{
		"protocolVersion": ProtocolVersion, // ours, whatever was asked: the client decides
		"agentCapabilities": map[string]any{
			"loadSession":         true,
			"promptCapabilities":  map[string]any{"image": true, "audio": false, "embeddedContext": true},
			"mcpCapabilities":     map[string]any{"http": true, "sse": false},
			"sessionCapabilities": map[string]any{"list": map[string]any{}, "close": map[string]any{}, "resume": map[string]any{}, "delete": map[string]any{}, "fork": map[string]any{}},
		},
		"authMethods": []any{},
		"agentInfo":   map[string]any{"name": "zeroclaw", "title": "ZeroClaw", "version": b.o.Version},
		// The steering extension, as claude-agent-acp and codex-acp
		// advertise it.
		"_meta": map[string]any{"steering": map[string]any{"supported": true, "idlePromptRequired": true},
			"goal": map[string]any{"supported": true, "actions": []string{"set", "get", "pause", "resume", "clear"}}},
	}, nil
}

// mcpServer is an ACP McpServer: stdio (command, args, env) or http
// (url, headers); env and headers are lists of {name, value}.
type mcpServer struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name, Value string
	} `json:"env"`
	URL     string `json:"url"`
	Headers []struct {
		Name, Value string
	} `json:"headers"`
}

// mcpSpecs turns the editor's MCP servers into the daemon's: each runs
// for the session only. SSE servers (deprecated by MCP) are refused.
func mcpSpecs(in []mcpServer) ([]protocol.MCPServerSpec, error) {
	var out []protocol.MCPServerSpec
	for _, m := range in {
		sp := protocol.MCPServerSpec{Name: m.Name}
		switch m.Type {
		case "", "stdio":
			sp.Command, sp.Args = m.Command, m.Args
			if len(m.Env) > 0 {
				sp.Env = map[string]string{}
				for _, e := range m.Env {
					sp.Env[e.Name] = e.Value
				}
			}
		case "http":
			sp.URL = m.URL
			if len(m.Headers) > 0 {
				sp.Headers = map[string]string{}
				for _, h := range m.Headers {
					sp.Headers[h.Name] = h.Value
				}
			}
		default:
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: MCP server %q: transport %q is not supported (stdio and http are)", m.Name, m.Type)
		}
		out = append(out, sp)
	}
	return out, nil
}

func (b *Bridge) newSession(ctx context.Context, cwd string, servers []protocol.MCPServerSpec) (any, error) {
	d, err := b.daemon(ctx)
	if err != nil {
		return nil, err
	}
	ns, err := d.NewSession(ctx, protocol.SessionNewParams{
		AgentAlias: b.o.AgentAlias, Cwd: cwd, Mode: "code", KeepSiblings: true, MCPServers: servers})
	if err != nil {
		return nil, acpError(err)
	}
	b.mu.Lock()
	b.live[ns.SessionID] = true
	b.on[ns.SessionID] = d
	b.mu.Unlock()
	return b.opened(ctx, *ns, true), nil
}

// info tells the editor the session's title and last activity
// (session_info_update), after a turn.
func (b *Bridge) info(d *client.Client, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := d.Get(ctx, id)
	if err != nil {
		return
	}
	b.acp.Notify("session/update", map[string]any{"sessionId": id, "update": map[string]any{
		"sessionUpdate": "session_info_update", "title": s.Title,
		"updatedAt": time.UnixMilli(s.UpdatedMs).UTC().Format(time.RFC3339)}})
}

// load attaches to a stored session and, with replay, replays its
// history after since as session/update notifications before answering.
func (b *Bridge) load(ctx context.Context, id string, since int64, replay bool, servers []protocol.MCPServerSpec) (any, error) {
	d, err := b.daemon(ctx)
	if err != nil {
		return nil, err
	}
	// Only a session that exists may be loaded (session/new would create one).
	_, err = d.History(ctx, protocol.SessionHistoryParams{SessionID: id, Limit: 1})
	if err != nil {
		return nil, acpError(err)
	}
	ns, err := d.NewSession(ctx, protocol.SessionNewParams{SessionID: id, KeepSiblings: true, MCPServers: servers})
	if err != nil {
		return nil, acpError(err)
	}
	// Up to the attach point from the store; live from there on.
	if replay && ns.LastSeq > since {
		_, err := d.Replay(ctx, id, since, ns.LastSeq, func(_ json.RawMessage, u protocol.SessionUpdate) error {
			b.forward(u, true)
			return nil
		})
		if err != nil {
			return nil, acpError(err)
		}
	}
	b.mu.Lock()
	b.live[id] = true
	b.on[id] = d
	b.mu.Unlock()
	return b.opened(ctx, *ns, false), nil
}

type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Data     string `json:"data"`     // image: base64
	MimeType string `json:"mimeType"` // image
	Resource *struct {
		URI      string `json:"uri"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
		MimeType string `json:"mimeType"`
	} `json:"resource"`
}

// promptText joins the prompt's blocks into the daemon's prompt; images
// and binary embedded resources become attachments.
func promptText(blocks []contentBlock) (string, []protocol.Attachment, error) {
	var parts []string
	var files []protocol.Attachment
	for _, c := range blocks {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "resource_link":
			parts = append(parts, fmt.Sprintf("[Resource: %s] %s", c.Name, c.URI))
		case "resource":
			if c.Resource == nil {
				continue
			}
			if c.Resource.Blob != "" && c.Resource.Text == "" {
				files = append(files, protocol.Attachment{DataB64: c.Resource.Blob, MimeType: c.Resource.MimeType, Filename: path.Base(c.Resource.URI)})
				continue
			}
			parts = append(parts, fmt.Sprintf("[Resource: %s]\n%s", c.Resource.URI, c.Resource.Text))
		case "image":
			files = append(files, protocol.Attachment{DataB64: c.Data, MimeType: c.MimeType})
		default:
			return "", nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil,
				"invalid params: %s content is not supported (promptCapabilities lists what is)", c.Type)
		}
	}
	return strings.Join(parts, "\n\n"), files, nil
}

// order keeps the editor's prompts and steers in the order it sent
// them: each is sent to the daemon only after the one before it was
// (their answers come when their turns end).
type order struct{ prev, sent chan struct{} }

// inOrder takes the next place in the order (in the read loop).
func (b *Bridge) inOrder() *order {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := &order{prev: b.lastSent, sent: make(chan struct{})}
	b.lastSent = o.sent
	return o
}

// wait waits for the one before to be sent.
func (o *order) wait(ctx context.Context) error {
	if o.prev == nil {
		return nil
	}
	select {
	case <-o.prev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done lets the next one go (once).
func (o *order) done() {
	select {
	case <-o.sent:
	default:
		close(o.sent)
	}
}

// input reads a prompt's (or a steer's) blocks for session id, which
// this bridge must have open, and the daemon connection to send them on.
func (b *Bridge) input(ctx context.Context, id string, blocks []contentBlock) (string, []protocol.Attachment, *client.Client, error) {
	text, files, err := promptText(blocks)
	if err != nil {
		return "", nil, nil, err
	}
	d, err := b.daemon(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	b.mu.Lock()
	attached := b.live[id]
	b.mu.Unlock()
	if !attached {
		return "", nil, nil, jsonrpc.NewError(codeResourceNotFound, nil, "session %s is not open here: use session/new or session/load", id)
	}
	if err := b.reattach(ctx, d, id); err != nil {
		return "", nil, nil, acpError(err)
	}
	return text, files, d, nil
}

// reattach attaches session id on d when it was attached on another
// connection (the daemon restarted since: d is a new one).
func (b *Bridge) reattach(ctx context.Context, d *client.Client, id string) error {
	b.mu.Lock()
	on := b.on[id]
	b.mu.Unlock()
	if on == nil || on == d {
		return nil
	}
	// What the next daemon wrote before this attach (a turn it went on
	// with: turn_interrupted, turn_resumed, what streamed) is shown as
	// it would have been live: from the last seq forwarded before the
	// attach (live events after it move that mark on at once).
	b.mu.Lock()
	since := b.seen[id]
	b.mu.Unlock()
	ns, err := d.NewSession(ctx, protocol.SessionNewParams{SessionID: id, KeepSiblings: true})
	if err != nil {
		return err
	}
	if since > 0 && ns.LastSeq > since {
		if _, err := d.Replay(ctx, id, since, ns.LastSeq, func(_ json.RawMessage, u protocol.SessionUpdate) error {
			b.forward(u, false)
			return nil
		}); err != nil {
			return err
		}
	}
	b.mu.Lock()
	b.on[id] = d
	b.mu.Unlock()
	return nil
}

// following goes on with a prompt whose daemon went away mid-turn: the
// next daemon goes on with the turn (or never took the prompt); the
// prompt, sent again under its clientMessageId, is run only if it was
// never taken, else followed to its end. A few tries, as the daemon
// starts again.
func (b *Bridge) following(ctx context.Context, id string, p protocol.SessionPromptParams) (*protocol.SessionPromptResult, error) {
	var err error
	for try := 0; try < 20; try++ {
		if try > 0 {
			select {
			case <-time.After(250 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var d *client.Client
		if d, err = b.daemon(ctx); err != nil {
			continue
		}
		if err = b.reattach(ctx, d, id); err != nil {
			continue
		}
		var res *protocol.SessionPromptResult
		res, err = d.Prompt(ctx, p)
		if err == nil && res.Duplicate && res.StopReason == "" {
			res, err = d.Await(ctx, id, p.ClientMessageID)
		}
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, jsonrpc.ErrClosed) {
			return nil, err
		}
	}
	return nil, err
}

func (b *Bridge) prompt(ctx context.Context, p *promptParams) (any, error) {
	turn, id := p.turn, p.SessionID
	defer turn.done()
	text, files, d, err := b.input(ctx, id, p.Prompt)
	if err != nil {
		return nil, err
	}
	// "/compact" is a command: the model's view of older turns is
	// summarised now.
	if strings.TrimSpace(text) == "/compact" && len(files) == 0 {
		cr, err := d.Compact(ctx, id)
		if err != nil {
			return nil, acpError(err)
		}
		b.acp.Notify("session/update", map[string]any{"sessionId": id, "update": map[string]any{
			"sessionUpdate": "agent_message_chunk",
			"content":       map[string]any{"type": "text", "text": fmt.Sprintf("Compacted: %d earlier message(s) summarised out of the model's view.", cr.DroppedMessages)}}})
		return map[string]any{"stopReason": "end_turn"}, nil
	}
	// "/undo" undoes the last turn: its files and its place in the
	// conversation (the editor asked: the command is the asking).
	if strings.TrimSpace(text) == "/undo" && len(files) == 0 {
		return b.undo(ctx, d, id)
	}
	// Attachments up to the daemon's per-file limit fit: big ones go
	// ahead in parts.
	if files, err = d.Inline(ctx, files); err != nil {
		return nil, acpError(err)
	}
	if err := turn.wait(ctx); err != nil {
		return nil, err
	}
	// The prompt has an id: after a lost daemon it is sent again under
	// it, never run twice.
	params := protocol.SessionPromptParams{SessionID: id, Prompt: &text, Attachments: files, ClientMessageID: protocol.NewID("cm_", 8)}
	sent, err := d.Start(protocol.MethodSessionPrompt, params)
	turn.done()
	if err != nil {
		return nil, acpError(err)
	}
	res := &protocol.SessionPromptResult{}
	// The turn is waited for whatever the call's context says (a cancel
	// comes back as the turn's "cancelled"), until the editor is gone.
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	context.AfterFunc(ctx, func() {
		select {
		case <-b.acp.Done():
			stop()
		case <-wctx.Done():
		}
	})
	if err := sent.Wait(wctx, res); errors.Is(err, jsonrpc.ErrClosed) {
		b.log.Warn("the daemon went away during a turn; following it in the next one", "sessionId", id)
		if res, err = b.following(wctx, id, params); err != nil {
			return nil, acpError(err)
		}
	} else if err != nil {
		return nil, acpError(err)
	}
	// Every update of the turn reaches the editor before the answer that
	// ends it, the session's new title among them.
	b.info(d, id)
	switch res.StopReason {
	case "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled":
		return map[string]any{"stopReason": res.StopReason}, nil
	case "blocked":
		// A hook refused the prompt: ACP's nearest is a refusal (the
		// notice said why).
		return map[string]any{"stopReason": "refusal"}, nil
	case "budget":
		// ACP has no budget stop: the nearest is a limit on the agent's
		// requests between user turns; the notice said which.
		return map[string]any{"stopReason": "max_turn_requests"}, nil
	}
	msg := "the turn failed"
	if res.Error != nil {
		msg = res.Error.Message
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, map[string]string{"kind": "turn_failed"}, "%s", msg)
}

// methodSteering is the steering extension's method (claude-agent-acp's
// and codex-acp's): text for the turn in flight.
const methodSteering = "_session/steering"

// steer serves _session/steering: the daemon's session/steer, its
// outcome as the extension names it.
func (b *Bridge) steer(ctx context.Context, p *steerParams) (any, error) {
	turn, id := p.turn, p.SessionID
	defer turn.done()
	text, files, d, err := b.input(ctx, id, p.Prompt)
	if err != nil {
		return nil, err
	}
	if files, err = d.Inline(ctx, files); err != nil {
		return nil, acpError(err)
	}
	if err := turn.wait(ctx); err != nil {
		return nil, err
	}
	sent, err := d.Start(protocol.MethodSessionSteer, protocol.SessionSteerParams{SessionID: id, Prompt: &text, Attachments: files, IdleBehavior: p.idle})
	turn.done()
	if err != nil {
		return nil, acpError(err)
	}
	res := &protocol.SessionSteerResult{}
	if err := sent.Wait(ctx, res); err != nil {
		return nil, acpError(err)
	}
	out := map[string]any{"outcome": res.Outcome}
	if res.Outcome == protocol.SteerPromptRequired {
		out["reason"] = "noRunningTurn"
	}
	return out, nil
}

func (b *Bridge) list(ctx context.Context, lp *listParams) (any, error) {
	cwd, cursor := lp.Cwd, lp.Cursor
	d, err := b.daemon(ctx)
	if err != nil {
		return nil, err
	}
	p := protocol.SessionListParams{Limit: 100}
	if cursor != nil {
		p.Cursor = *cursor // the daemon's own cursor, passed through
	}
	page, err := d.List(ctx, p)
	if err != nil {
		return nil, acpError(err)
	}
	sessions := []map[string]any{}
	for _, s := range page.Sessions {
		if cwd != nil && *cwd != "" && s.Cwd != *cwd {
			continue
		}
		info := map[string]any{"sessionId": s.SessionID, "cwd": s.Cwd,
			"updatedAt": time.UnixMilli(s.UpdatedMs).UTC().Format(time.RFC3339)}
		if s.Title != "" {
			info["title"] = s.Title
		}
		sessions = append(sessions, info)
	}
	res := map[string]any{"sessions": sessions}
	if page.NextCursor != nil {
		res["nextCursor"] = *page.NextCursor
	}
	return res, nil
}

// undo serves "/undo": the last turn not rewound is rewound, and the
// reply says what was restored (or what stood in the way).
func (b *Bridge) undo(ctx context.Context, d *client.Client, id string) (any, error) {
	var cps protocol.SessionCheckpointsResult
	if err := d.Call(ctx, protocol.MethodSessionCheckpoints, protocol.SessionRef{SessionID: id}, &cps); err != nil {
		return nil, acpError(err)
	}
	turn := 0
	for _, cp := range cps.Checkpoints {
		if !cp.Rewound {
			turn = cp.Turn
		}
	}
	say := func(text string) {
		b.acp.Notify("session/update", map[string]any{"sessionId": id, "update": map[string]any{
			"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}})
	}
	if turn == 0 {
		say("Nothing to undo.")
		return map[string]any{"stopReason": "end_turn"}, nil
	}
	var res protocol.SessionRewindResult
	if err := d.Call(ctx, protocol.MethodSessionRewind, protocol.SessionRewindParams{SessionID: id, Turn: turn}, &res); err != nil {
		return nil, acpError(err)
	}
	var msg strings.Builder
	if !res.Rewound && len(res.Processes) > 0 {
		fmt.Fprintf(&msg, "Nothing was undone: background processes turn %d started still run (zeroclaw sessions rewind %s %d --force stops them first):", turn, id, turn)
		for _, p := range res.Processes {
			fmt.Fprintf(&msg, "\n- %s (pid %d): %s", p.ID, p.Pid, p.Command)
		}
	} else if !res.Rewound {
		fmt.Fprintf(&msg, "Nothing was undone: these files changed since turn %d (zeroclaw sessions rewind %s %d --force overwrites them):", turn, id, turn)
		for _, c := range res.Conflicts {
			fmt.Fprintf(&msg, "\n- %s: %s", c.Path, c.Reason)
		}
	} else {
		fmt.Fprintf(&msg, "Undid turn %d: the conversation is back to before it", turn)
		if n := len(res.Restored) + len(res.Removed); n == 0 {
			msg.WriteString("; it changed no file.")
		} else {
			msg.WriteString(", and these files are as they were:")
			for _, p := range res.Restored {
				fmt.Fprintf(&msg, "\n- restored %s", p)
			}
			for _, p := range res.Removed {
				fmt.Fprintf(&msg, "\n- removed %s", p)
			}
		}
	}
	say(msg.String())
	return map[string]any{"stopReason": "end_turn"}, nil
}

// fork serves ACP's (unstable) session/fork: a new session from the
// source's whole conversation, opened here.
func (b *Bridge) fork(ctx context.Context, id string, servers []protocol.MCPServerSpec) (any, error) {
	d, err := b.daemon(ctx)
	if err != nil {
		return nil, err
	}
	var res protocol.SessionForkResult
	if err := d.Call(ctx, protocol.MethodSessionFork, protocol.SessionForkParams{SessionID: id}, &res); err != nil {
		return nil, acpError(err)
	}
	ns, err := d.NewSession(ctx, protocol.SessionNewParams{SessionID: res.SessionID, KeepSiblings: true, MCPServers: servers})
	if err != nil {
		return nil, acpError(err)
	}
	b.mu.Lock()
	b.live[ns.SessionID] = true
	b.on[ns.SessionID] = d
	b.mu.Unlock()
	return b.opened(ctx, *ns, true), nil
}
