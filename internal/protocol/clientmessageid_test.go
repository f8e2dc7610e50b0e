package protocol

import (
	"errors"
	"strings"
	"testing"
)

// A clientMessageId is 1 to 128 of A-Z a-z 0-9 . _ : -; "" is none.
func TestCheckClientMessageID(t *testing.T) {
	for id, ok := range map[string]bool{"": true, "a": true, "k-1.2_x:y": true, strings.Repeat("a", 128): true,
		strings.Repeat("a", 129): false, "a b": false, "é": false, "a/b": false, strings.Repeat("x", 300) + " ": false} {
		err := CheckClientMessageID(id)
		var pe *ParamsError
		if (err == nil) != ok || (err != nil && (!errors.As(err, &pe) || pe.Field != "clientMessageId" || len(pe.Reason) > 200)) {
			t.Errorf("%.20q: %v", id, err)
		}
	}
}
