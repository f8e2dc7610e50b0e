package agent

import "testing"

// Verdicts combine as the hooks of one event do: the first block's
// reason, the strictest permission, a deny's reason when none was given.
func TestHookVerdictWith(t *testing.T) {
	for _, c := range []struct {
		name string
		v, w HookVerdict
		want HookVerdict
	}{
		{"none", HookVerdict{}, HookVerdict{}, HookVerdict{}},
		{"a block", HookVerdict{}, HookVerdict{Block: true, Reason: "no"}, HookVerdict{Block: true, Reason: "no"}},
		{"the first block's reason", HookVerdict{Block: true, Reason: "first"}, HookVerdict{Block: true, Reason: "second"}, HookVerdict{Block: true, Reason: "first"}},
		{"stricter permission", HookVerdict{Permission: "allow"}, HookVerdict{Permission: "ask"}, HookVerdict{Permission: "ask"}},
		{"looser permission", HookVerdict{Permission: "deny", Reason: "d"}, HookVerdict{Permission: "allow"}, HookVerdict{Permission: "deny", Reason: "d"}},
		{"a deny's reason", HookVerdict{Permission: "ask"}, HookVerdict{Permission: "deny", Reason: "d"}, HookVerdict{Permission: "deny", Reason: "d"}},
		{"a block's reason before a deny's", HookVerdict{Block: true, Reason: "b"}, HookVerdict{Permission: "deny", Reason: "d"}, HookVerdict{Block: true, Reason: "b", Permission: "deny"}},
		{"a reason neither blocks nor denies", HookVerdict{}, HookVerdict{Permission: "ask", Reason: "r"}, HookVerdict{Permission: "ask"}},
	} {
		if got := c.v.With(c.w); got != c.want {
			t.Errorf("%s: %+v.With(%+v) = %+v, want %+v", c.name, c.v, c.w, got, c.want)
		}
	}
}
