package background

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Plain is a terminal's output as plain text: escape sequences removed,
// CRLF line ends made LF, and a line a carriage return went back over
// (a progress bar) kept as it was last drawn.
func Plain(b []byte) string {
	s := ansi.Strip(string(b))
	if !strings.ContainsRune(s, '\r') {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
