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

// ValidID reports whether s is a valid client or session id:
// 1-128 characters of [A-Za-z0-9._-].
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
