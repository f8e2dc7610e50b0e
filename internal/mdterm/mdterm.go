// Package mdterm renders the Markdown a model writes for a terminal:
// headings, emphasis, inline code, links, lists, quotes, rules, tables
// and fenced code with its syntax highlighted, as ANSI SGR sequences.
//
// It is written for this job rather than taken from glamour: glamour's
// package initialisation (chroma's lexers and styles, goldmark) costs
// ~28 ms at the start of every zeroclaw process on this machine,
// `zeroclaw acp` included, and a streaming reply is rendered again at
// every frame, so the renderer must be cheap on partial input too. Input
// is never interpreted as terminal control: escape bytes in the text are
// shown as "^[".
package mdterm

import (
	"strings"
	"unicode/utf8"
)

// SGR sequences.
const (
	reset     = "\x1b[0m"
	bold      = "\x1b[1m"
	dim       = "\x1b[2m"
	italic    = "\x1b[3m"
	underline = "\x1b[4m"
	cyan      = "\x1b[36m"
	magenta   = "\x1b[35m"
	green     = "\x1b[32m"
	yellow    = "\x1b[33m"
	blue      = "\x1b[34m"
	gray      = "\x1b[90m"
)

// Render turns src into text for a terminal; color false gives plain text
// with the Markdown markers that carry meaning (bullets, quotes) kept.
func Render(src string, color bool) string {
	r := &renderer{color: color}
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence := trimmed[:3]
			lang := strings.TrimSpace(strings.TrimLeft(trimmed, "`~"))
			var code []string
			j := i + 1
			for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), fence); j++ {
				code = append(code, lines[j])
			}
			r.code(lang, code)
			i = j // the closing fence (or the end: a block still streaming)
		case strings.HasPrefix(trimmed, "#"):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			text := strings.TrimSpace(trimmed[level:])
			if level > 6 || (text != "" && trimmed[level] != ' ') {
				r.para(line)
				continue
			}
			style := bold + blue
			if level == 1 {
				style = bold + underline + blue
			}
			r.line(r.sgr(style) + r.inline(text) + r.sgr(reset))
		case isRule(trimmed):
			r.line(r.sgr(gray) + strings.Repeat("─", 40) + r.sgr(reset))
		case strings.HasPrefix(trimmed, ">"):
			text := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			r.line(r.sgr(gray) + "│ " + r.sgr(reset) + r.sgr(italic) + r.inline(text) + r.sgr(reset))
		case isBullet(trimmed):
			indent := strings.Repeat("  ", (len(line)-len(strings.TrimLeft(line, " \t")))/2)
			text := trimmed[2:]
			box := ""
			if strings.HasPrefix(text, "[ ] ") || strings.HasPrefix(text, "[x] ") || strings.HasPrefix(text, "[X] ") {
				box = "☐ "
				if text[1] != ' ' {
					box = "☑ "
				}
				text = text[4:]
			}
			r.line(indent + r.sgr(yellow) + "• " + r.sgr(reset) + box + r.inline(text))
		case orderedItem(trimmed) > 0:
			n := orderedItem(trimmed)
			indent := strings.Repeat("  ", (len(line)-len(strings.TrimLeft(line, " \t")))/2)
			r.line(indent + r.sgr(yellow) + trimmed[:n] + r.sgr(reset) + " " + r.inline(strings.TrimSpace(trimmed[n:])))
		case strings.HasPrefix(trimmed, "|") && strings.HasSuffix(trimmed, "|"):
			if isTableRule(trimmed) {
				r.line(r.sgr(gray) + strings.Map(func(c rune) rune {
					if c == '|' {
						return '┼'
					}
					return '─'
				}, trimmed) + r.sgr(reset))
				continue
			}
			cells := strings.Split(strings.Trim(trimmed, "|"), "|")
			for k, c := range cells {
				cells[k] = " " + r.inline(strings.TrimSpace(c)) + " "
			}
			r.line(r.sgr(gray) + "│" + r.sgr(reset) + strings.Join(cells, r.sgr(gray)+"│"+r.sgr(reset)) + r.sgr(gray) + "│" + r.sgr(reset))
		default:
			r.para(line)
		}
	}
	return strings.TrimRight(r.b.String(), "\n")
}

type renderer struct {
	b     strings.Builder
	color bool
}

func (r *renderer) sgr(s string) string {
	if r.color {
		return s
	}
	return ""
}

func (r *renderer) line(s string) {
	r.b.WriteString(s)
	r.b.WriteByte('\n')
}

func (r *renderer) para(line string) { r.line(r.inline(line)) }

func (r *renderer) code(lang string, code []string) {
	if lang != "" {
		r.line(r.sgr(gray) + "┌ " + safe(lang) + r.sgr(reset))
	}
	for _, l := range code {
		r.line(r.sgr(gray) + "│ " + r.sgr(reset) + r.highlight(lang, l))
	}
	if lang != "" {
		r.line(r.sgr(gray) + "└" + r.sgr(reset))
	}
}

func isRule(s string) bool {
	if len(s) < 3 {
		return false
	}
	for _, c := range []string{"-", "*", "_"} {
		if strings.Trim(strings.ReplaceAll(s, " ", ""), c) == "" {
			return true
		}
	}
	return false
}

func isBullet(s string) bool {
	return len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' '
}

// orderedItem returns the length of "12." or "12)" opening s, else 0.
func orderedItem(s string) int {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
		return 0
	}
	return i + 1
}

func isTableRule(s string) bool {
	return strings.Trim(s, "|-: ") == "" && strings.Contains(s, "-")
}

// inline renders code spans, strong and emphasis, links and escapes.
func (r *renderer) inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if out, n := r.span(s, i); n > 0 {
			b.WriteString(out)
			i += n
			continue
		}
		ch, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(safe(string(ch)))
		i += size
	}
	return b.String()
}

// span renders the span that opens at s[i] (an escape, a code span,
// strong, emphasis, strikethrough or a link) and returns it with the
// bytes it took; none taken when no span opens there, or when one that
// opens is never closed (its marks then show as they are).
func (r *renderer) span(s string, i int) (string, int) {
	c := s[i]
	switch {
	case c == '\\' && i+1 < len(s) && strings.IndexByte("\\`*_[]()#+-.!|<>", s[i+1]) >= 0:
		return s[i+1 : i+2], 2
	case c == '`':
		return r.codeSpan(s[i:])
	case (c == '*' || c == '_') && i+1 < len(s) && s[i+1] == c:
		return r.enclosed(s[i:], s[i:i+2], bold)
	case (c == '*' || c == '_') && i+1 < len(s) && s[i+1] != ' ' && (c == '*' || i == 0 || !isWord(s[i-1])):
		return r.emphasis(s[i:])
	case c == '~' && i+1 < len(s) && s[i+1] == '~':
		return r.enclosed(s[i:], "~~", "\x1b[9m")
	case c == '[':
		return r.link(s[i:])
	}
	return "", 0
}

// codeSpan renders the code span s opens with, closed by as many
// backticks as opened it; its text is shown as it is, not as Markdown.
func (r *renderer) codeSpan(s string) (string, int) {
	n := 1
	for n < len(s) && s[n] == '`' {
		n++
	}
	tick := s[:n]
	end := strings.Index(s[n:], tick)
	if end < 0 {
		return "", 0
	}
	return r.sgr(cyan) + safe(s[n:n+end]) + r.sgr(reset), n + end + n
}

// enclosed renders the non-empty text between the mark s opens with and
// the same mark after it in style: strong (** or __), strikethrough (~~).
func (r *renderer) enclosed(s, mark, style string) (string, int) {
	end := strings.Index(s[len(mark):], mark)
	if end <= 0 {
		return "", 0
	}
	return r.sgr(style) + r.inline(s[len(mark):len(mark)+end]) + r.sgr(reset), len(mark) + end + len(mark)
}

// emphasis renders the emphasis s opens with (* or _), closed by the same
// mark after a character that is not a space.
func (r *renderer) emphasis(s string) (string, int) {
	end := strings.IndexByte(s[1:], s[0])
	if end <= 0 || s[end] == ' ' {
		return "", 0
	}
	return r.sgr(italic) + r.inline(s[1:1+end]) + r.sgr(reset), 1 + end + 1
}

// link renders the [text](url) s opens with: the text, then the URL when
// it is not the text itself.
func (r *renderer) link(s string) (string, int) {
	close := strings.Index(s, "](")
	if close <= 0 {
		return "", 0
	}
	end := strings.IndexByte(s[close+2:], ')')
	if end < 0 {
		return "", 0
	}
	text := s[1:close]
	url := s[close+2 : close+2+end]
	out := r.inline(text)
	if url != text {
		out += " " + r.sgr(underline+blue) + safe(url) + r.sgr(reset)
	}
	return out, close + 2 + end + 1
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// safe shows control characters (an escape sequence in model output)
// as caret notation instead of sending them to the terminal.
func safe(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\t':
			b.WriteString("    ")
		case c < 0x20 || c == 0x7f:
			b.WriteByte('^')
			b.WriteByte(byte(c) ^ 0x40)
		case c >= 0x80 && c < 0xa0:
			b.WriteString("^?")
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func isControl(c rune) bool { return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) }

// Safe is safe for text shown outside Markdown (tool output, notes).
func Safe(s string) string { return safe(s) }

// SafeLines is Safe line by line: its line breaks stay (a question of
// several lines), every other control character is shown, not obeyed.
func SafeLines(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = safe(l)
	}
	return strings.Join(lines, "\n")
}
