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
	// The model sees Messages[Cut:]: what came before was left out to fit
	// its context window (the transcript keeps it); CutTokens is its
	// estimate and Summary what the model is told of it instead.
	Cut       int
	CutTokens int64
	Summary   string
}

// View is what the model is sent of the transcript.
func (t *Transcript) View() []Message { return t.Messages[t.Cut:] }

// ViewTokens estimates View and the summary.
func (t *Transcript) ViewTokens() int64 {
	return t.Tokens - t.CutTokens + estimateString(t.Summary)
}

// Trim moves Cut over whole turns (a turn begins with a user message, so
// no tool result is parted from its call) until the view's estimate is
// within budget, never past the last turn's start. It returns how many
// messages it left out.
func (t *Transcript) Trim(budget int64) int {
	last := len(t.Messages)
	for last > t.Cut && t.Messages[last-1].Role != RoleUser {
		last--
	}
	last-- // the last user message: the current turn starts there
	from := t.Cut
	for t.Cut < last && t.Tokens-t.CutTokens > budget {
		// Leave out the turn at Cut: up to the next user message.
		next := t.Cut + 1
		for next < last && t.Messages[next].Role != RoleUser {
			next++
		}
		for i := t.Cut; i < next; i++ {
			t.CutTokens += EstimateTokens(&t.Messages[i])
		}
		t.Cut = next
	}
	return t.Cut - from
}

// Turns counts the turns in the view.
func (t *Transcript) Turns() int {
	n := 0
	for i := t.Cut; i < len(t.Messages); i++ {
		if t.Messages[i].Role == RoleUser {
			n++
		}
	}
	return n
}

// NewTranscript makes a transcript of msgs, which it takes over: each
// message gets a place to keep its encodings (see wire).
func NewTranscript(msgs []Message) Transcript {
	t := Transcript{Messages: msgs}
	for i := range msgs {
		if msgs[i].wire == nil {
			msgs[i].wire = new(wire)
		}
		t.Tokens += EstimateTokens(&msgs[i])
	}
	return t
}

// Append adds m at the end.
func (t *Transcript) Append(m Message) {
	if m.wire == nil {
		m.wire = new(wire)
	}
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
	if t.Cut > n {
		t.Cut, t.CutTokens, t.Summary = 0, 0, ""
	}
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
	if m.Reasoning != nil && len(m.ToolCalls) > 0 { // sent back with tool calls only
		n += len(m.Reasoning.Text)
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
