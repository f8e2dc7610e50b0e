package provider

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// A transcript's messages are encoded once: the next call sends the kept
// bytes, and they are the bytes a fresh encoding gives.
func TestEncodingsAreKeptAndExact(t *testing.T) {
	env := func(string) string { return "k" }
	oa, _ := New("oa", config.Provider{Kind: "openai", Model: "deepseek-reasoner"}, env)
	an, _ := New("an", config.Provider{Kind: "anthropic", Model: "claude-sonnet-4-5"}, env)
	tr := longTranscript(3)
	for name, p := range map[string]Provider{"openai": oa, "anthropic": an} {
		fresh := make([]Message, len(tr.Messages))
		for i, m := range tr.Messages {
			m.wire = nil // a copy that keeps nothing
			fresh[i] = m
		}
		req := Request{System: "sys", Messages: tr.View(), Tools: benchTools}
		first, err := requestBody(p, req)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tr.Messages {
			w := tr.Messages[i].wire
			if (name == "openai" && w.openai.Load() == nil) || (name == "anthropic" && w.anthropic.Load() == nil) {
				t.Fatalf("%s: message %d was not kept", name, i)
			}
		}
		again, _ := requestBody(p, req)
		uncached, _ := requestBody(p, Request{System: "sys", Messages: fresh, Tools: benchTools})
		if !bytes.Equal(first, again) || !bytes.Equal(first, uncached) || !json.Valid(first) {
			t.Errorf("%s: kept encodings differ from fresh ones:\n%s\n%s", name, again, uncached)
		}
	}
}
