package provider

import (
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/config"
)

// Price is what a model's tokens cost, in USD per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// Cost is what u's tokens cost at p, in USD: the input not read from or
// written to the cache at the input price, the cache's parts at theirs.
func (p Price) Cost(u Usage) float64 {
	fresh := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	return (float64(fresh)*p.Input + float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.OutputTokens)*p.Output) / 1e6
}

// PriceFor is what model costs on the provider pc configures: its
// [pricing] table when it has one, else the built-in table's price for
// the model; false when neither knows.
func PriceFor(pc config.Provider, model string) (Price, bool) {
	if pr := pc.Pricing; pr != nil {
		p := Price{Input: pr.Input, Output: pr.Output, CacheRead: pr.Input, CacheWrite: pr.Input}
		if pr.CacheRead != nil {
			p.CacheRead = *pr.CacheRead
		}
		if pr.CacheWrite != nil {
			p.CacheWrite = *pr.CacheWrite
		}
		return p, true
	}
	if pc.Kind == config.KindEcho {
		return Price{}, false
	}
	if model == "" {
		model = pc.Model
	}
	return builtinPrice(model)
}

// builtinPrice looks model up in prices by its longest matching prefix
// ("gpt-4o-mini-2024-07-18" is "gpt-4o-mini"); a router's "vendor/" in
// front of the name ("anthropic/claude-sonnet-4") is left out.
func builtinPrice(model string) (Price, bool) {
	model = strings.ToLower(model)
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	best, found := "", false
	for prefix := range prices {
		if strings.HasPrefix(model, prefix) && len(prefix) > len(best) {
			best, found = prefix, true
		}
	}
	return prices[best], found
}

// prices are the list prices (USD per million tokens) of the common
// OpenAI, Anthropic and DeepSeek models, by model-name prefix, as
// published in 2025. OpenAI and DeepSeek charge nothing extra to write
// their caches (cache write: the input price); Anthropic's 5-minute
// cache writes cost 1.25 times the input. A provider's [pricing] table
// replaces them.
var prices = map[string]Price{
	// Anthropic
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-3-opus":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-3-5-sonnet": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.3},
	// OpenAI
	"gpt-5":         {Input: 1.25, Output: 10, CacheRead: 0.125, CacheWrite: 1.25},
	"gpt-5-mini":    {Input: 0.25, Output: 2, CacheRead: 0.025, CacheWrite: 0.25},
	"gpt-5-nano":    {Input: 0.05, Output: 0.4, CacheRead: 0.005, CacheWrite: 0.05},
	"gpt-4.1":       {Input: 2, Output: 8, CacheRead: 0.5, CacheWrite: 2},
	"gpt-4.1-mini":  {Input: 0.4, Output: 1.6, CacheRead: 0.1, CacheWrite: 0.4},
	"gpt-4.1-nano":  {Input: 0.1, Output: 0.4, CacheRead: 0.025, CacheWrite: 0.1},
	"gpt-4o":        {Input: 2.5, Output: 10, CacheRead: 1.25, CacheWrite: 2.5},
	"gpt-4o-mini":   {Input: 0.15, Output: 0.6, CacheRead: 0.075, CacheWrite: 0.15},
	"o1":            {Input: 15, Output: 60, CacheRead: 7.5, CacheWrite: 15},
	"o1-mini":       {Input: 1.1, Output: 4.4, CacheRead: 0.55, CacheWrite: 1.1},
	"o3":            {Input: 2, Output: 8, CacheRead: 0.5, CacheWrite: 2},
	"o3-mini":       {Input: 1.1, Output: 4.4, CacheRead: 0.55, CacheWrite: 1.1},
	"o4-mini":       {Input: 1.1, Output: 4.4, CacheRead: 0.275, CacheWrite: 1.1},
	"gpt-3.5-turbo": {Input: 0.5, Output: 1.5, CacheRead: 0.5, CacheWrite: 0.5},
	// DeepSeek (V3.2: chat and reasoner alike)
	"deepseek-chat":     {Input: 0.28, Output: 0.42, CacheRead: 0.028, CacheWrite: 0.28},
	"deepseek-reasoner": {Input: 0.28, Output: 0.42, CacheRead: 0.028, CacheWrite: 0.28},
}
