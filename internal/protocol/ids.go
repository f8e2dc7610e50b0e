package protocol

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
)

// NewID is a fresh identifier: prefix and n random bytes in hex
// ("ses_" and 8 bytes: ses_<16 hex>). Every id the daemon gives out is
// made here.
func NewID(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather)
	return prefix + hex.EncodeToString(b)
}

// CompactJSON is raw without insignificant space (raw as it is when it
// does not parse), so equal values compare equal as bytes.
func CompactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
