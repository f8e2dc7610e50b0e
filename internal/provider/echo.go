package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// Echo is the offline provider: it streams a deterministic reply built
// from the last user message, so the daemon works with no model at all.
//
// A plain prompt is answered "echo: <prompt>", streamed a word at a time.
// Lines of the prompt that start with a directive steer it instead:
//
//	/tool NAME {json}   call tool NAME with those arguments (several lines: several calls)
//	/think TEXT         stream TEXT as a thought first
//	/chunks N           stream N chunks of "ok " as the reply
//	/delay MS           wait MS milliseconds before each chunk
//	/fail TEXT          fail the model call with TEXT
//	/when "TEXT" LINE   LINE (any of the above) only when the message also holds TEXT
//	                    (a Go-quoted string): a goal's prompt, say, says which turn it is
//
// After a tool call, the next call answers "tool NAME returned: <output>"
// (the first 200 bytes of each result), or "tool NAME failed: ..." for an
// error result.
type Echo struct{}

// ContextWindow implements Provider.
func (*Echo) ContextWindow(string) int64 { return 32768 }

// Info implements Provider.
func (*Echo) Info() Info {
	return Info{Name: "echo", Kind: config.KindEcho, Model: "echo", URL: "echo:"}
}

// Models implements Provider.
func (*Echo) Models(context.Context) ([]string, error) { return []string{"echo"}, nil }

// Stream implements Provider.
func (*Echo) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	resp := &Response{StopReason: StopEndTurn}
	// The offline model counts its input as the estimate (about four
	// bytes a token); the host keeps it as the transcript grows, so a
	// long transcript costs the offline model nothing per call.
	resp.Usage.InputTokens = req.Estimate
	if resp.Usage.InputTokens == 0 {
		resp.Usage.InputTokens = EstimateRequest(req.System, req.Tools)
		for i := range req.Messages {
			resp.Usage.InputTokens += EstimateTokens(&req.Messages[i])
		}
	}
	if len(req.Messages) == 0 {
		return resp, nil
	}
	var chunks []string
	var delay time.Duration
	if last := req.Messages[len(req.Messages)-1]; last.Role == RoleTool {
		chunks = words(echoToolResults(req.Messages))
	} else {
		p := echoPrompt{ctx: ctx, onDelta: onDelta, messages: len(req.Messages)}
		if err := p.read(last.Text); err != nil {
			return nil, err
		}
		chunks, delay, resp.ToolCalls = p.chunks, p.delay, p.calls
	}
	text, err := echoChunks(ctx, chunks, delay, onDelta)
	resp.Text = text
	if err != nil {
		return resp, err
	}
	resp.Usage.OutputTokens = int64(len(strings.Fields(resp.Text)))
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = StopToolUse
	}
	return resp, nil
}

// echoToolResults answers every result of the last assistant message's
// calls: the run of tool messages at the end of msgs.
func echoToolResults(msgs []Message) string {
	i := len(msgs) - 1
	for i > 0 && msgs[i-1].Role == RoleTool {
		i--
	}
	var b strings.Builder
	for _, m := range msgs[i:] {
		verb := "returned"
		if m.IsError {
			verb = "failed"
		}
		out := m.Text
		if len(out) > 200 {
			out = out[:200] + "..."
		}
		fmt.Fprintf(&b, "tool %s %s: %s\n", m.Name, verb, out)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// echoPrompt is the reply a user message steers, line by line: the tool
// calls, the chunks and the delay its directives ask for, and the plain
// lines echoed back. A /think line is streamed as it is read.
type echoPrompt struct {
	ctx      context.Context
	onDelta  func(Delta)
	messages int // the number of messages, for the tool calls' ids

	calls  []ToolCall
	chunks []string
	delay  time.Duration
	plain  []string
}

// read takes every line of the message text; the plain lines, echoed,
// come before the chunks the directives asked for.
func (p *echoPrompt) read(text string) error {
	for _, line := range strings.Split(text, "\n") {
		line, ok, err := echoWhen(line, text)
		if err != nil {
			return err
		}
		if ok {
			if err := p.line(line); err != nil {
				return err
			}
		}
	}
	if echoed := strings.TrimSpace(strings.Join(p.plain, "\n")); echoed != "" {
		p.chunks = append(words("echo: "+echoed), p.chunks...)
	}
	return nil
}

// echoWhen is line without its /when condition, and whether the
// condition holds (a line without one always does).
func echoWhen(line, text string) (string, bool, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "/when ")
	if !ok {
		return line, true, nil
	}
	cond, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false, &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/when wants a quoted text first, got %q", rest)}
	}
	want, _ := strconv.Unquote(cond)
	// The text is looked for in the message without this line (which
	// holds it too).
	if !strings.Contains(strings.Replace(text, line, "", 1), want) {
		return "", false, nil
	}
	return strings.TrimSpace(rest[len(cond):]), true, nil
}

// line takes one line: a directive, or a plain line to echo.
func (p *echoPrompt) line(line string) error {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	rest = strings.TrimSpace(rest)
	switch word {
	case "/tool":
		name, args, _ := strings.Cut(rest, " ")
		args = strings.TrimSpace(args)
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) || !strings.HasPrefix(args, "{") {
			return &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/tool %s: arguments must be a JSON object, got %q", name, args)}
		}
		p.calls = append(p.calls, ToolCall{
			ID: fmt.Sprintf("echo_call_%d_%d", p.messages, len(p.calls)), Name: name, Input: json.RawMessage(args)})
	case "/think":
		if err := sleep(p.ctx, p.delay); err != nil {
			return err
		}
		p.onDelta(Delta{Thought: rest})
	case "/chunks":
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/chunks wants a count, got %q", rest)}
		}
		p.chunks = slices.Grow(p.chunks, n) // one allocation for a stream of 100,000
		for range n {
			p.chunks = append(p.chunks, "ok ")
		}
	case "/delay":
		ms, err := strconv.Atoi(rest)
		if err != nil || ms < 0 {
			return &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/delay wants milliseconds, got %q", rest)}
		}
		p.delay = time.Duration(ms) * time.Millisecond
	case "/fail":
		return &Error{Provider: "echo", URL: "echo:", Message: rest}
	default:
		p.plain = append(p.plain, line)
	}
	return nil
}

// echoChunks streams chunks, delay before each, and returns the text
// streamed (so far, when ctx ends it).
func echoChunks(ctx context.Context, chunks []string, delay time.Duration, onDelta func(Delta)) (string, error) {
	var b strings.Builder
	if len(chunks) > 64 {
		n := 0
		for _, c := range chunks {
			n += len(c)
		}
		b.Grow(n)
	}
	for _, c := range chunks {
		if err := sleep(ctx, delay); err != nil {
			return b.String(), err
		}
		if err := ctx.Err(); err != nil {
			return b.String(), err
		}
		onDelta(Delta{Text: c})
		b.WriteString(c)
	}
	return b.String(), nil
}

// words splits s into chunks that each end after a run of spaces.
func words(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, " \n")
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\n') {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
