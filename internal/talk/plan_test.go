package talk

import (
	"strings"
	"testing"
)

// zeroclaw prompt in the plan mode: the plan's end is asked on stderr
// and answered on stdin (accept edits, or keep planning with what to
// change, which the turn answers); --approve all proceeds asking; a
// closed stdin keeps planning, saying so.
func TestPromptPlanDecision(t *testing.T) {
	h := startDaemon(t, `
[agents.planner]
provider = "echo"
risk = "plan"
`)
	call := `/tool exit_plan {"plan":"1. write a.txt"}`
	for _, c := range []struct {
		name, stdin, approve string
		out, err             []string
	}{
		{name: "accept edits", stdin: "a\n", err: []string{"Proceed with this plan? [y]es, asking / [a]ccept edits / [n]o, keep planning: "},
			out: []string{"The user approved the plan", "now in the accept edits mode"}},
		{name: "keep planning, with what to change", stdin: "maybe\nn\nalso add a test\n",
			err: []string{"── plan (.zeroclaw/plans/", "1. write a.txt", "What should change? (Enter: nothing more) ", "The user wants more planning"}, out: []string{"echo: also add a test"}},
		{name: "--approve all proceeds", approve: "all", out: []string{"The user approved the plan", "now in the ask mode"}},
		{name: "stdin closed", err: []string{"(no answer: stdin closed) planning goes on"}, out: []string{"The user wants more planning"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errs, err := h.prompt(PromptOptions{Text: call, Agent: "planner", Approve: c.approve}, c.stdin)
			if err != nil {
				t.Fatalf("prompt: %v\nstdout %q\nstderr %q", err, out, errs)
			}
			for _, w := range c.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", w, out, errs)
				}
			}
			for _, w := range c.err {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}
