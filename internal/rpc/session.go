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
	"github.com/zeroclaw/zeroclaw/internal/processes"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/scheduler"
	"github.com/zeroclaw/zeroclaw/internal/session"
)

// sessionNew serves session/new.
func (b *binding) sessionNew(ctx context.Context, p *protocol.SessionNewParams) (*protocol.SessionNewResult, error) {
	if b.peer.Remote {
		for _, sp := range p.MCPServers {
			if sp.Command != "" {
				return nil, &protocol.ParamsError{Field: "mcpServers", Reason: "a stdio MCP server would run on the daemon's machine: over the gateway only url (streamable HTTP) servers are accepted"}
			}
		}
	}
	return b.srv.sessions.New(ctx, b.client, *p)
}

// sessionPrompt serves session/prompt: it checks and queues the prompt
// (attachments stored, in the session's order), and the answer comes
// when its turn ends. A $/cancelRequest for it gives the prompt up as
// session/cancel would: its answer is then the cancelled turn's.
func (b *binding) sessionPrompt(ctx context.Context, p *protocol.SessionPromptParams) (waiting, error) {
	if p.Prompt == nil {
		return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
	}
	if err := protocol.CheckClientMessageID(p.ClientMessageID); err != nil {
		return nil, err
	}
	if err := b.refusePaths("attachments", p.Attachments); err != nil {
		return nil, err
	}
	var files []protocol.Attachment
	var resources []protocol.ResourceRef
	for _, a := range p.Attachments {
		if a.Resource != nil {
			resources = append(resources, *a.Resource) // read in the turn
		} else {
			files = append(files, a)
		}
	}
	text, images, err := b.withFiles(ctx, *p.Prompt, files)
	if err != nil {
		return nil, err
	}
	pending, err := b.srv.sessions.Submit(b.client, p.SessionID, session.Input{Text: text, Images: images, Resources: resources, ClientMessageID: p.ClientMessageID})
	if err != nil {
		return nil, err
	}
	// A stopping daemon waits for these answers to be written.
	b.srv.prompts.Add(1)
	return func(ctx context.Context) (any, error) {
		select {
		case res := <-pending.Done:
			return b.promptAnswer(res), nil
		case <-ctx.Done():
		}
		if !errors.Is(context.Cause(ctx), jsonrpc.ErrRequestCancelled) {
			b.srv.prompts.Add(-1)
			return nil, ctx.Err() // the connection is gone; the turn goes on
		}
		pending.Withdraw()
		return b.promptAnswer(<-pending.Done), nil
	}, nil
}

// sessionAwait serves session/await: the prompt's result once its turn
// ended, waited for off the session's lane (as a prompt's answer is).
func (b *binding) sessionAwait(_ context.Context, p *protocol.SessionAwaitParams) (waiting, error) {
	return func(ctx context.Context) (any, error) {
		res, err := b.srv.sessions.Await(ctx, b.client, p.SessionID, p.ClientMessageID)
		if err != nil {
			return nil, err
		}
		return b.cutResult(*res), nil
	}, nil
}

// cutResult is a prompt's result cut to the client's frame when its
// final text is longer (turn_complete, read with session/event, has it
// whole).
func (b *binding) cutResult(res protocol.SessionPromptResult) any {
	var out any = res
	if raw, err := jsonrpc.Marshal(res); err == nil {
		out = json.RawMessage(protocol.Cut(raw, b.conn.PeerMaxFrame()-128))
	}
	return out
}

// promptAnswer is a prompt's answer: cut to the client's frame when its
// final text is longer (turn_complete, read with session/event, has it
// whole).
func (b *binding) promptAnswer(res protocol.SessionPromptResult) any {
	return jsonrpc.Then{Result: b.cutResult(res), After: func() { b.srv.prompts.Add(-1) }}
}

// withFiles stores a prompt's (or steer's) files: the text with their
// markers, and the images among them.
func (b *binding) withFiles(ctx context.Context, text string, att []protocol.Attachment) (string, []session.Image, error) {
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

// withAttachments stores a steer's attachments: an MCP server's
// resources are read now (a text one joins the text, a binary one is
// attached as its bytes), the files stored.
func (b *binding) withAttachments(ctx context.Context, sid, text string, att []protocol.Attachment) (string, []session.Image, error) {
	if err := b.refusePaths("attachments", att); err != nil {
		return "", nil, err
	}
	var rest []protocol.Attachment
	for _, a := range att {
		if a.Resource == nil {
			rest = append(rest, a)
			continue
		}
		rt, blob, mime, err := b.srv.sessions.ReadResource(ctx, b.client, sid, a.Resource.Server, a.Resource.URI)
		if err != nil {
			return "", nil, err
		}
		if blob != nil {
			rest = append(rest, protocol.Attachment{DataB64: base64.StdEncoding.EncodeToString(blob), MimeType: mime, Filename: path.Base(a.Resource.URI)})
			continue
		}
		text = strings.TrimLeft(text+"\n\n[Resource: "+a.Resource.URI+"]\n"+rt, "\n")
	}
	return b.withFiles(ctx, text, rest)
}

// sessionMCP serves session/mcp.
func (b *binding) sessionMCP(ctx context.Context, p *protocol.SessionRef) (*protocol.SessionMCPResult, error) {
	return b.srv.sessions.MCPOffers(ctx, b.client, p.SessionID)
}

// sessionCancel serves session/cancel.
func (b *binding) sessionCancel(_ context.Context, p *protocol.SessionRef) (*protocol.SessionCancelResult, error) {
	ok, err := b.srv.sessions.Cancel(b.client, p.SessionID)
	if err != nil {
		return nil, err
	}
	return &protocol.SessionCancelResult{SessionID: p.SessionID, Cancelled: ok}, nil
}

// sessionClose serves session/close: it waits for a running turn to stop.
func (b *binding) sessionClose(_ context.Context, p *protocol.SessionRef) (*protocol.SessionCloseResult, error) {
	if err := b.srv.sessions.Close(b.client, p.SessionID); err != nil {
		return nil, err
	}
	return &protocol.SessionCloseResult{SessionID: p.SessionID, Closed: true}, nil
}

// sessionDelete serves session/delete.
func (b *binding) sessionDelete(ctx context.Context, p *protocol.SessionRef) (*protocol.SessionDeleteResult, error) {
	if err := b.srv.sessions.Delete(ctx, p.SessionID); err != nil {
		return nil, err
	}
	return &protocol.SessionDeleteResult{SessionID: p.SessionID, Deleted: true}, nil
}

// sessionApprove serves session/approve.
func (b *binding) sessionApprove(_ context.Context, p *protocol.SessionApproveParams) (*protocol.SessionApproveResult, error) {
	ok, err := b.srv.sessions.Approve(b.client, *p)
	if err != nil {
		return nil, err
	}
	return &protocol.SessionApproveResult{SessionID: p.SessionID, RequestID: p.RequestID, Accepted: ok}, nil
}

// sessionList serves session/list.
func (b *binding) sessionList(ctx context.Context, p *protocol.SessionListParams) (*protocol.SessionListResult, error) {
	return b.srv.archive.List(ctx, *p)
}

// sessionConfigure serves session/configure.
func (b *binding) sessionConfigure(ctx context.Context, p *protocol.SessionConfigureParams) (*protocol.SessionConfigureResult, error) {
	return b.srv.sessions.Configure(ctx, b.client, *p)
}

// models serves models.
func (b *binding) models(ctx context.Context, p *protocol.ModelsParams) (*protocol.ModelsResult, error) {
	return b.srv.sessions.Models(ctx, p.AgentAlias)
}

// sessionCompact serves session/compact.
func (b *binding) sessionCompact(ctx context.Context, p *protocol.SessionRef) (*protocol.SessionCompactResult, error) {
	return b.srv.sessions.Compact(ctx, b.client, p.SessionID)
}

// sessionRename serves session/rename.
func (b *binding) sessionRename(ctx context.Context, p *protocol.SessionRenameParams) (*protocol.SessionInfo, error) {
	return b.srv.sessions.Rename(ctx, p.SessionID, p.Title)
}

// sessionWatch serves session/watch.
func (b *binding) sessionWatch(context.Context, *noParams) (*protocol.SessionWatchResult, error) {
	b.srv.sessions.Watch(b.client)
	return &protocol.SessionWatchResult{Watching: true}, nil
}

// sessionGet serves session/get.
func (b *binding) sessionGet(ctx context.Context, p *protocol.SessionRef) (*protocol.SessionInfo, error) {
	return b.srv.archive.Get(ctx, p.SessionID)
}

// fileAttach serves file/attach.
func (b *binding) fileAttach(ctx context.Context, p *protocol.FileAttachParams) (*protocol.FileAttachResult, error) {
	entries := append(p.Files, p.Attachments...)
	if len(entries) == 0 {
		return nil, &protocol.ParamsError{Field: "files", Reason: "at least one file is required"}
	}
	if err := b.refusePaths("files", entries); err != nil {
		return nil, err
	}
	files, err := b.srv.uploads.SaveAll(ctx, entries)
	if err != nil {
		return nil, attachError(err)
	}
	return &protocol.FileAttachResult{Files: files}, nil
}

// fileUpload serves file/upload.
func (b *binding) fileUpload(_ context.Context, p *protocol.FileUploadParams) (*protocol.FileUploadResult, error) {
	return b.upload(*p)
}

// sessionHistory serves session/history.
func (b *binding) sessionHistory(ctx context.Context, p *protocol.SessionHistoryParams) (*protocol.SessionHistoryResult, error) {
	return b.srv.archive.History(ctx, *p, b.conn.PeerMaxFrame())
}

// sessionEvent serves session/event.
func (b *binding) sessionEvent(ctx context.Context, p *protocol.SessionEventParams) (*protocol.SessionEventResult, error) {
	return b.srv.archive.Event(ctx, *p, b.conn.PeerMaxFrame())
}

// maxUploads bounds the uploads one connection may have open at once.
const maxUploads = 4

// upload takes one part of a file sent in parts. Parts are taken in the
// read loop, in order; an upload left open dies with its connection.
func (b *binding) upload(p protocol.FileUploadParams) (*protocol.FileUploadResult, error) {
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
	res := &protocol.FileUploadResult{UploadID: u.ID, ReceivedBytes: u.Bytes()}
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

// sessionCheckpoints serves session/checkpoints.
func (b *binding) sessionCheckpoints(ctx context.Context, p *protocol.SessionRef) (*protocol.SessionCheckpointsResult, error) {
	return b.srv.rewind.List(ctx, b.client, p.SessionID)
}

// sessionRewind serves session/rewind.
func (b *binding) sessionRewind(ctx context.Context, p *protocol.SessionRewindParams) (*protocol.SessionRewindResult, error) {
	return b.srv.rewind.Rewind(ctx, b.client, *p)
}

// sessionDiff serves session/diff.
func (b *binding) sessionDiff(ctx context.Context, p *protocol.SessionDiffParams) (*protocol.SessionDiffResult, error) {
	return b.srv.rewind.Diff(ctx, b.client, *p)
}

// sessionFork serves session/fork.
func (b *binding) sessionFork(ctx context.Context, p *protocol.SessionForkParams) (*protocol.SessionForkResult, error) {
	return b.srv.archive.Fork(ctx, b.client.ID(), *p)
}

// sessionExport serves session/export.
func (b *binding) sessionExport(ctx context.Context, p *protocol.SessionExportParams) (*protocol.SessionExportResult, error) {
	return b.srv.archive.Export(ctx, *p)
}

// permissionsList serves permissions/list.
func (b *binding) permissionsList(_ context.Context, p *protocol.PermissionsListParams) (*protocol.PermissionsListResult, error) {
	res := &protocol.PermissionsListResult{Rules: b.srv.sessions.Permissions(p.Cwd)}
	if res.Rules == nil {
		res.Rules = []protocol.PermissionRule{}
	}
	return res, nil
}

// permissionsRevoke serves permissions/revoke: a stored answer goes (the
// config's rules are the config's to change).
func (b *binding) permissionsRevoke(_ context.Context, p *protocol.PermissionsRevokeParams) (*protocol.PermissionsRevokeResult, error) {
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
	return &protocol.PermissionsRevokeResult{ID: p.ID, Revoked: ok}, nil
}

// sessionSteer serves session/steer.
func (b *binding) sessionSteer(ctx context.Context, p *protocol.SessionSteerParams) (*protocol.SessionSteerResult, error) {
	if p.Prompt == nil || (strings.TrimSpace(*p.Prompt) == "" && len(p.Attachments) == 0) {
		return nil, &protocol.ParamsError{Field: "prompt", Reason: "is required"}
	}
	text, images, err := b.withAttachments(ctx, p.SessionID, *p.Prompt, p.Attachments)
	if err != nil {
		return nil, err
	}
	p.Prompt = &text
	return b.srv.sessions.Steer(ctx, b.client, *p, images...)
}

// sessionQueue serves session/queue.
func (b *binding) sessionQueue(_ context.Context, p *protocol.SessionRef) (*protocol.SessionQueueResult, error) {
	return b.srv.sessions.Queue(b.client, p.SessionID)
}

// processList serves process/list.
func (b *binding) processList(_ context.Context, p *protocol.SessionRef) (*protocol.ProcessListResult, error) {
	return processes.List(b.srv.sessions, b.client, p.SessionID)
}

// processOutput serves process/output.
// With waitMs it waits off the session's lane (as a prompt does): the
// session's other calls go on meanwhile.
func (b *binding) processOutput(_ context.Context, p *protocol.ProcessOutputParams) (waiting, error) {
	if p.WaitMs == 0 {
		res, err := processes.Output(b.srv.sessions, b.client, *p)
		if err != nil {
			return nil, err
		}
		return func(context.Context) (any, error) { return res, nil }, nil
	}
	wait, err := processes.OutputWait(b.srv.sessions, b.client, *p)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (any, error) { return wait(ctx), nil }, nil
}

// processKill serves process/kill.
func (b *binding) processKill(_ context.Context, p *protocol.ProcessKillParams) (*protocol.ProcessKillResult, error) {
	return processes.Kill(b.srv.sessions, b.client, *p)
}

// processWrite serves process/write.
func (b *binding) processWrite(_ context.Context, p *protocol.ProcessWriteParams) (*protocol.ProcessWriteResult, error) {
	return processes.Write(b.srv.sessions, b.client, *p)
}

// sessionQueueRemove serves session/queue/remove.
func (b *binding) sessionQueueRemove(_ context.Context, p *protocol.SessionQueueRemoveParams) (*protocol.SessionQueueResult, error) {
	if p.ID == "" {
		return nil, &protocol.ParamsError{Field: "id", Reason: "is required (session/queue/clear removes them all)"}
	}
	return b.srv.sessions.QueueRemove(b.client, p.SessionID, p.ID)
}

// sessionQueueClear serves session/queue/clear.
func (b *binding) sessionQueueClear(_ context.Context, p *protocol.SessionRef) (*protocol.SessionQueueResult, error) {
	return b.srv.sessions.QueueRemove(b.client, p.SessionID, "")
}

// sessionQueueSteer serves session/queue/steer.
func (b *binding) sessionQueueSteer(ctx context.Context, p *protocol.SessionQueueSteerParams) (*protocol.SessionSteerResult, error) {
	if (p.ID == "") == (p.ClientMessageID == "") {
		return nil, &protocol.ParamsError{Field: "id", Reason: "name the queued prompt by id or by clientMessageId (one of them)"}
	}
	if err := protocol.CheckClientMessageID(p.ClientMessageID); err != nil {
		return nil, err
	}
	return b.srv.sessions.QueueSteer(ctx, b.client, p.SessionID, p.ID, p.ClientMessageID)
}

// Schedules (issue 38): the scheduler's methods.

func (b *binding) schedules() (*scheduler.Scheduler, error) {
	if b.srv.schedules == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, nil, "this daemon runs no schedules")
	}
	return b.srv.schedules, nil
}

func (b *binding) scheduleCreate(ctx context.Context, p *protocol.ScheduleFields) (*protocol.ScheduleResult, error) {
	s, err := b.schedules()
	if err != nil {
		return nil, err
	}
	sc, err := s.Create(ctx, *p)
	if err != nil {
		return nil, err
	}
	return &protocol.ScheduleResult{Schedule: sc}, nil
}

func (b *binding) scheduleList(_ context.Context, p *protocol.ScheduleListParams) (*protocol.ScheduleListResult, error) {
	s, err := b.schedules()
	if err != nil {
		return nil, err
	}
	page, next, err := s.List(p.Cursor)
	if err != nil {
		return nil, err
	}
	return &protocol.ScheduleListResult{Schedules: page, NextCursor: next}, nil
}

func (b *binding) scheduleUpdate(ctx context.Context, p *protocol.ScheduleUpdateParams) (*protocol.ScheduleResult, error) {
	s, err := b.schedules()
	if err != nil {
		return nil, err
	}
	sc, err := s.Update(ctx, *p)
	if err != nil {
		return nil, err
	}
	return &protocol.ScheduleResult{Schedule: sc}, nil
}

func (b *binding) scheduleDelete(_ context.Context, p *protocol.ScheduleRef) (*protocol.ScheduleDeleteResult, error) {
	s, err := b.schedules()
	if err != nil {
		return nil, err
	}
	found, err := s.Delete(p.ScheduleID)
	if err != nil {
		return nil, err
	}
	return &protocol.ScheduleDeleteResult{Deleted: found}, nil
}

func (b *binding) scheduleRun(_ context.Context, p *protocol.ScheduleRef) (*protocol.ScheduleResult, error) {
	s, err := b.schedules()
	if err != nil {
		return nil, err
	}
	sc, err := s.RunNow(p.ScheduleID)
	if err != nil {
		return nil, err
	}
	return &protocol.ScheduleResult{Schedule: sc}, nil
}

// Goals (issue 38).

func (b *binding) sessionGoal(_ context.Context, p *protocol.SessionGoalParams) (*protocol.SessionGoalResult, error) {
	return b.srv.goals.Set(b.client, *p)
}

func (b *binding) sessionGoalPause(_ context.Context, p *protocol.SessionRef) (*protocol.SessionGoalResult, error) {
	return b.srv.goals.Pause(b.client, p.SessionID)
}

func (b *binding) sessionGoalResume(_ context.Context, p *protocol.SessionRef) (*protocol.SessionGoalResult, error) {
	return b.srv.goals.Resume(b.client, p.SessionID)
}

func (b *binding) sessionGoalClear(_ context.Context, p *protocol.SessionGoalClearParams) (*protocol.SessionGoalResult, error) {
	return b.srv.goals.Clear(b.client, p.SessionID, p.Keep)
}
