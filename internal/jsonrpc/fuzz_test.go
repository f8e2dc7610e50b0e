package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// FuzzFrames feeds arbitrary bytes through the framer and the classifier
// and checks the invariants every frame must keep: the framer never returns
// a frame over the limit or with a line ending inside; every verdict is
// either a reply (which is valid JSON-RPC with a valid id) or a drop; a
// request keeps object/array params; nothing panics.
func FuzzFrames(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":1}`,
		`{"jsonrpc":"2.0","method":"status","params":{},"id":2}`,
		`{"jsonrpc":"2.0","result":{"action":"accept"},"id":"zc-out-0"}`,
		`{"jsonrpc":"2.0","error":{"code":-1,"message":"x","data":null},"id":"zc-out-0"}`,
		"[1,2]\n\n{}\r\n", `{"method":null}`, `{"jsonrpc":"2.0","method":"x","params":null,"id":{}}`,
		"\xff\xfe", `{"jsonrpc":"2.0","method":"a\u0000","id":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 256
		r := NewReader(bytes.NewReader(data), max)
		for {
			line, err := r.Read()
			if err != nil {
				var tl *FrameTooLargeError
				if !errors.Is(err, io.EOF) && !errors.As(err, &tl) {
					t.Fatalf("reader error %v", err)
				}
				return
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 || len(bytes.TrimSpace(line)) == 0 {
				t.Fatalf("bad frame %q", line)
			}
			checkScanner(t, line)
			msg, v := classify(line)
			switch {
			case v != nil && v.reply != nil:
				if v.reply.Code != CodeParseError && v.reply.Code != CodeInvalidRequest {
					t.Fatalf("unexpected code %d", v.reply.Code)
				}
				if !json.Valid(v.id.Raw()) {
					t.Fatalf("reply id %q not JSON", v.id.Raw())
				}
				if v.reply.Code == CodeParseError && json.Valid(line) {
					t.Fatalf("parse error for valid JSON %q", line)
				}
			case v != nil:
				if v.drop == "" {
					t.Fatal("empty verdict")
				}
			case msg.req != nil:
				if p := msg.req.Params; p != nil && kindOf(p) != '{' && kindOf(p) != '[' {
					t.Fatalf("params %q passed", p)
				}
			case msg.resp != nil:
				if (msg.resp.Error == nil) == (msg.resp.Result == nil) {
					t.Fatalf("response needs exactly one of result/error: %q", line)
				}
			default:
				t.Fatal("no classification")
			}
		}
	})
}

// checkScanner compares the envelope scanner with encoding/json on every
// valid object: same members, same raw values.
func checkScanner(t *testing.T, line []byte) {
	if !json.Valid(line) || kindOf(line) != '{' {
		return
	}
	var want map[string]json.RawMessage
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("valid object %q: %v", line, err)
	}
	env, ok := scanEnvelope(line)
	if !ok {
		t.Fatalf("scanner refused %q", line)
	}
	for _, m := range []struct {
		name string
		f    field
		got  json.RawMessage
	}{
		{"jsonrpc", fVersion, env.version}, {"method", fMethod, env.method}, {"id", fID, env.id},
		{"params", fParams, env.params}, {"result", fResult, env.result}, {"error", fError, env.err},
	} {
		w, has := want[m.name]
		if has != env.has(m.f) || has && !bytes.Equal(bytes.TrimSpace(w), m.got) {
			t.Fatalf("%q: member %s: scanner %v %q, encoding/json %v %q", line, m.name, env.has(m.f), m.got, has, w)
		}
	}
}
