package protocol

import (
	"encoding/json"
	"testing"
)

func TestDecodeSpellings(t *testing.T) {
	tests := []struct {
		name, in string
		wantV    int
		wantID   string
		wantErr  string
	}{
		{"camel", `{"protocolVersion":1,"clientId":"a"}`, 1, "a", ""},
		{"snake", `{"protocol_version":1,"client_id":"b"}`, 1, "b", ""},
		{"no case folding", `{"PROTOCOLVERSION":7,"ClientID":"c"}`, 0, "", ""},
		{"unknown keys ignored", `{"x":1}`, 0, "", ""},
		{"wrong type", `{"protocolVersion":"1"}`, 0, "", "invalid params: protocolVersion: must be an integer"},
		{"nested", `{"client_info":{"name":5}}`, 0, "", "invalid params: clientInfo.name: must be a string"},
		{"array params", `[1]`, 0, "", "invalid params: params must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p InitializeParams
			err := Decode(json.RawMessage(tt.in), &p)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := 0
			if p.ProtocolVersion != nil {
				v = *p.ProtocolVersion
			}
			if v != tt.wantV || p.ClientID != tt.wantID {
				t.Fatalf("got version %d id %q", v, p.ClientID)
			}
		})
	}
}
