package rpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/attach"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// sessionNew serves session/new.
func (b *binding) sessionNew(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionNewParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	if b.peer.Remote {
		for _, sp := range p.MCPServers {
			if sp.Command != "" {
				return nil, &protocol.ParamsError{Field: "mcpServers", Reason: "a stdio MCP server would run on the daemon's machine: over the gateway only url (streamable HTTP) servers are accepted"}
			}
		}
	}
	return m.New(ctx, b.client, p)
}

// sessionPrompt serves session/prompt.
func (b *binding) sessionPrompt(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionPromptParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	if p.Prompt == nil {
		return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
	}
	text, images, err := b.withAttachments(ctx, p.SessionID, *p.Prompt, p.Attachments)
	if err != nil {
		return nil, err
	}
	done, err := m.Prompt(b.client, p.SessionID, text, images...)
	if err != nil {
		return nil, err
	}
	// The turn runs on; this connection's read loop does not wait. A
	// stopping daemon waits for these answers to be written.
	b.srv.prompts.Add(1)
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		select {
		case res := <-done:
			// The final text can be longer than the client's frame:
			// then it is cut; turn_complete (session/event) has it whole.
			var out any = res
			if raw, err := jsonrpc.Marshal(res); err == nil {
				out = json.RawMessage(protocol.Cut(raw, b.conn.PeerMaxFrame()-len(req.ID.Raw())-64))
			}
			return jsonrpc.Then{Result: out, After: func() { b.srv.prompts.Add(-1) }}, nil
		case <-ctx.Done():
			b.srv.prompts.Add(-1)
			return nil, ctx.Err() // the connection is gone; the turn goes on
		}
	}), nil
}

// withAttachments stores a prompt's attachments: the text with their
// markers, and the images among them.
func (b *binding) withAttachments(ctx context.Context, sid, text string, att []protocol.Attachment) (string, []session.Image, error) {
	if err := b.refusePaths("attachments", att); err != nil {
		return "", nil, err
	}
	// An MCP server's resources are read now: a text one joins the
	// prompt, a binary one is attached as its bytes.
	var rest []protocol.Attachment
	for _, a := range att {
		if a.Resource == nil {
			rest = append(rest, a)
			continue
		}
		rt, blob, mime, err := b.srv.sessions.ReadResource(ctx, b.client, sid, a.Resource.Server, a.Resource.URI)
		if err != nil {
			return "", nil, wire(err)
		}
		if blob != nil {
			rest = append(rest, protocol.Attachment{DataB64: base64.StdEncoding.EncodeToString(blob), MimeType: mime, Filename: path.Base(a.Resource.URI)})
			continue
		}
		text = strings.TrimLeft(text+"\n\n[Resource: "+a.Resource.URI+"]\n"+rt, "\n")
	}
	att = rest
	if len(att) == 0 {
		return text, nil, nil
	}
	files, err := b.srv.uploads.SaveAll(ctx, att)
	if err != nil {
		return "", nil, attachError(err)
	}
	text = strings.TrimRight(text+"\n\n"+attach.Markers(files), "\n")
	text = strings.TrimLeft(text, "\n")
	var images []session.Image
	for _, f := range files {
		if strings.HasPrefix(f.MimeType, "image/") {
			images = append(images, session.Image{MimeType: f.MimeType, Path: f.Path})
		}
	}
	return text, images, nil
}

// sessionMCP serves session/mcp.
func (b *binding) sessionMCP(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	// It asks the servers: off the connection's read loop.
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := b.srv.sessions.MCPOffers(ctx, b.client, p.SessionID)
		return res, wire(err)
	}), nil
}

// sessionCancel serves session/cancel.
func (b *binding) sessionCancel(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	ok, err := m.Cancel(b.client, p.SessionID)
	if err != nil {
		return nil, err
	}
	return protocol.SessionCancelResult{SessionID: p.SessionID, Cancelled: ok}, nil
}

// sessionClose serves session/close.
func (b *binding) sessionClose(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	// Closing waits for a running turn to stop: off the read loop.
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		if err := m.Close(b.client, p.SessionID); err != nil {
			return nil, wire(err)
		}
		return protocol.SessionCloseResult{SessionID: p.SessionID, Closed: true}, nil
	}), nil
}

// sessionDelete serves session/delete.
func (b *binding) sessionDelete(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		if err := m.Delete(ctx, p.SessionID); err != nil {
			return nil, wire(err)
		}
		return protocol.SessionDeleteResult{SessionID: p.SessionID, Deleted: true}, nil
	}), nil
}

// sessionApprove serves session/approve.
func (b *binding) sessionApprove(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionApproveParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	ok, err := m.Approve(b.client, p)
	if err != nil {
		return nil, err
	}
	return protocol.SessionApproveResult{SessionID: p.SessionID, RequestID: p.RequestID, Accepted: ok}, nil
}

// sessionList serves session/list.
func (b *binding) sessionList(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionListParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	return m.List(ctx, p)
}

// sessionConfigure serves session/configure.
func (b *binding) sessionConfigure(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionConfigureParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return m.Configure(ctx, b.client, p)
}

// models serves models.
func (b *binding) models(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.ModelsParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := m.Models(ctx, p.AgentAlias)
		return res, wire(err)
	}), nil
}

// sessionCompact serves session/compact.
func (b *binding) sessionCompact(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := m.Compact(ctx, b.client, p.SessionID)
		return res, wire(err)
	}), nil
}

// sessionRename serves session/rename.
func (b *binding) sessionRename(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionRenameParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := m.Rename(ctx, p.SessionID, p.Title)
		return res, wire(err)
	}), nil
}

// sessionWatch serves session/watch.
func (b *binding) sessionWatch(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	m.Watch(b.client)
	return protocol.SessionWatchResult{Watching: true}, nil
}

// sessionGet serves session/get.
func (b *binding) sessionGet(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return m.Get(ctx, p.SessionID)
}

// fileAttach serves file/attach.
func (b *binding) fileAttach(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.FileAttachParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	entries := append(p.Files, p.Attachments...)
	if len(entries) == 0 {
		return nil, &protocol.ParamsError{Field: "files", Reason: "at least one file is required"}
	}
	if err := b.refusePaths("files", entries); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		files, err := b.srv.uploads.SaveAll(ctx, entries)
		if err != nil {
			return nil, wire(attachError(err))
		}
		return protocol.FileAttachResult{Files: files}, nil
	}), nil
}

// fileUpload serves file/upload.
func (b *binding) fileUpload(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.FileUploadParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	return b.upload(p)
}

// sessionHistory serves session/history.
func (b *binding) sessionHistory(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionHistoryParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return m.History(ctx, p, b.conn.PeerMaxFrame())
}

// sessionEvent serves session/event.
func (b *binding) sessionEvent(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	var p protocol.SessionEventParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return m.Event(ctx, p, b.conn.PeerMaxFrame())
}

// maxUploads bounds the uploads one connection may have open at once.
const maxUploads = 4

// upload takes one part of a file sent in parts. Parts are taken in the
// read loop, in order; an upload left open dies with its connection.
func (b *binding) upload(p protocol.FileUploadParams) (any, error) {
	data, err := base64.StdEncoding.DecodeString(p.DataB64)
	if err != nil {
		return nil, &protocol.ParamsError{Field: "dataB64", Reason: "is not base64: " + err.Error()}
	}
	b.mu.Lock()
	u := b.uploads[p.UploadID]
	if p.UploadID != "" && u == nil {
		b.mu.Unlock()
		return nil, &protocol.ParamsError{Field: "uploadId", Reason: fmt.Sprintf("%q: no such upload on this connection", p.UploadID)}
	}
	if u == nil {
		if len(b.uploads) >= maxUploads {
			b.mu.Unlock()
			return nil, &protocol.ParamsError{Field: "uploadId", Reason: fmt.Sprintf("%d uploads are open already; finish one first", maxUploads)}
		}
		if u, err = b.srv.uploads.Begin(); err != nil {
			b.mu.Unlock()
			return nil, err
		}
		if b.uploads == nil {
			b.uploads = map[string]*attach.Upload{}
		}
		b.uploads[u.ID] = u
	}
	b.mu.Unlock()
	drop := func() {
		b.mu.Lock()
		delete(b.uploads, u.ID)
		b.mu.Unlock()
	}
	if err := u.Write(data); err != nil {
		drop()
		u.Abort()
		return nil, &protocol.ParamsError{Field: "dataB64", Reason: err.Error()}
	}
	res := protocol.FileUploadResult{UploadID: u.ID, ReceivedBytes: u.Bytes()}
	if p.Final {
		drop()
		f, err := u.Finish(p.Filename, p.MimeType)
		if err != nil {
			return nil, err
		}
		res.File = &f
	}
	return res, nil
}

// attachError turns a refused attachment into a params error.
func attachError(err error) error {
	var ae *attach.Error
	if errors.As(err, &ae) {
		return &protocol.ParamsError{Field: fmt.Sprintf("attachments[%d]", ae.Index), Reason: ae.Reason}
	}
	return err
}

// decodeRef decodes params that must name a session.
func decodeRef(req *jsonrpc.Request, v any, id *string) error {
	if err := protocol.Decode(req.Params, v); err != nil {
		return err
	}
	if *id == "" {
		return &protocol.ParamsError{Field: "sessionId", Reason: "is required"}
	}
	return nil
}

// sessionCheckpoints serves session/checkpoints.
func (b *binding) sessionCheckpoints(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	res, err := b.srv.sessions.Checkpoints(ctx, b.client, p.SessionID)
	return res, wire(err)
}

// sessionRewind serves session/rewind: files are written, so it runs off
// the connection's read loop.
func (b *binding) sessionRewind(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionRewindParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := b.srv.sessions.Rewind(ctx, b.client, p)
		return res, wire(err)
	}), nil
}

// sessionDiff serves session/diff.
func (b *binding) sessionDiff(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionDiffParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := b.srv.sessions.Diff(ctx, b.client, p)
		return res, wire(err)
	}), nil
}

// sessionFork serves session/fork: it copies the history, off the read
// loop.
func (b *binding) sessionFork(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionForkParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := b.srv.sessions.Fork(ctx, b.client, p)
		return res, wire(err)
	}), nil
}

// sessionExport serves session/export.
func (b *binding) sessionExport(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionExportParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		res, err := b.srv.sessions.Export(ctx, p)
		return res, wire(err)
	}), nil
}

// permissionsList serves permissions/list.
func (b *binding) permissionsList(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.PermissionsListParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	res := protocol.PermissionsListResult{Rules: []protocol.PermissionRule{}}
	for _, r := range b.srv.sessions.Permissions(p.Cwd) {
		res.Rules = append(res.Rules, protocol.PermissionRule{ID: r.ID, Tool: r.Tool, Pattern: r.Pattern, Decision: r.Decision, Dir: r.Dir, Origin: r.Origin})
	}
	return res, nil
}

// permissionsRevoke serves permissions/revoke: a stored answer goes (the
// config's rules are the config's to change).
func (b *binding) permissionsRevoke(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.PermissionsRevokeParams
	if err := protocol.Decode(req.Params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, &protocol.ParamsError{Field: "id", Reason: "is required (zeroclaw permissions list shows them)"}
	}
	if strings.HasPrefix(p.ID, "config#") {
		return nil, &protocol.ParamsError{Field: "id", Reason: p.ID + " is a rule of config.toml: change it there"}
	}
	ok, err := b.srv.sessions.Revoke(p.ID)
	if err != nil {
		return nil, err
	}
	return protocol.PermissionsRevokeResult{ID: p.ID, Revoked: ok}, nil
}

// sessionSteer serves session/steer.
func (b *binding) sessionSteer(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionSteerParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	if p.Prompt == nil || (strings.TrimSpace(*p.Prompt) == "" && len(p.Attachments) == 0) {
		return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
	}
	text, images, err := b.withAttachments(ctx, p.SessionID, *p.Prompt, p.Attachments)
	if err != nil {
		return nil, err
	}
	p.Prompt = &text
	res, err := b.srv.sessions.Steer(ctx, b.client, p, images...)
	return res, wire(err)
}

// sessionQueue serves session/queue.
func (b *binding) sessionQueue(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	res, err := b.srv.sessions.Queue(b.client, p.SessionID)
	return res, wire(err)
}

// sessionQueueRemove serves session/queue/remove.
func (b *binding) sessionQueueRemove(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionQueueRemoveParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, wire(&protocol.ParamsError{Field: "id", Reason: "is required (session/queue/clear removes them all)"})
	}
	res, err := b.srv.sessions.QueueRemove(b.client, p.SessionID, p.ID)
	return res, wire(err)
}

// sessionQueueClear serves session/queue/clear.
func (b *binding) sessionQueueClear(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionRef
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	res, err := b.srv.sessions.QueueRemove(b.client, p.SessionID, "")
	return res, wire(err)
}

// sessionQueueSteer serves session/queue/steer.
func (b *binding) sessionQueueSteer(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.SessionQueueRemoveParams
	if err := decodeRef(req, &p, &p.SessionID); err != nil {
		return nil, err
	}
	res, err := b.srv.sessions.QueueSteer(b.client, p.SessionID, p.ID)
	return res, wire(err)
}
