// Package provider speaks to language models: one Provider interface for a
// streamed model call with tools, and its implementations: openai (Chat
// Completions, any OpenAI-compatible server), anthropic (Messages API) and
// the offline echo provider.
package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// Role of a transcript message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the transcript the model sees.
type Message struct {
	Role string `json:"role"`
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Images of a user message (stored uploads) or of a tool message
	// (what the tool gave), sent to models that see.
	Images []Image `json:"images,omitempty"`
	// ToolCallID, Name and IsError describe a tool message (a result).
	ToolCallID string `json:"toolCallId,omitempty"`
	Name       string `json:"name,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	// Reasoning is an assistant message's reasoning as its server sent
	// it, kept (in the store too) to be sent back where the server wants
	// it: DeepSeek's thinking mode, for one, answers 400 to a tool loop
	// whose assistant tool-call message comes back without it.
	Reasoning *Reasoning `json:"reasoning,omitempty"`

	// wire is what the message was encoded to, per dialect (a
	// Transcript's messages have one).
	wire *wire
}

// Reasoning is the reasoning of an assistant message.
type Reasoning struct {
	Text string `json:"text"`
	// Field is the member of an OpenAI-compatible message it came in
	// ("reasoning_content", DeepSeek, llama.cpp, GLM; or "reasoning"),
	// and goes back in.
	Field string `json:"field,omitempty"`
	// Blocks are Anthropic's thinking and redacted_thinking blocks, as
	// they came (with their signatures), to go back first and unchanged.
	Blocks []json.RawMessage `json:"blocks,omitempty"`
	// Details are an OpenAI-compatible server's reasoning_details
	// (OpenRouter, Snowflake): one entry per index, its streamed pieces
	// joined, to go back on the assistant tool-call message.
	Details []json.RawMessage `json:"details,omitempty"`
}

// Image is an image of a message: a file the daemon stored (never a path
// taken from prompt text), or, until its message is recorded (which
// stores it), its bytes.
type Image struct {
	MimeType string `json:"mimeType"`
	Path     string `json:"path"`
	Data     []byte `json:"-"`
}

// data reads the image as base64.
func (im Image) data() (string, error) {
	if im.Path == "" {
		return base64.StdEncoding.EncodeToString(im.Data), nil
	}
	b, err := os.ReadFile(im.Path)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// ToolCall is one call the model asks for.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"` // a JSON object
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON schema of the arguments object
}

// Request is one model call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Estimate is the host's running estimate of the input's tokens
	// (System, Messages and Tools; see EstimateTokens), 0 when it keeps
	// none.
	Estimate int64
	// Model overrides the provider's configured model ("": that one).
	Model string
	// MaxTokens and Reasoning override the provider's configured ones
	// (0, "": those).
	MaxTokens int
	Reasoning string
}

// Delta is a piece of streamed output.
type Delta struct {
	Text    string // assistant text
	Thought string // reasoning text
}

// Stop reasons of a model call.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// Usage counts tokens, and what they cost.
type Usage struct {
	// InputTokens counts every input token, cached ones included (so it
	// is the size of the prompt, whatever the dialect reports).
	InputTokens  int64
	OutputTokens int64
	// The parts of InputTokens read from and written to the provider's
	// prompt cache.
	CacheReadTokens  int64
	CacheWriteTokens int64
	// CostUSD is what the calls cost, counting those whose price is known
	// (Priced: at least one); a server that reports a call's cost
	// (OpenRouter) sets it.
	CostUSD float64
	Priced  bool
}

// Add adds v's figures to u's.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.CostUSD += v.CostUSD
	u.Priced = u.Priced || v.Priced
}

// Response is the whole of one model call.
type Response struct {
	Text       string
	ToolCalls  []ToolCall
	StopReason string
	Usage      Usage
	// Reasoning is the response's reasoning, when the server sent any.
	Reasoning *Reasoning
	// CutCall names the tool whose call the output limit cut off inside
	// its arguments (StopMaxTokens; the call is dropped, never run).
	CutCall string
}

// Provider runs model calls. Stream calls onDelta for each piece as it
// arrives (from the calling goroutine) and returns the whole response. It
// returns ctx's error promptly when ctx is cancelled.
type Provider interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error)
	// ContextWindow is model's context window in tokens ("": the
	// configured model's), 0 when unknown.
	ContextWindow(model string) int64
	// Info says what answers: kind, the configured model and the URL.
	Info() Info
	// Models lists the models the provider offers.
	Models(ctx context.Context) ([]string, error)
}

// Info describes a provider.
type Info struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Model string `json:"model"`
	URL   string `json:"url"`
	// MaxTokens is the output limit sent with each call, 0 when none is
	// sent (the server's own applies).
	MaxTokens int `json:"-"`
}

// Error is a failed model call: it names the provider and the URL.
type Error struct {
	Provider string // the [providers.<name>] name
	URL      string
	Status   int // HTTP status, 0 when the request did not get one
	Message  string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("provider %s (%s): HTTP %d: %s", e.Provider, e.URL, e.Status, e.Message)
	}
	return fmt.Sprintf("provider %s (%s): %s", e.Provider, e.URL, e.Message)
}

// New returns the provider configured as name. getenv reads the API key
// variable.
func New(name string, p config.Provider, getenv func(string) string) (Provider, error) {
	var pr Provider
	switch p.Kind {
	case config.KindEcho:
		pr = &Echo{}
	case config.KindOpenAI:
		pr = newOpenAI(name, p, getenv)
	case config.KindAnthropic:
		pr = newAnthropic(name, p, getenv)
	default:
		return nil, fmt.Errorf("provider %s: unknown kind %q", name, p.Kind)
	}
	if p.ContextWindow > 0 {
		pr = windowed{pr, p.ContextWindow}
	}
	return pr, nil
}

// windowed is a provider with a configured context window (for every
// model: the configuration knows better than our defaults).
type windowed struct {
	Provider
	n int64
}

func (w windowed) ContextWindow(string) int64 { return w.n }
