package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// CutInfo is the marker member "cut" of an object that was shortened to
// fit a frame: which strings were cut and how big the object was. The
// whole stored event can be fetched with session/event.
type CutInfo struct {
	Paths         []string `json:"paths"`
	OriginalBytes int      `json:"originalBytes"`
}

// Cut returns obj, a JSON object, at most max bytes long: its longest
// strings, wherever they are, are cut at a character boundary until it
// fits, and a member "cut" (CutInfo) says which. An object that fits is
// returned as it is. An object that cannot be made to fit by cutting
// strings keeps only its short top-level members.
func Cut(obj []byte, max int) []byte {
	if len(obj) <= max {
		return obj
	}
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return []byte(`{"cut":{"paths":[],"originalBytes":` + strconv.Itoa(len(obj)) + `}}`)
	}
	if out := encode(v); len(out) <= max {
		return out // escaped more than it needs to be; fits as it is
	}
	info := &CutInfo{OriginalBytes: len(obj)}
	v["cut"] = info
	for range 64 {
		out := encode(v)
		if len(out) <= max {
			return out
		}
		over := len(out) - max
		ref, path, n := longest(v, "")
		if ref == nil || n < 64 {
			break
		}
		keep := n - over - 64
		if keep < 0 {
			keep = 0
		}
		s := ref.get()
		for keep > 0 && !utf8.RuneStart(s[keep]) {
			keep--
		}
		ref.set(s[:keep] + "…")
		if !slices.Contains(info.Paths, path) {
			info.Paths = append(info.Paths, path)
		}
	}
	// Nothing long enough to cut: keep the small top-level members.
	small := map[string]any{"cut": info}
	for k, x := range v {
		if b := encode(x); len(b) <= 256 {
			small[k] = x
		}
	}
	return encode(small)
}

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// strRef is a place that holds a string in a decoded JSON tree.
type strRef struct {
	get func() string
	set func(string)
}

// longest finds the string with the longest encoding in v.
func longest(v any, path string) (*strRef, string, int) {
	var best *strRef
	bestPath, bestN := "", -1
	consider := func(r *strRef, p string, n int) {
		if r != nil && n > bestN {
			best, bestPath, bestN = r, p, n
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if s, ok := e.(string); ok {
				consider(&strRef{get: func() string { return x[k].(string) }, set: func(n string) { x[k] = n }}, p, len(s))
				continue
			}
			if _, ok := e.(*CutInfo); ok {
				continue
			}
			consider(longest(e, p))
		}
	case []any:
		for i, e := range x {
			p := fmt.Sprintf("%s[%d]", path, i)
			if s, ok := e.(string); ok {
				consider(&strRef{get: func() string { return x[i].(string) }, set: func(n string) { x[i] = n }}, p, len(s))
				continue
			}
			consider(longest(e, p))
		}
	}
	return best, bestPath, bestN
}
