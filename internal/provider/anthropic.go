package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// Anthropic speaks the Messages API with streaming.
type Anthropic struct {
	name, base, model string
	maxTokens         int
	reasoning         string // the configured level ("", "off": no thinking)
	cache             bool   // prompt-cache breakpoints sent
	http              *httpClient
}

func newAnthropic(name string, p config.Provider, getenv func(string) string) *Anthropic {
	base := strings.TrimSuffix(p.BaseURL, "/")
	if base == "" {
		base = "https://api.anthropic.com"
	}
	base = strings.TrimSuffix(base, "/v1")
	headers := map[string]string{"anthropic-version": "2023-06-01"}
	if p.APIKeyEnv != "" {
		if key := getenv(p.APIKeyEnv); key != "" {
			headers["x-api-key"] = key
		}
	}
	model := p.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	return &Anthropic{name: name, base: base, model: model, maxTokens: cmp.Or(p.MaxTokens, 8192), reasoning: p.Reasoning,
		cache: p.PromptCache == nil || *p.PromptCache, http: newHTTPClient(name, base+"/v1/messages", headers)}
}

// ContextWindow implements Provider.
func (*Anthropic) ContextWindow(string) int64 { return 200000 }

// Info implements Provider.
func (a *Anthropic) Info() Info {
	return Info{Name: a.name, Kind: config.KindAnthropic, Model: a.model, URL: a.base, MaxTokens: a.maxTokens}
}

// Models implements Provider: GET <base_url>/v1/models.
func (a *Anthropic) Models(ctx context.Context) ([]string, error) {
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := a.http.getJSON(ctx, a.base+"/v1/models?limit=1000", &body); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(body.Data))
	for _, m := range body.Data {
		out = append(out, m.ID)
	}
	return out, nil
}

type anBlock struct {
	Type      string          `json:"type"`
	Source    map[string]any  `json:"source,omitempty"` // image
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"` // a string, or blocks (a tool result's images)
	IsError   bool            `json:"is_error,omitempty"`
	// CacheControl marks a prompt-cache breakpoint.
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	raw          json.RawMessage // a block sent back as it came (thinking)
}

type cacheControl struct {
	Type string `json:"type"`
}

// ephemeral is Anthropic's (5-minute) cache breakpoint.
var ephemeral = &cacheControl{Type: "ephemeral"}

func (b anBlock) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type plain anBlock // the fields, without this method
	return json.Marshal(plain(b))
}

// anEncoded is a transcript message as Messages API content blocks: its
// role and each block's bytes; lastPlain is the last block that may take
// a cache breakpoint (not one sent back as it came), -1 when none.
type anEncoded struct {
	role      string
	blocks    [][]byte
	lastPlain int
}

// encode is m as content blocks, encoded once (see wire).
func (a *Anthropic) encode(m *Message) (*anEncoded, error) {
	if m.wire != nil {
		if e := m.wire.anthropic.Load(); e != nil {
			return e, nil
		}
	}
	var blocks []anBlock
	role := "user"
	switch m.Role {
	case RoleUser:
		for _, im := range m.Images {
			data, err := im.data()
			if err != nil {
				return nil, a.http.fail(0, "image %s: %v", im.Path, err)
			}
			blocks = append(blocks, anBlock{Type: "image", Source: map[string]any{"type": "base64", "media_type": im.MimeType, "data": data}})
		}
		blocks = append(blocks, anBlock{Type: "text", Text: nonEmpty(m.Text)})
	case RoleAssistant:
		role = "assistant"
		// Thinking before tool use goes back first and unchanged:
		// Anthropic requires it with the tool results.
		if m.Reasoning != nil && len(m.ToolCalls) > 0 {
			for _, raw := range m.Reasoning.Blocks {
				blocks = append(blocks, anBlock{raw: raw})
			}
		}
		if m.Text != "" || len(m.ToolCalls) == 0 {
			blocks = append(blocks, anBlock{Type: "text", Text: nonEmpty(m.Text)})
		}
		for _, tc := range m.ToolCalls {
			blocks = append(blocks, anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: tc.Input})
		}
	case RoleTool: // tool results travel as user content
		var content any = nonEmpty(m.Text)
		if len(m.Images) > 0 { // its images go in the result
			parts := []anBlock{{Type: "text", Text: nonEmpty(m.Text)}}
			for _, im := range m.Images {
				data, err := im.data()
				if err != nil {
					return nil, a.http.fail(0, "image %s: %v", im.Path, err)
				}
				parts = append(parts, anBlock{Type: "image", Source: map[string]any{"type": "base64", "media_type": im.MimeType, "data": data}})
			}
			content = parts
		}
		blocks = append(blocks, anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: content, IsError: m.IsError})
	}
	e := &anEncoded{role: role, lastPlain: -1}
	for i, b := range blocks {
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, a.http.fail(0, "encode request: %v", err)
		}
		e.blocks = append(e.blocks, raw)
		if b.raw == nil {
			e.lastPlain = i
		}
	}
	if m.kept() {
		m.wire.anthropic.Store(e)
	}
	return e, nil
}

// breakpoint is what a block's last brace becomes to carry a prompt-cache
// breakpoint: the bytes json.Marshal gives anBlock with CacheControl set
// (its last field).
const breakpoint = `,"cache_control":{"type":"ephemeral"}}`

func (a *Anthropic) request(req Request) ([]byte, error) {
	encs := make([]*anEncoded, 0, len(req.Messages))
	size := 0
	for i := range req.Messages {
		e, err := a.encode(&req.Messages[i])
		if err != nil {
			return nil, err
		}
		if len(e.blocks) == 0 {
			continue
		}
		encs = append(encs, e)
		size += len(`{"role":"assistant","content":[]},`) + len(breakpoint)
		for _, b := range e.blocks {
			size += len(b) + 1
		}
	}
	maxTokens := cmp.Or(req.MaxTokens, a.maxTokens)
	head := map[string]any{
		"model":  cmp.Or(req.Model, a.model),
		"stream": true,
	}
	// Extended thinking: a budget by level, under max_tokens (raised
	// above the budget when it is not).
	if budget := thinkingBudget[cmp.Or(req.Reasoning, a.reasoning)]; budget > 0 {
		head["thinking"] = map[string]any{"type": "enabled", "budget_tokens": budget}
		if maxTokens <= budget {
			maxTokens = budget + 8192
		}
	}
	head["max_tokens"] = maxTokens
	// Prompt caching: breakpoints after the system prompt, after the
	// tools and on the conversation's last block (it moves forward each
	// call; the next call reads the prefix this one wrote): three of
	// Anthropic's four.
	if req.System != "" {
		if a.cache {
			head["system"] = []anBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
		} else {
			head["system"] = req.System
		}
	}
	if len(req.Tools) > 0 {
		var tools []map[string]any
		for _, t := range req.Tools {
			tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Schema})
		}
		if a.cache {
			tools[len(tools)-1]["cache_control"] = ephemeral
		}
		head["tools"] = tools
	}
	body, err := withMessages(head, size, func(out []byte) []byte {
		for i, e := range encs {
			// Consecutive blocks of one role form one message.
			if i == 0 || encs[i-1].role != e.role {
				if i > 0 {
					out = append(out, "]},"...)
				}
				out = append(out, `{"role":"`...)
				out = append(out, e.role...)
				out = append(out, `","content":[`...)
			} else {
				out = append(out, ',')
			}
			for j, b := range e.blocks {
				if j > 0 {
					out = append(out, ',')
				}
				if a.cache && i == len(encs)-1 && j == e.lastPlain {
					out = append(append(out, b[:len(b)-1]...), breakpoint...)
					continue
				}
				out = append(out, b...)
			}
		}
		if len(encs) > 0 {
			out = append(out, "]}"...)
		}
		return out
	})
	if err != nil {
		return nil, a.http.fail(0, "encode request: %v", err)
	}
	return body, nil
}

// The API refuses empty text blocks.
func nonEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}

type anEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage anUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"` // redacted_thinking
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	// Usage of message_delta: cumulative; some servers put the input
	// there too.
	Usage anUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// Stream implements Provider.
func (a *Anthropic) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	resp := &Response{}
	st := &anStream{a: a, onDelta: onDelta, blocks: map[int]*anStreamBlock{}}
	body, err := a.request(req)
	if err != nil {
		return resp, err
	}
	err = a.http.sse(ctx, body, st.event)
	resp.Text = st.text.String()
	resp.Usage = st.usage.usage()
	if err != nil {
		return resp, err
	}
	if !st.complete {
		return resp, a.http.fail(0, "stream ended before message_stop")
	}
	resp.Reasoning = st.reasoning()
	if err := st.toolCalls(resp); err != nil {
		return resp, err
	}
	resp.StopReason = st.stopReason()
	return resp, nil
}

// anStream is one Messages stream as it is read: the reply's text so
// far, its content blocks by index in the order they began, the usage,
// and how the model stopped.
type anStream struct {
	a       *Anthropic
	onDelta func(Delta)

	text     strings.Builder
	blocks   map[int]*anStreamBlock
	order    []int
	stop     string
	complete bool // message_stop came
	usage    anUsage
}

// anStreamBlock is a content block whose deltas are still coming.
type anStreamBlock struct {
	kind, id, name string
	json           strings.Builder
	// thinking blocks: the text, the signature, a redacted one's data
	thinking, signature strings.Builder
	data                string
}

// event takes one server-sent event; done is true at message_stop.
func (st *anStream) event(event string, data []byte) (done bool, err error) {
	var ev anEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, st.a.http.fail(0, "bad stream event %q: %v", event, err)
	}
	switch ev.Type {
	case "message_start":
		ev.Message.Usage.into(&st.usage)
	case "content_block_start":
		b := &anStreamBlock{kind: ev.ContentBlock.Type, id: ev.ContentBlock.ID, name: ev.ContentBlock.Name, data: ev.ContentBlock.Data}
		b.thinking.WriteString(ev.ContentBlock.Thinking)
		b.signature.WriteString(ev.ContentBlock.Signature)
		st.blocks[ev.Index] = b
		st.order = append(st.order, ev.Index)
	case "content_block_delta":
		st.delta(&ev)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			st.stop = ev.Delta.StopReason
		}
		ev.Usage.into(&st.usage)
	case "message_stop":
		st.complete = true
		return true, nil
	case "error":
		return false, st.a.http.fail(0, "%s: %s", ev.Error.Type, ev.Error.Message)
	}
	return false, nil
}

// delta adds a content_block_delta to its block; text and thinking are
// passed on as they come.
func (st *anStream) delta(ev *anEvent) {
	b := st.blocks[ev.Index] // nil for a delta of a block that never began
	switch ev.Delta.Type {
	case "text_delta":
		st.text.WriteString(ev.Delta.Text)
		st.onDelta(Delta{Text: ev.Delta.Text})
	case "thinking_delta":
		if b != nil {
			b.thinking.WriteString(ev.Delta.Thinking)
		}
		st.onDelta(Delta{Thought: ev.Delta.Thinking})
	case "signature_delta":
		if b != nil {
			b.signature.WriteString(ev.Delta.Signature)
		}
	case "input_json_delta":
		if b != nil {
			b.json.WriteString(ev.Delta.PartialJSON)
		}
	}
}

// reasoning is the stream's thinking blocks, kept whole to go back with
// tool use, and their text; nil when there were none.
func (st *anStream) reasoning() *Reasoning {
	var r *Reasoning
	for _, i := range st.order {
		b := st.blocks[i]
		var raw []byte
		switch b.kind {
		case "thinking":
			raw, _ = json.Marshal(map[string]string{"type": "thinking", "thinking": b.thinking.String(), "signature": b.signature.String()})
		case "redacted_thinking":
			raw, _ = json.Marshal(map[string]string{"type": "redacted_thinking", "data": b.data})
		default:
			continue
		}
		if r == nil {
			r = &Reasoning{}
		}
		r.Text += b.thinking.String()
		r.Blocks = append(r.Blocks, raw)
	}
	return r
}

// toolCalls puts the stream's tool_use blocks, in order, into resp. A
// call cut off by max_tokens drops them all and names itself as cut;
// arguments that are not JSON otherwise are an error.
func (st *anStream) toolCalls(resp *Response) error {
	for _, i := range st.order {
		b := st.blocks[i]
		if b.kind != "tool_use" {
			continue
		}
		args := strings.TrimSpace(b.json.String())
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			if st.stop == "max_tokens" { // cut off mid-call: the limit, not a bad call
				resp.ToolCalls, resp.CutCall = nil, b.name
				break
			}
			return st.a.http.fail(0, "tool call %s: arguments are not valid JSON: %q", b.name, args)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.id, Name: b.name, Input: json.RawMessage(args)})
	}
	return nil
}

// stopReason is Anthropic's stop_reason as a Stop reason.
func (st *anStream) stopReason() string {
	switch st.stop {
	case "tool_use":
		return StopToolUse
	case "max_tokens":
		return StopMaxTokens
	case "refusal":
		return StopRefusal
	default:
		return StopEndTurn
	}
}

// thinkingBudget is Anthropic's thinking.budget_tokens per reasoning
// level (at least 1,024, Anthropic's minimum).
var thinkingBudget = map[string]int{"low": 2048, "medium": 8192, "high": 24576}

// anUsage is the usage of message_start and message_delta (cumulative:
// a figure present replaces the one before).
type anUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

func (u anUsage) into(out *anUsage) {
	if u.InputTokens > 0 {
		out.InputTokens = u.InputTokens
	}
	if u.OutputTokens > 0 {
		out.OutputTokens = u.OutputTokens
	}
	if u.CacheCreationInputTokens > 0 {
		out.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens > 0 {
		out.CacheReadInputTokens = u.CacheReadInputTokens
	}
}

// usage is u as Usage: Anthropic's input_tokens leave out the tokens
// read from and written to the cache, Usage's input counts them.
func (u anUsage) usage() Usage {
	return Usage{InputTokens: u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}
