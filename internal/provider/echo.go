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
	last := req.Messages[len(req.Messages)-1]
	if last.Role == RoleTool {
		// Answer every result of the last assistant message's calls.
		i := len(req.Messages) - 1
		for i > 0 && req.Messages[i-1].Role == RoleTool {
			i--
		}
		var b strings.Builder
		for _, m := range req.Messages[i:] {
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
		chunks = words(strings.TrimSuffix(b.String(), "\n"))
	} else {
		var plain []string
		for _, line := range strings.Split(last.Text, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "/when "); ok {
				cond, err := strconv.QuotedPrefix(rest)
				if err != nil {
					return nil, &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/when wants a quoted text first, got %q", rest)}
				}
				text, _ := strconv.Unquote(cond)
				// The text is looked for in the message without this
				// line (which holds it too).
				if !strings.Contains(strings.Replace(last.Text, line, "", 1), text) {
					continue
				}
				line = strings.TrimSpace(rest[len(cond):])
			}
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
					return nil, &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/tool %s: arguments must be a JSON object, got %q", name, args)}
				}
				resp.ToolCalls = append(resp.ToolCalls, ToolCall{
					ID: fmt.Sprintf("echo_call_%d_%d", len(req.Messages), len(resp.ToolCalls)), Name: name, Input: json.RawMessage(args)})
			case "/think":
				if err := sleep(ctx, delay); err != nil {
					return nil, err
				}
				onDelta(Delta{Thought: rest})
			case "/chunks":
				n, err := strconv.Atoi(rest)
				if err != nil || n < 0 {
					return nil, &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/chunks wants a count, got %q", rest)}
				}
				chunks = slices.Grow(chunks, n) // one allocation for a stream of 100,000
				for range n {
					chunks = append(chunks, "ok ")
				}
			case "/delay":
				ms, err := strconv.Atoi(rest)
				if err != nil || ms < 0 {
					return nil, &Error{Provider: "echo", URL: "echo:", Message: fmt.Sprintf("/delay wants milliseconds, got %q", rest)}
				}
				delay = time.Duration(ms) * time.Millisecond
			case "/fail":
				return nil, &Error{Provider: "echo", URL: "echo:", Message: rest}
			default:
				plain = append(plain, line)
			}
		}
		if text := strings.TrimSpace(strings.Join(plain, "\n")); text != "" {
			chunks = append(words("echo: "+text), chunks...)
		}
	}
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
			resp.Text = b.String()
			return resp, err
		}
		if err := ctx.Err(); err != nil {
			resp.Text = b.String()
			return resp, err
		}
		onDelta(Delta{Text: c})
		b.WriteString(c)
	}
	resp.Text = b.String()
	resp.Usage.OutputTokens = int64(len(strings.Fields(resp.Text)))
	if len(resp.ToolCalls) > 0 {
		resp.StopReason = StopToolUse
	}
	return resp, nil
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
