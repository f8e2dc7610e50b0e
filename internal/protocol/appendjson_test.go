package protocol

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// AppendJSON writes what encoding/json writes (without HTML escaping),
// byte for byte: for the zero status, for one with every member filled
// (so a member added to StatusResult or its parts and not to AppendJSON
// fails here), and for many filled at random, some members empty, with
// strings that need escaping and floats of every magnitude.
func TestStatusAppendJSONIsEncodingJSON(t *testing.T) {
	check := func(r *StatusResult) {
		t.Helper()
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		got, err := r.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		if w := append([]byte("prefix"), bytes.TrimSuffix(want.Bytes(), []byte("\n"))...); !bytes.Equal(got, w) {
			t.Fatalf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, w)
		}
	}
	check(&StatusResult{})
	rng := rand.New(rand.NewPCG(49, 6))
	var full StatusResult
	fillStatus(t, reflect.ValueOf(&full).Elem(), rng, true)
	check(&full)
	for range 2000 {
		var r StatusResult
		fillStatus(t, reflect.ValueOf(&r).Elem(), rng, false)
		check(&r)
	}
}

// The values encoding/json refuses, AppendJSON refuses too.
func TestStatusAppendJSONRefusesNaN(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := StatusResult{Today: SpendToday{MaxCostUSDPerDay: f}}
		if _, err := json.Marshal(&r); err == nil {
			t.Fatalf("encoding/json took %v", f)
		}
		if _, err := r.AppendJSON(nil); err == nil {
			t.Fatalf("AppendJSON took %v", f)
		}
		r = StatusResult{Today: SpendToday{Usage: Usage{CostUSD: &f}}}
		if _, err := r.AppendJSON(nil); err == nil {
			t.Fatalf("AppendJSON took a cost of %v", f)
		}
	}
}

var (
	trickyStrings = []string{"", "a", "echo", "/tmp/zeroclaw/zeroclaw.sock", "<b>&amp;</b>", "é ü 日本", "\u2028\u2029",
		"\x00\x01\x1f\t\n\r\b\f", "bad \xff\xfe utf-8", `"quoted" \back\slash\`, `\u003c`, "\x7f"}
	trickyFloats = []float64{0, 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-10, 1e20, 1e21, 123456789.125, 0.1 + 0.2, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64}
	trickyInts   = []int64{0, 1, -1, 42, 1 << 40, math.MaxInt64, math.MinInt64}
)

// fillStatus sets every member of v (recursively) at random; full: none left
// empty. A member of a kind it does not know fails the test: AppendJSON
// would not know it either.
func fillStatus(t *testing.T, v reflect.Value, rng *rand.Rand, full bool) {
	t.Helper()
	empty := func() bool { return !full && rng.IntN(4) == 0 }
	switch v.Kind() {
	case reflect.String:
		s := trickyStrings[rng.IntN(len(trickyStrings))]
		if full && s == "" {
			s = "x"
		}
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		n := trickyInts[rng.IntN(len(trickyInts))]
		if v.Kind() == reflect.Int && v.Type().Size() < 8 {
			n = int64(int32(n))
		}
		if full && n == 0 {
			n = 7
		}
		v.SetInt(n)
	case reflect.Bool:
		v.SetBool(full || rng.IntN(2) == 0)
	case reflect.Float64:
		f := trickyFloats[rng.IntN(len(trickyFloats))]
		if full && f == 0 {
			f = 0.25
		}
		v.SetFloat(f / float64(1+rng.IntN(3))) // 1/3: the shortest spelling is long
	case reflect.Pointer:
		if empty() {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fillStatus(t, v.Elem(), rng, full)
	case reflect.Slice:
		if empty() {
			if rng.IntN(2) == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // [] and null differ
			}
			return
		}
		n := 1 + rng.IntN(3)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillStatus(t, v.Index(i), rng, full)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillStatus(t, v.Field(i), rng, full)
		}
	default:
		t.Fatalf("a member of kind %s (%s): teach StatusResult.AppendJSON and this test", v.Kind(), v.Type())
	}
}

// BenchmarkStatusAppendJSON: a fresh daemon's status, by hand and by
// encoding/json (b.N each); the daemon encodes it by hand.
func BenchmarkStatusAppendJSON(b *testing.B) {
	r := StatusResult{ServerVersion: "dev", ProtocolVersion: 1, PID: 4242, UptimeMs: 1234,
		Endpoint: "/run/user/1000/zeroclaw/daemon.sock", ConfigDir: "/home/someone/.config/zeroclaw",
		DataDir: "/home/someone/.local/share/zeroclaw", Clients: 1, Sessions: []SessionSummary{},
		Provider: "echo", Model: "echo", ProviderURL: "echo:",
		Agents: []AgentStatus{{Alias: "default", Provider: "echo", ProviderKind: "echo", Model: "echo", Risk: "supervised"}},
		Today:  SpendToday{Day: "2026-12-07"}, Sandbox: SandboxStatus{Mode: "workspace-write", Network: true, EnforcedBy: "landlock", Reason: "Landlock ABI 7"}}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1<<10)
		for b.Loop() {
			buf, _ = r.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(&r)
		}
	})
}
