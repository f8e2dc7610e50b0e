package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

// validCases: JSON and not quite, each judged as json.Valid judges it.
var validCases = []string{
	``, ` `, `{}`, `[]`, ` {} `, `{ }`, `[ ]`, `{`, `}`, `[`, `]`, `{]`, `[}`, `{}}`, `[]]`, `{}{}`, `[] []`,
	`{"a":1}`, `{"a" : 1 , "b":[1,2,{}]}`, `{"a":}`, `{"a"}`, `{"a":1,}`, `{,"a":1}`, `{a:1}`, `{"a":1 "b":2}`, `{1:2}`,
	`[1,]`, `[,1]`, `[1 2]`, `[1,,2]`, `["a",true,false,null]`,
	`true`, `false`, `null`, `tru`, `nul`, `nulls`, `True`, `truefalse`,
	`0`, `-0`, `01`, `-01`, `1.`, `.1`, `1.5`, `-1.5e10`, `1e`, `1e+`, `1e-5`, `1E5`, `1.e5`, `-`, `+1`, `1.5.5`, `0x10`, `1_000`,
	`123456789012345678901234567890`, `-`, `--1`, `1-`, `1e5e5`,
	`""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\uD800"`, `"\u00g9"`, `"\u00"`, `"\x"`, `"\'"`, `"a`, `"\`, `"\"`,
	"\"tab\there\"", "\"nl\nhere\"", "\"\x7f\"", "\"\xff\xfe bad utf-8\"", "\"é\"", "\"\x00\"", "\"\x1f\"",
	"\t\r\n {\"a\":[\r\n]}\n", "\v{}", "{}\x00", "\xef\xbb\xbf{}",
	`{"jsonrpc":"2.0","method":"status","params":{},"id":1}`,
	`{"jsonrpc":"2.0","method":"x","params":null,"id":{}}`,
	strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting),
	strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1),
	strings.Repeat(`{"a":`, maxNesting) + "1" + strings.Repeat("}", maxNesting),
	strings.Repeat(`{"a":`, maxNesting) + "{}" + strings.Repeat("}", maxNesting),
	strings.Repeat("[", maxNesting-1) + "{}" + strings.Repeat("]", maxNesting-1),
}

func TestValidJSONIsJSONValid(t *testing.T) {
	for _, c := range validCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

// FuzzValidJSON holds validJSON to json.Valid on any bytes.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validCases {
		if len(c) < 200 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}
