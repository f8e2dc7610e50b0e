package protocol

import "fmt"

// CheckClientMessageID refuses a malformed clientMessageId: one must be
// 1 to 128 of A-Z a-z 0-9 . _ : - ("" is none, which is fine).
func CheckClientMessageID(id string) error {
	if id == "" || validClientMessageID(id) {
		return nil
	}
	shown := id
	if len(shown) > 140 {
		shown = shown[:140] + "…"
	}
	return &ParamsError{Field: "clientMessageId", Reason: fmt.Sprintf("%q: 1 to 128 of A-Z a-z 0-9 . _ : -", shown)}
}

// validClientMessageID says whether id is 1 to 128 of A-Z a-z 0-9 . _ :
// - (a loop: the regexp's {1,128} compiled to 128 copies of its class at
// every process's start).
func validClientMessageID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}
