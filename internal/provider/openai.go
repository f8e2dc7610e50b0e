package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// OpenAI speaks Chat Completions with streaming to any OpenAI-compatible
// server (OpenAI, Ollama, llama.cpp, vLLM).
type OpenAI struct {
	name, base, model string
	maxTokens         int    // 0: not sent (the server's own limit)
	reasoning         string // the configured level ("", "off": none sent)
	http              *httpClient
}

func newOpenAI(name string, p config.Provider, getenv func(string) string) *OpenAI {
	base := strings.TrimSuffix(p.BaseURL, "/")
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	headers := map[string]string{}
	if p.APIKeyEnv != "" {
		if key := getenv(p.APIKeyEnv); key != "" {
			headers["Authorization"] = "Bearer " + key
		}
	}
	return &OpenAI{name: name, base: base, model: p.Model, maxTokens: p.MaxTokens, reasoning: p.Reasoning,
		http: newHTTPClient(name, base+"/chat/completions", headers)}
}

// MaxContextTokens implements Provider: a known model family's window,
// else 8,192 tokens, small enough for what local servers (Ollama,
// llama.cpp) give a model by default; set context_window for more.
func (o *OpenAI) ContextWindow(model string) int64 {
	if model == "" {
		model = o.model
	}
	return openAIWindow(model)
}

// Info implements Provider.
func (o *OpenAI) Info() Info {
	return Info{Name: o.name, Kind: config.KindOpenAI, Model: o.model, URL: o.base, MaxTokens: o.maxTokens}
}

// Models implements Provider: GET <base_url>/models.
func (o *OpenAI) Models(ctx context.Context) ([]string, error) {
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := o.http.getJSON(ctx, o.base+"/models", &body); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(body.Data))
	for _, m := range body.Data {
		out = append(out, m.ID)
	}
	return out, nil
}

func openAIWindow(model string) int64 {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "gpt-4.1"):
		return 1047576
	case strings.HasPrefix(m, "gpt-5"):
		return 400000
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return 128000
	}
	return 8192
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    any          `json:"content"` // *string, or parts with images
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	// The reasoning of an assistant tool-call message, back in the member
	// the server sent it in.
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	Reasoning        string            `json:"reasoning,omitempty"`
	ReasoningDetails []json.RawMessage `json:"reasoning_details,omitempty"`
}

type oaToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaChunk struct {
	Choices []struct {
		Delta        oaDelta `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
		// Cost is what the call cost in USD, where the server says
		// (OpenRouter).
		Cost                *float64 `json:"cost"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// oaDelta is what one choice of a stream chunk adds.
type oaDelta struct {
	Content          string           `json:"content"`
	ReasoningContent string           `json:"reasoning_content"`
	Reasoning        string           `json:"reasoning"`
	Refusal          string           `json:"refusal"`
	ToolCalls        []oaToolCall     `json:"tool_calls"`
	ReasoningDetails []map[string]any `json:"reasoning_details"`
}

func (o *OpenAI) request(req Request) ([]byte, error) {
	msgs := make([][]byte, 0, len(req.Messages)+1)
	if req.System != "" {
		s := req.System
		b, err := json.Marshal(oaMessage{Role: "system", Content: &s})
		if err != nil {
			return nil, o.http.fail(0, "encode request: %v", err)
		}
		msgs = append(msgs, b)
	}
	// A tool message's content is text only: the images tools gave go
	// in a user message after the run of tool messages they came in.
	var shown []*Message
	show := func() error {
		if len(shown) == 0 {
			return nil
		}
		b, err := o.toolImages(shown)
		shown = nil
		if err != nil {
			return err
		}
		msgs = append(msgs, b)
		return nil
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		if m.Role != RoleTool {
			if err := show(); err != nil {
				return nil, err
			}
		}
		b, err := o.message(m)
		if err != nil {
			return nil, err
		}
		if b != nil {
			msgs = append(msgs, b)
		}
		if m.Role == RoleTool && len(m.Images) > 0 {
			shown = append(shown, m)
		}
	}
	if err := show(); err != nil {
		return nil, err
	}
	head := map[string]any{
		"model":          cmp.Or(req.Model, o.model),
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if mt := cmp.Or(req.MaxTokens, o.maxTokens); mt > 0 {
		head["max_tokens"] = mt
	}
	if level := cmp.Or(req.Reasoning, o.reasoning); level != "" && level != "off" && takesEffort(cmp.Or(req.Model, o.model)) {
		head["reasoning_effort"] = level
	}
	if len(req.Tools) > 0 {
		var tools []oaTool
		for _, t := range req.Tools {
			var ot oaTool
			ot.Type = "function"
			ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, t.Schema
			tools = append(tools, ot)
		}
		head["tools"] = tools
	}
	size := 0
	for _, m := range msgs {
		size += len(m) + 1
	}
	body, err := withMessages(head, size, func(out []byte) []byte {
		for i, m := range msgs {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, m...)
		}
		return out
	})
	if err != nil {
		return nil, o.http.fail(0, "encode request: %v", err)
	}
	return body, nil
}

// toolImages is the user message that shows the model the images of
// tool messages (each named by its call).
func (o *OpenAI) toolImages(ms []*Message) ([]byte, error) {
	var parts []map[string]any
	for _, m := range ms {
		parts = append(parts, map[string]any{"type": "text", "text": fmt.Sprintf("The image(s) the tool call %s (%s) returned:", m.ToolCallID, m.Name)})
		for _, im := range m.Images {
			data, err := im.data()
			if err != nil {
				return nil, o.http.fail(0, "image %s: %v", im.Path, err)
			}
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:" + im.MimeType + ";base64," + data}})
		}
	}
	b, err := json.Marshal(oaMessage{Role: "user", Content: parts})
	if err != nil {
		return nil, o.http.fail(0, "encode request: %v", err)
	}
	return b, nil
}

// message is m as a Chat Completions message, encoded once (see wire).
func (o *OpenAI) message(m *Message) ([]byte, error) {
	if m.wire != nil {
		if b := m.wire.openai.Load(); b != nil {
			return *b, nil
		}
	}
	text := m.Text
	var om oaMessage
	switch m.Role {
	case RoleUser:
		om = oaMessage{Role: "user", Content: &text}
		if len(m.Images) > 0 {
			parts := []map[string]any{{"type": "text", "text": text}}
			for _, im := range m.Images {
				data, err := im.data()
				if err != nil {
					return nil, o.http.fail(0, "image %s: %v", im.Path, err)
				}
				parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:" + im.MimeType + ";base64," + data}})
			}
			om.Content = parts
		}
	case RoleAssistant:
		om = oaMessage{Role: "assistant"}
		if text != "" || len(m.ToolCalls) == 0 {
			om.Content = &text
		}
		for _, tc := range m.ToolCalls {
			var c oaToolCall
			c.ID, c.Type = tc.ID, "function"
			c.Function.Name, c.Function.Arguments = tc.Name, string(tc.Input)
			om.ToolCalls = append(om.ToolCalls, c)
		}
		// A tool-call message goes back with its reasoning, in the
		// member it came in (DeepSeek's thinking mode requires it
		// there; a final answer's reasoning is not sent back).
		if r := m.Reasoning; r != nil && len(m.ToolCalls) > 0 {
			switch {
			case r.Text == "":
			case r.Field == "reasoning":
				om.Reasoning = r.Text
			case r.Field == "reasoning_content":
				om.ReasoningContent = r.Text
			}
			om.ReasoningDetails = r.Details
		}
	case RoleTool:
		om = oaMessage{Role: "tool", Content: &text, ToolCallID: m.ToolCallID}
	default:
		return nil, nil // not a message the API knows: left out
	}
	b, err := json.Marshal(om)
	if err != nil {
		return nil, o.http.fail(0, "encode request: %v", err)
	}
	if m.kept() {
		m.wire.openai.Store(&b)
	}
	return b, nil
}

// Stream implements Provider.
func (o *OpenAI) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	resp := &Response{}
	st := &oaStream{o: o, resp: resp, onDelta: onDelta, calls: map[int]*oaPartialCall{}}
	body, err := o.request(req)
	if err != nil {
		return resp, err
	}
	err = o.http.sse(ctx, body, func(_ string, data []byte) (bool, error) {
		return st.chunk(data)
	})
	resp.Text = st.text.String()
	if st.reasoning.Len() > 0 || len(st.details.order) > 0 {
		resp.Reasoning = &Reasoning{Text: st.reasoning.String(), Field: st.field, Details: st.details.joined()}
	}
	if err != nil {
		return resp, err
	}
	if err := st.toolCalls(); err != nil {
		return resp, err
	}
	resp.StopReason = st.stopReason()
	return resp, nil
}

// oaStream is one chat-completions stream as it is read: the reply's
// text and reasoning so far, the tool calls by index (their arguments
// come in pieces), and how the model finished.
type oaStream struct {
	o       *OpenAI
	resp    *Response
	onDelta func(Delta)

	text, reasoning strings.Builder
	details         reasoningDetails
	field           string // the member the reasoning came in, to send it back there
	refused         bool
	calls           map[int]*oaPartialCall
	finish          string
}

// oaPartialCall is a streamed tool call whose pieces are still coming.
type oaPartialCall struct {
	id, name string
	args     strings.Builder
}

// chunk takes one server-sent event's data; done is true at [DONE].
func (st *oaStream) chunk(data []byte) (done bool, err error) {
	if string(data) == "[DONE]" {
		return true, nil
	}
	var ch oaChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return false, st.o.http.fail(0, "bad stream chunk: %v", err)
	}
	if ch.Error != nil {
		return false, st.o.http.fail(0, "%s", ch.Error.Message)
	}
	if u := ch.Usage; u != nil {
		// xAI leaves reasoning tokens out of completion_tokens but
		// counts (and bills) them in total_tokens.
		st.resp.Usage = Usage{InputTokens: u.PromptTokens, OutputTokens: max(u.CompletionTokens, u.TotalTokens-u.PromptTokens),
			CacheReadTokens: u.PromptTokensDetails.CachedTokens}
		if u.Cost != nil && *u.Cost >= 0 {
			st.resp.Usage.CostUSD, st.resp.Usage.Priced = *u.Cost, true
		}
	}
	for _, c := range ch.Choices {
		st.thought(c.Delta)
		st.reply(c.Delta)
		for i, tc := range c.Delta.ToolCalls {
			st.toolCallPiece(i, tc)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			st.finish = *c.FinishReason
		}
	}
	return false, nil
}

// thought takes a delta's reasoning, from whichever member it came in.
func (st *oaStream) thought(d oaDelta) {
	if th := d.ReasoningContent + d.Reasoning; th != "" {
		if st.field == "" {
			st.field = "reasoning_content"
			if d.ReasoningContent == "" {
				st.field = "reasoning"
			}
		}
		st.reasoning.WriteString(th)
		st.onDelta(Delta{Thought: th})
		// The details are kept to go back, but the text above is the
		// thought: theirs would show it twice.
		st.details.add(d.ReasoningDetails)
	} else if th := st.details.add(d.ReasoningDetails); th != "" {
		// Only reasoning_details (Snowflake): its text is the thought.
		st.reasoning.WriteString(th)
		st.onDelta(Delta{Thought: th})
	}
}

// reply takes a delta's text.
func (st *oaStream) reply(d oaDelta) {
	if d.Content != "" {
		st.text.WriteString(d.Content)
		st.onDelta(Delta{Text: d.Content})
	}
	// A refusal (content null) is the reply the person reads.
	if d.Refusal != "" {
		st.refused = true
		st.text.WriteString(d.Refusal)
		st.onDelta(Delta{Text: d.Refusal})
	}
}

// toolCallPiece adds a piece of the tool call at index tc.Index (or the
// piece's place in the delta, for servers that leave the index out).
func (st *oaStream) toolCallPiece(i int, tc oaToolCall) {
	idx := i
	if tc.Index != nil {
		idx = *tc.Index
	}
	p := st.calls[idx]
	if p == nil {
		p = &oaPartialCall{}
		st.calls[idx] = p
	}
	if tc.ID != "" {
		p.id = tc.ID
	}
	if tc.Function.Name != "" {
		p.name += tc.Function.Name
	}
	p.args.WriteString(tc.Function.Arguments)
}

// toolCalls puts the whole stream's tool calls, in index order, into the
// response. A call cut off by the length limit drops them all and names
// itself as cut; arguments that are not JSON otherwise are an error.
func (st *oaStream) toolCalls() error {
	resp := st.resp
	idxs := make([]int, 0, len(st.calls))
	for i := range st.calls {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		p := st.calls[i]
		args := strings.TrimSpace(p.args.String())
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			if st.finish == "length" { // cut off mid-call: the limit, not a bad call
				resp.ToolCalls, resp.CutCall = nil, p.name
				break
			}
			return st.o.http.fail(0, "tool call %s: arguments are not valid JSON: %q", p.name, args)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: p.id, Name: p.name, Input: json.RawMessage(args)})
	}
	return nil
}

// stopReason is why the model stopped, from its finish reason, the tool
// calls it made and whether it refused.
func (st *oaStream) stopReason() string {
	if st.refused {
		return StopRefusal
	}
	if len(st.resp.ToolCalls) > 0 && st.finish != "length" {
		return StopToolUse
	}
	switch st.finish {
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	case "content_filter":
		return StopRefusal
	default:
		return StopEndTurn
	}
}

// reasoningDetails joins the streamed pieces of reasoning_details: the
// pieces of one index are one entry, their text and summary strings
// concatenated, any other member (type, signature, data, format, id)
// taken as it last came.
type reasoningDetails struct {
	order   []int
	entries map[int]map[string]any
}

// add joins pieces and returns the text they carry.
func (r *reasoningDetails) add(pieces []map[string]any) string {
	var text strings.Builder
	for _, p := range pieces {
		idx := len(r.order)
		if f, ok := p["index"].(float64); ok {
			idx = int(f)
		}
		if r.entries == nil {
			r.entries = map[int]map[string]any{}
		}
		e := r.entries[idx]
		if e == nil {
			e = map[string]any{}
			r.entries[idx] = e
			r.order = append(r.order, idx)
		}
		for k, v := range p {
			s, isString := v.(string)
			switch {
			case v == nil:
			case isString && (k == "text" || k == "summary"):
				prev, _ := e[k].(string)
				e[k] = prev + s
				text.WriteString(s)
			case isString && s == "":
			default:
				e[k] = v
			}
		}
	}
	return text.String()
}

// joined is the entries in the order they began.
func (r *reasoningDetails) joined() []json.RawMessage {
	var out []json.RawMessage
	for _, idx := range r.order {
		b, err := json.Marshal(r.entries[idx])
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// takesEffort reports whether a model takes reasoning_effort: OpenAI's
// reasoning models (o1, o3, o4, gpt-5) and xAI's grok-3-mini, also
// behind a router's "vendor/" prefix. Others refuse or ignore it.
func takesEffort(model string) bool {
	m := strings.ToLower(model[strings.LastIndex(model, "/")+1:])
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "grok-3-mini"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}
