package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCut(t *testing.T) {
	big := strings.Repeat("é<", 300000) // 900,000 bytes of UTF-8
	escaped, _ := json.Marshal(map[string]any{"sessionId": "s", "seq": 7, "type": "tool_call",
		"rawInput": map[string]any{"path": "a.txt", "content": big}})
	obj := encode(map[string]any{"sessionId": "s", "seq": 7, "type": "tool_call",
		"rawInput": map[string]any{"path": "a.txt", "content": big}})
	// An object that only HTML escaping made big fits once re-encoded.
	if out := Cut(escaped, len(obj)); string(out) != string(obj) {
		t.Fatalf("escaped object re-encoded to %d bytes, want %d and no cut", len(out), len(obj))
	}
	for _, max := range []int{1000, 64 << 10, len(obj) - 1} {
		out := Cut(obj, max)
		if len(out) > max {
			t.Fatalf("max %d: cut to %d bytes", max, len(out))
		}
		var got struct {
			Seq      int            `json:"seq"`
			Type     string         `json:"type"`
			RawInput map[string]any `json:"rawInput"`
			Cut      CutInfo        `json:"cut"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("max %d: invalid JSON: %v", max, err)
		}
		if got.Seq != 7 || got.Type != "tool_call" || got.RawInput["path"] != "a.txt" {
			t.Fatalf("max %d: lost the small members: %s", max, out[:200])
		}
		if got.Cut.OriginalBytes != len(obj) || len(got.Cut.Paths) != 1 || got.Cut.Paths[0] != "rawInput.content" {
			t.Fatalf("max %d: marker %+v", max, got.Cut)
		}
		c := got.RawInput["content"].(string)
		if !strings.HasPrefix(big, strings.TrimSuffix(c, "…")) || !strings.HasSuffix(c, "…") {
			t.Fatalf("max %d: the cut string is not a prefix of the original", max)
		}
	}
	if small := []byte(`{"a":"b"}`); string(Cut(small, 100)) != string(small) {
		t.Fatal("an object that fits was changed")
	}
	many, _ := json.Marshal(map[string]any{"a": strings.Repeat("[1,", 10) + "1", "n": make([]int, 5000)})
	if out := Cut(many, 500); len(out) > 500 || !json.Valid(out) {
		t.Fatalf("uncuttable object: %d bytes %s", len(out), out)
	}
}
