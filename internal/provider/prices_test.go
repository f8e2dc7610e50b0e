package provider

import (
	"math"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

func TestPrices(t *testing.T) {
	for _, c := range []struct {
		kind, model string
		want        Price
		known       bool
	}{
		{"openai", "gpt-4o-mini-2024-07-18", prices["gpt-4o-mini"], true},
		{"openai", "gpt-4o-2024-11-20", prices["gpt-4o"], true},
		{"anthropic", "claude-sonnet-4-5-20250929", prices["claude-sonnet-4"], true},
		{"anthropic", "claude-opus-4-5-20251101", prices["claude-opus-4-5"], true},
		{"anthropic", "claude-opus-4-1", prices["claude-opus-4"], true},
		{"openai", "anthropic/claude-haiku-4-5", prices["claude-haiku-4-5"], true},
		{"openai", "DeepSeek-Reasoner", prices["deepseek-reasoner"], true},
		{"openai", "o3-mini", prices["o3-mini"], true},
		{"openai", "qwen2.5-coder:7b", Price{}, false},
		{"echo", "gpt-4o", Price{}, false}, // the offline model costs nothing
	} {
		got, ok := PriceFor(config.Provider{Kind: c.kind}, c.model)
		if got != c.want || ok != c.known {
			t.Errorf("%s %s: %+v %v, want %+v %v", c.kind, c.model, got, ok, c.want, c.known)
		}
	}
	// A [pricing] table replaces the table; cache prices default to the input's.
	read := 0.1
	p, ok := PriceFor(config.Provider{Kind: "openai", Model: "gpt-4o", Pricing: &config.Pricing{Input: 2, Output: 8, CacheRead: &read}}, "")
	if !ok || p != (Price{Input: 2, Output: 8, CacheRead: 0.1, CacheWrite: 2}) {
		t.Errorf("configured price %+v %v", p, ok)
	}
	// Uncached input at the input price, the cache's parts at theirs.
	u := Usage{InputTokens: 1_000_000, CacheReadTokens: 400_000, CacheWriteTokens: 100_000, OutputTokens: 200_000}
	if c := prices["claude-sonnet-4"].Cost(u); math.Abs(c-(0.5*3+0.4*0.3+0.1*3.75+0.2*15)) > 1e-12 {
		t.Errorf("cost %v", c)
	}
}

// xAI counts reasoning tokens outside completion_tokens (but in
// total_tokens, and bills them); OpenRouter reports what a call cost.
func TestUsageOfOpenAIDialects(t *testing.T) {
	for _, c := range []struct {
		name, usage string
		want        Usage
	}{
		{"xai", `{"prompt_tokens":288,"completion_tokens":27,"total_tokens":628,"prompt_tokens_details":{"cached_tokens":287},"completion_tokens_details":{"reasoning_tokens":313}}`,
			Usage{InputTokens: 288, OutputTokens: 340, CacheReadTokens: 287}},
		{"openai", `{"prompt_tokens":106,"completion_tokens":50,"total_tokens":156,"completion_tokens_details":{"reasoning_tokens":20}}`,
			Usage{InputTokens: 106, OutputTokens: 50}},
		{"openrouter", `{"prompt_tokens":43,"completion_tokens":36,"total_tokens":79,"cost":0.000669}`,
			Usage{InputTokens: 43, OutputTokens: 36, CostUSD: 0.000669, Priced: true}},
	} {
		f := &fakeServer{path: "/v1/chat/completions", events: []string{
			`data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
			`data: {"choices":[],"usage":` + c.usage + `}`,
			`data: [DONE]`,
		}}
		p, _ := New(c.name, config.Provider{Kind: "openai", BaseURL: serve(t, f) + "/v1", Model: "m"}, env)
		resp, _, _, err := collect(t, p, Request{Messages: []Message{{Role: RoleUser, Text: "x"}}})
		if err != nil || resp.Usage != c.want {
			t.Errorf("%s: usage %+v, want %+v (%v)", c.name, resp.Usage, c.want, err)
		}
	}
}
