package mdterm

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// language is what the highlighter knows of one: its keywords and how a
// line comment starts.
type language struct {
	keywords map[string]bool
	comment  []string // line comment openers
	backtick bool     // `...` is a string
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var cLike = []string{"//"}

// languages is built on first use: a process that never renders code
// (zeroclaw acp, the daemon) does not pay for it at start.
var languages = sync.OnceValue(func() map[string]*language {
	return map[string]*language{
		"go": {keywords: words(`break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota error string int int64 uint8 byte rune bool any float64`),
			comment: cLike, backtick: true},
		"python": {keywords: words(`and as assert async await break class continue def del elif else except finally for from global if import in is lambda None nonlocal not or pass raise return True False try while with yield self`),
			comment: []string{"#"}},
		"javascript": {keywords: words(`async await break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new null return super switch this throw true false try typeof undefined var void while with yield of interface type enum implements readonly`),
			comment: cLike, backtick: true},
		"rust": {keywords: words(`as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err`),
			comment: cLike},
		"c": {keywords: words(`auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete this namespace template typename virtual override bool true false nullptr import package final extends implements throws try catch throw string`),
			comment: cLike},
		"shell": {keywords: words(`if then else elif fi for while until do done case esac in function return export local set unset echo exit cd source`),
			comment: []string{"#"}},
		"sql": {keywords: words(`select from where insert into values update set delete create table index drop alter join left right inner outer on group by order having limit offset as and or not null primary key references union distinct SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE INDEX DROP ALTER JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT OFFSET AS AND OR NOT NULL PRIMARY KEY REFERENCES UNION DISTINCT`),
			comment: []string{"--"}},
		"data": {keywords: words(`true false null`), comment: []string{"#"}},
	}
})

var aliases = map[string]string{
	"golang": "go", "py": "python", "python3": "python", "js": "javascript", "ts": "javascript", "typescript": "javascript",
	"jsx": "javascript", "tsx": "javascript", "node": "javascript", "rs": "rust", "cpp": "c", "c++": "c", "h": "c", "java": "c",
	"cs": "c", "csharp": "c", "kotlin": "c", "swift": "c", "sh": "shell", "bash": "shell", "zsh": "shell", "console": "shell",
	"json": "data", "yaml": "data", "yml": "data", "toml": "data", "ini": "data",
}

func lookup(lang string) *language {
	lang = strings.ToLower(lang)
	if a, ok := aliases[lang]; ok {
		lang = a
	}
	return languages()[lang]
}

// highlight colours one line of code in lang; unknown languages stay
// plain, a diff colours its added and removed lines.
func (r *renderer) highlight(lang, line string) string {
	if !r.color {
		return safe(line)
	}
	if l := strings.ToLower(lang); l == "diff" || l == "patch" {
		return highlightDiff(line)
	}
	lg := lookup(lang)
	if lg == nil {
		return safe(line)
	}
	return lg.colour(line)
}

// highlightDiff colours a diff's added and removed lines and its hunk
// headers.
func highlightDiff(line string) string {
	switch {
	case strings.HasPrefix(line, "+"):
		return green + safe(line) + reset
	case strings.HasPrefix(line, "-"):
		return "\x1b[31m" + safe(line) + reset
	case strings.HasPrefix(line, "@@"):
		return cyan + safe(line) + reset
	}
	return safe(line)
}

// colour colours one line of code: strings, numbers, keywords, and a
// comment to the end of the line.
func (lg *language) colour(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		c := line[i]
		rest := line[i:]
		if commentAt(lg, rest) {
			b.WriteString(gray + safe(rest) + reset)
			break
		}
		switch {
		case c == '"' || c == '\'' || (c == '`' && lg.backtick):
			j := quotedEnd(line, i)
			b.WriteString(green + safe(line[i:j]) + reset)
			i = j
		case c >= '0' && c <= '9' && (i == 0 || !isWord(line[i-1])):
			j := i
			for j < len(line) && (isWord(line[j]) || line[j] == '.') {
				j++
			}
			b.WriteString(cyan + line[i:j] + reset)
			i = j
		case isWord(c):
			j := i
			for j < len(line) && isWord(line[j]) {
				j++
			}
			if w := line[i:j]; lg.keywords[w] {
				b.WriteString(magenta + w + reset)
			} else {
				b.WriteString(w)
			}
			i = j
		default:
			_, size := utf8.DecodeRuneInString(rest)
			b.WriteString(safe(rest[:size]))
			i += size
		}
	}
	return b.String()
}

// quotedEnd is where the string that opens at line[i] ends, past its
// closing quote (a backslash escapes the character after it); an
// unclosed string runs to the end of the line.
func quotedEnd(line string, i int) int {
	j := i + 1
	for j < len(line) && line[j] != line[i] {
		if line[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(line))
}

func commentAt(lg *language, s string) bool {
	for _, o := range lg.comment {
		if strings.HasPrefix(s, o) {
			return true
		}
	}
	return false
}
