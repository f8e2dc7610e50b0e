package talk

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// darkBackground says whether the terminal's background is dark without
// asking the terminal. Asking (OSC 11, then a cursor report to know when
// the answer will not come) writes to the terminal and waits for its
// answer: in a terminal that does not answer, the chat would start
// seconds late and the queries would be left in the user's scrollback,
// and an answer arriving once the chat reads its input would be taken
// for typed keys. COLORFGBG ("fg;bg", set by rxvt, Konsole and others)
// names the background's ANSI colour where it is set; dark otherwise,
// the common case. The colours that count as dark are those a luminance
// below one half gives (0 to 6 of the 16), as termenv computes it.
func darkBackground(getenv func(string) string) bool {
	v := getenv("COLORFGBG")
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return true
	}
	bg, err := strconv.Atoi(v[i+1:])
	if err != nil || bg < 0 || bg > 15 {
		return true
	}
	return bg <= 6
}

// settleBackground tells Lip Gloss the background before the chat's
// program starts, so that no style ever asks the terminal (Lip Gloss
// would on the first adaptive colour it renders, with Bubble Tea then
// reading the terminal's input: the answer would take the 5 s timeout
// and arrive as keys).
func settleBackground(getenv func(string) string) {
	lipgloss.SetHasDarkBackground(darkBackground(getenv))
}
