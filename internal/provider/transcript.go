package provider

// Transcript is the conversation a model call is sent, with a running
// estimate of its size in tokens. It grows in place, so neither the
// messages nor the estimate is rebuilt per model call: a call in a
// session of 10,000 turns costs its host what one in a fresh session
// does.
type Transcript struct {
	Messages []Message
	// Tokens is EstimateTokens summed over Messages.
	Tokens int64
}

// NewTranscript makes a transcript of msgs.
func NewTranscript(msgs []Message) Transcript {
	t := Transcript{Messages: msgs}
	for i := range msgs {
		t.Tokens += EstimateTokens(&msgs[i])
	}
	return t
}

// Append adds m at the end.
func (t *Transcript) Append(m Message) {
	t.Messages = append(t.Messages, m)
	t.Tokens += EstimateTokens(&m)
}

// Truncate keeps the first n messages (and nothing appended after them
// can overwrite what an earlier copy of the transcript still reads).
func (t *Transcript) Truncate(n int) {
	if n >= len(t.Messages) {
		return
	}
	for i := n; i < len(t.Messages); i++ {
		t.Tokens -= EstimateTokens(&t.Messages[i])
	}
	t.Messages = t.Messages[:n:n]
}

// imageTokens is what an image is counted as: providers charge by its
// size, which is not known without decoding it; this is the order of
// a typical screenshot.
const imageTokens = 1000

// EstimateTokens estimates the tokens a message takes in a model's
// input: about four bytes a token, which is what real tokenizers
// average on English and code. It is an estimate for deciding what to
// send, never a bill: the provider's reported usage is the figure.
func EstimateTokens(m *Message) int64 {
	n := len(m.Role) + len(m.Text) + len(m.ToolCallID) + len(m.Name)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Input)
	}
	return int64(n+3)/4 + int64(len(m.Images))*imageTokens
}

func estimateString(s string) int64 { return int64(len(s)+3) / 4 }

// EstimateRequest estimates the tokens of a call's instructions and tool
// descriptions, the part of the input beside the transcript.
func EstimateRequest(system string, tools []ToolSpec) int64 {
	n := estimateString(system)
	for _, t := range tools {
		n += estimateString(t.Name) + estimateString(t.Description) + int64(len(t.Schema)+3)/4
	}
	return n
}
