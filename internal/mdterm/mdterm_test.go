package mdterm

import (
	"strings"
	"testing"
)

func TestRenderPlain(t *testing.T) {
	src := "# Title\n\nSome **bold**, *em*, `code` and [a link](https://x.test).\n\n- one\n- [x] done\n1. first\n> quoted\n\n```go\nfunc main() { // hi\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n---\nescape \x1b[31m here"
	got := Render(src, false)
	for _, want := range []string{"Title\n", "Some bold, em, code and a link https://x.test.", "• one", "• ☑ done", "1. first", "│ quoted",
		"┌ go\n│ func main() { // hi\n└", "│ a │ b │", "┼───┼", "escape ^[[31m here"} {
		if !strings.Contains(got, want) {
			t.Fatalf("plain render lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Fatalf("plain render has an escape:\n%q", got)
	}
}

func TestRenderColor(t *testing.T) {
	got := Render("# T\n**b** `c`\n```go\nreturn \"s\" // c\n```\n```diff\n+add\n-del\n```", true)
	for _, want := range []string{bold + underline + blue + "T" + reset, bold + "b" + reset, cyan + "c" + reset,
		magenta + "return" + reset, green + `"s"` + reset, gray + "// c" + reset, green + "+add" + reset, "\x1b[31m-del" + reset} {
		if !strings.Contains(got, want) {
			t.Fatalf("colour render lacks %q:\n%q", want, got)
		}
	}
	// Model output never reaches the terminal as control sequences.
	got = Render("x \x1b]0;title\x07 `\x1b[2J`\n```go\n\"\x1b[2J\"\n```", true)
	if strings.Contains(got, "\x1b]") || strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\x07") {
		t.Fatalf("control sequence passed through: %q", got)
	}
}

// A reply still streaming (an open code fence, a half-written emphasis)
// renders without losing text.
func TestRenderPartial(t *testing.T) {
	got := Render("text **half\n```py\nprint('x')", false)
	if !strings.Contains(got, "text **half") || !strings.Contains(got, "│ print('x')") {
		t.Fatalf("partial render: %q", got)
	}
}
