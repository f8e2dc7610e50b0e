package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// direct is the floor: the same add as an in-process tool.
type direct struct{}

func (direct) Spec() tool.Spec                { return tool.Spec{Name: "add"} }
func (direct) Asks() bool                     { return false }
func (direct) Kind() string                   { return protocol.KindOther }
func (direct) Summary(json.RawMessage) string { return "" }
func (direct) Run(_ context.Context, _ *tool.Env, in json.RawMessage) tool.Result {
	var a struct{ A, B int }
	json.Unmarshal(in, &a)
	return tool.Result{Output: fmt.Sprint(a.A + a.B)}
}

// BenchmarkToolCall: a call of the stdio MCP server's add tool, against
// the same add as an in-process tool, in the same run.
func BenchmarkToolCall(b *testing.B) {
	set := NewSet(map[string]config.MCPServer{"calc": {Command: serverB(b)}}, nil, nil).WithTurnWait(time.Minute)
	defer set.Close()
	add := find(set.Tools(context.Background()), "mcp__calc__add")
	if add == nil {
		b.Fatal("no add tool")
	}
	in := json.RawMessage(`{"a":2,"b":3}`)
	var tm, td time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if r := add.Run(context.Background(), &tool.Env{}, in); r.Output != "5" {
			b.Fatal(r)
		}
		t1 := time.Now()
		if r := (direct{}).Run(context.Background(), &tool.Env{}, in); r.Output != "5" {
			b.Fatal(r)
		}
		tm += t1.Sub(t0)
		td += time.Since(t1)
	}
	b.ReportMetric(float64(tm.Nanoseconds())/float64(b.N), "mcp-ns/call")
	b.ReportMetric(float64(td.Nanoseconds())/float64(b.N), "direct-ns/call")
}
