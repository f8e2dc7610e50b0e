package instructions_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/instructions"
	"github.com/zeroclaw/zeroclaw/internal/tool"
)

// The default instructions speak of the tools an agent has, from each
// tool's guide, and never of one it lacks: an agent without a tool is
// not told to use it.
func TestDefaultNamesOnlyTheAgentsTools(t *testing.T) {
	all := tool.Builtins()
	for _, mode := range []string{"code", "chat"} {
		for i, missing := range all {
			var have []instructions.Tool
			for j, tl := range all {
				if j != i {
					have = append(have, instructions.Tool{Name: tl.Spec().Name, Guide: tl.Spec().Guide})
				}
			}
			got := instructions.Default(mode, have)
			name := missing.Spec().Name
			// A name that is also a word of the text without tools
			// ("task") is judged by its guide alone.
			named := regexp.MustCompile(`\b` + name + `\b`)
			if named.MatchString(got) && !named.MatchString(instructions.Default(mode, nil)) || strings.Contains(got, missing.Spec().Guide) {
				t.Errorf("%s mode without %s names it:\n%s", mode, name, got)
			}
			for _, h := range have {
				if !regexp.MustCompile(`\b` + h.Name + `\b`).MatchString(got) {
					t.Errorf("%s mode with %s does not name it", mode, h.Name)
				}
			}
		}
	}
	// No tools: nothing about tools or approvals.
	if got := instructions.Default("chat", nil); regexp.MustCompile(`tool|approval`).MatchString(got) {
		t.Errorf("no tools, yet:\n%s", got)
	}
}
