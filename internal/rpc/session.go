package rpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/attach"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// session serves the session methods.
func (b *binding) session(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m := b.srv.sessions
	switch req.Method {
	case protocol.MethodSessionNew:
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

	case protocol.MethodSessionPrompt:
		var p protocol.SessionPromptParams
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		if p.Prompt == nil {
			return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
		}
		text := *p.Prompt
		var images []provider.Image
		if err := b.refusePaths("attachments", p.Attachments); err != nil {
			return nil, err
		}
		if len(p.Attachments) > 0 {
			files, err := b.srv.uploads.SaveAll(ctx, p.Attachments)
			if err != nil {
				return nil, attachError(err)
			}
			text = strings.TrimRight(text+"\n\n"+attach.Markers(files), "\n")
			text = strings.TrimLeft(text, "\n")
			for _, f := range files {
				if strings.HasPrefix(f.MimeType, "image/") {
					images = append(images, provider.Image{MimeType: f.MimeType, Path: f.Path})
				}
			}
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

	case protocol.MethodSessionCancel:
		var p protocol.SessionRef
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		ok, err := m.Cancel(b.client, p.SessionID)
		if err != nil {
			return nil, err
		}
		return protocol.SessionCancelResult{SessionID: p.SessionID, Cancelled: ok}, nil

	case protocol.MethodSessionClose:
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

	case protocol.MethodSessionDelete:
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

	case protocol.MethodSessionApprove:
		var p protocol.SessionApproveParams
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		ok, err := m.Approve(b.client, p)
		if err != nil {
			return nil, err
		}
		return protocol.SessionApproveResult{SessionID: p.SessionID, RequestID: p.RequestID, Accepted: ok}, nil

	case protocol.MethodSessionList:
		var p protocol.SessionListParams
		if err := protocol.Decode(req.Params, &p); err != nil {
			return nil, err
		}
		return m.List(ctx, p)

	case protocol.MethodSessionConfigure:
		var p protocol.SessionConfigureParams
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		return m.Configure(ctx, b.client, p)

	case protocol.MethodModels:
		var p protocol.ModelsParams
		if err := protocol.Decode(req.Params, &p); err != nil {
			return nil, err
		}
		return jsonrpc.Later(func(ctx context.Context) (any, error) {
			res, err := m.Models(ctx, p.AgentAlias)
			return res, wire(err)
		}), nil

	case protocol.MethodSessionCompact:
		var p protocol.SessionRef
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		return jsonrpc.Later(func(ctx context.Context) (any, error) {
			res, err := m.Compact(ctx, b.client, p.SessionID)
			return res, wire(err)
		}), nil

	case protocol.MethodSessionRename:
		var p protocol.SessionRenameParams
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		return jsonrpc.Later(func(ctx context.Context) (any, error) {
			res, err := m.Rename(ctx, p.SessionID, p.Title)
			return res, wire(err)
		}), nil

	case protocol.MethodSessionWatch:
		m.Watch(b.client)
		return protocol.SessionWatchResult{Watching: true}, nil

	case protocol.MethodSessionGet:
		var p protocol.SessionRef
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		return m.Get(ctx, p.SessionID)

	case protocol.MethodFileAttach:
		var p struct {
			Files       []protocol.Attachment `json:"files"`
			Attachments []protocol.Attachment `json:"attachments"`
		}
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
			return map[string]any{"files": files}, nil
		}), nil

	case protocol.MethodFileUpload:
		var p protocol.FileUploadParams
		if err := protocol.Decode(req.Params, &p); err != nil {
			return nil, err
		}
		return b.upload(p)

	case protocol.MethodSessionHistory:
		var p protocol.SessionHistoryParams
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		return m.History(ctx, p, b.conn.PeerMaxFrame())

	case protocol.MethodSessionEvent:
		var p protocol.SessionEventParams
		if err := decodeRef(req, &p, &p.SessionID); err != nil {
			return nil, err
		}
		return m.Event(ctx, p, b.conn.PeerMaxFrame())
	}
	return nil, jsonrpc.ErrMethodNotFound
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
		res.File, _ = json.Marshal(f)
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
