package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Replay calls fn with every stored event of session id after seq since,
// in order, up to seq until (0: to the end), and returns the last seq it
// replayed. It reads the history page by page (each page within half the
// frame limit, so memory stays bounded whatever the session holds), and
// an event the daemon cut to fit a frame is read whole with session/event
// before fn sees it. It is the one replay of the CLI's sessions show and
// reconnect and of the ACP bridge's session/load.
func (c *Client) Replay(ctx context.Context, id string, since, until int64, fn func(ev json.RawMessage, u protocol.SessionUpdate) error) (int64, error) {
	last := since
	for until <= 0 || last < until {
		var h protocol.SessionHistoryResult
		if err := c.Call(ctx, protocol.MethodSessionHistory, protocol.SessionHistoryParams{SessionID: id, SinceSeq: last}, &h); err != nil {
			return last, err
		}
		for _, ev := range h.Events {
			u, err := protocol.ParseUpdate(ev)
			if err != nil {
				return last, fmt.Errorf("session %s: event after %d: %w", id, last, err)
			}
			if until > 0 && u.Seq > until {
				return last, nil
			}
			if u.Cut != nil {
				whole, err := c.Event(ctx, id, u.Seq)
				if err != nil {
					return last, err
				}
				ev = whole
				if u, err = protocol.ParseUpdate(ev); err != nil {
					return last, fmt.Errorf("session %s: event %d: %w", id, last, err)
				}
			}
			if err := fn(ev, u); err != nil {
				return last, err
			}
			last = u.Seq
		}
		if !h.More || len(h.Events) == 0 {
			return last, nil
		}
	}
	return last, nil
}

// Event reads one stored event whole (session/event, part by part).
func (c *Client) Event(ctx context.Context, id string, seq int64) (json.RawMessage, error) {
	var whole bytes.Buffer
	for {
		var p protocol.SessionEventResult
		if err := c.Call(ctx, protocol.MethodSessionEvent, protocol.SessionEventParams{SessionID: id, Seq: seq, Offset: int64(whole.Len())}, &p); err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(p.DataB64)
		if err != nil {
			return nil, fmt.Errorf("session %s: event %d: %w", id, seq, err)
		}
		whole.Write(b)
		if !p.More || len(b) == 0 {
			return whole.Bytes(), nil
		}
	}
}

// inlineMax is the largest base64 attachment sent inside a prompt; bigger
// ones go first by file/upload, in parts that fit a frame.
const inlineMax = 1 << 20

// Inline returns files with every big dataB64 attachment uploaded in
// parts (file/upload) and replaced by its refId, so that a prompt with
// attachments up to the daemon's per-file limit fits in one frame.
func (c *Client) Inline(ctx context.Context, files []protocol.Attachment) ([]protocol.Attachment, error) {
	out := make([]protocol.Attachment, len(files))
	for i, f := range files {
		out[i] = f
		if len(f.DataB64) <= inlineMax {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(f.DataB64)
		if err != nil {
			return nil, fmt.Errorf("attachments[%d]: dataB64 is not base64: %w", i, err)
		}
		ref, err := c.Upload(ctx, data, f.Filename, f.MimeType)
		if err != nil {
			return nil, fmt.Errorf("attachments[%d]: %w", i, err)
		}
		out[i] = protocol.Attachment{RefID: ref, Filename: f.Filename, MimeType: f.MimeType}
	}
	return out, nil
}

// Upload sends data with file/upload in parts that fit the daemon's frame
// limit and returns the stored file's refId.
func (c *Client) Upload(ctx context.Context, data []byte, filename, mimeType string) (string, error) {
	part := 1 << 20
	if n := c.Init.MaxFrameBytes; n > 0 {
		part = max(n/2/4*3, 16<<10)
	}
	var res protocol.FileUploadResult
	for off := 0; ; {
		end := min(off+part, len(data))
		p := protocol.FileUploadParams{UploadID: res.UploadID, DataB64: base64.StdEncoding.EncodeToString(data[off:end]),
			Final: end == len(data), Filename: filename, MimeType: mimeType}
		if err := c.Call(ctx, protocol.MethodFileUpload, p, &res); err != nil {
			return "", err
		}
		if p.Final {
			if res.File == nil || res.File.RefID == "" {
				return "", fmt.Errorf("file/upload: no file in the final answer")
			}
			return res.File.RefID, nil
		}
		off = end
	}
}
