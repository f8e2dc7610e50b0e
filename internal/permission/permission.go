// Package permission judges a tool call by rules: a tool, a pattern (a
// glob over the shell command line, or over the file tool's path
// relative to the session directory) and a decision (allow, ask, deny).
// A shell command line is judged part by part: each simple command in
// it (after &&, ||, ;, |, in a subshell or a command substitution) is a
// subject of its own, so an allow rule for `git status*` does not allow
// `git status && rm -rf x`.
package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Decisions.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// Rule is one rule: from the config, or stored from an "always" answer.
type Rule struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"` // a tool's name, or "*"
	Pattern  string `json:"pattern"`
	Decision string `json:"decision"`
	// Dir is the project directory a stored answer holds for ("" for the
	// config's rules: everywhere).
	Dir string `json:"dir,omitempty"`
	// Origin says where it comes from: "config", "answer".
	Origin string `json:"origin"`
}

// String names the rule for a person.
func (r Rule) String() string {
	return r.Decision + " " + r.Tool + " " + strconvQuote(r.Pattern) + " (" + r.Origin + ")"
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Verdict is what the rules say of a call: a decision and the rule that
// made it ("" and nil: no rule applies).
type Verdict struct {
	Decision string
	Rule     *Rule
}

// Subjects are what a call's rules match: each simple command of a shell
// command line, the path of a file tool (relative to cwd), else the
// tool's input as a whole.
func Subjects(tool string, input json.RawMessage, cwd string) []string {
	var a struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	json.Unmarshal(input, &a)
	switch {
	case a.Command != "":
		return commands(a.Command)
	case a.Path != "":
		p := a.Path
		if filepath.IsAbs(p) {
			if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
		return []string{filepath.ToSlash(filepath.Clean(p))}
	}
	return []string{string(input)}
}

// commands splits a command line into its simple commands, each printed
// as a line; one that cannot be parsed is one subject, as written, and
// marked so that no allow rule allows it.
func commands(line string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return []string{unparsable + line}
	}
	var out []string
	p := syntax.NewPrinter()
	syntax.Walk(f, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			var b strings.Builder
			for i, w := range ce.Args {
				if i > 0 {
					b.WriteByte(' ')
				}
				p.Print(&b, w)
			}
			out = append(out, b.String())
		}
		return true
	})
	if len(out) == 0 {
		out = []string{strings.TrimSpace(line)}
	}
	return out
}

// unparsable prefixes a command line the shell parser refused.
const unparsable = "\x00"

// Judge is the verdict of rules on a call of tool with these subjects:
// a deny rule that matches any subject wins, wherever it stands; else
// each subject takes the first rule that matches it, and the call is
// allowed only when every subject is; a subject no rule matches leaves
// the call to the risk level (no verdict), unless another subject's
// rule says ask.
func Judge(rules []Rule, tool string, subjects []string) Verdict {
	for i := range rules {
		r := &rules[i]
		if r.Decision != Deny || !toolMatch(r.Tool, tool) {
			continue
		}
		for _, s := range subjects {
			if Match(r.Pattern, strings.TrimPrefix(s, unparsable)) {
				return Verdict{Deny, r}
			}
		}
	}
	var ask, allow *Rule
	allowed := 0
	for _, s := range subjects {
		for i := range rules {
			r := &rules[i]
			if r.Decision == Deny || !toolMatch(r.Tool, tool) || !Match(r.Pattern, strings.TrimPrefix(s, unparsable)) {
				continue
			}
			switch {
			case r.Decision == Ask:
				ask = r
			case strings.HasPrefix(s, unparsable):
				// Not understood: not allowed by a pattern.
			default:
				allow = r
				allowed++
			}
			break
		}
	}
	switch {
	case ask != nil:
		return Verdict{Ask, ask}
	case allowed == len(subjects) && allow != nil:
		return Verdict{Allow, allow}
	}
	return Verdict{}
}

func toolMatch(rule, tool string) bool { return rule == "*" || rule == tool }

// Match says whether a glob matches s whole: * matches any run of
// characters (spaces and slashes too), ? one character, [abc] one of a
// set; a pattern of "" or "*" matches everything.
func Match(pattern, s string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	pattern = strings.ReplaceAll(pattern, "**", "*")
	return match(pattern, s)
}

func match(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for i := 0; i <= len(s); i++ {
				if match(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			p, s = p[1:], s[1:]
		case '[':
			end := strings.IndexByte(p, ']')
			if end < 0 { // no set: a literal [
				if len(s) == 0 || s[0] != '[' {
					return false
				}
				p, s = p[1:], s[1:]
				continue
			}
			if len(s) == 0 || !strings.ContainsRune(p[1:end], rune(s[0])) {
				return false
			}
			p, s = p[end+1:], s[1:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}

// Exact is the pattern that matches this call's input alone (its one
// subject, escaped), and whether a rule of it would allow exactly this
// call: not a compound command line (each part would then be allowed
// alone, in any other line) nor one the shell parser refuses (no
// pattern allows it). For those the pattern is the whole line escaped,
// for a person to read.
func Exact(tool string, input json.RawMessage, cwd string) (string, bool) {
	subjects := Subjects(tool, input, cwd)
	if len(subjects) == 1 && !strings.HasPrefix(subjects[0], unparsable) {
		return Escape(subjects[0]), true
	}
	var a struct {
		Command string `json:"command"`
	}
	json.Unmarshal(input, &a)
	return Escape(a.Command), false
}

// Escape makes s a pattern that matches s alone.
func Escape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// ProjectDir is where a session's stored answers hold: the git root
// above cwd, else cwd.
func ProjectDir(cwd string) string {
	for d := filepath.Clean(cwd); ; {
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && fi != nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Clean(cwd)
		}
		d = parent
	}
}
