package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// status is encoded by hand (protocol.StatusResult.AppendJSON) from what
// is live at each call, and what it says of the agents is made once per
// config: a session created shows at once, a closed one is gone, and a
// reloaded config's agents, default model and budget show at the next
// call.
func TestStatusFollowsSessionsAndReload(t *testing.T) {
	r := startWith(t, echoAgent)
	a := connect(t, r.dirs.Endpoint, "")
	status := func() map[string]any { t.Helper(); return result(t, a.call("status", `{}`)) }
	sessions := func(st map[string]any) string {
		var ids []any
		for _, s := range st["sessions"].([]any) {
			ids = append(ids, s.(map[string]any)["sessionId"])
		}
		return fmt.Sprint(st["activeSessions"], ids)
	}
	agents := func(st map[string]any) string {
		var out []any
		for _, ag := range st["agents"].([]any) {
			out = append(out, ag.(map[string]any)["alias"])
		}
		return fmt.Sprint(out)
	}
	st := status()
	if got := sessions(st); got != "0 []" {
		t.Fatalf("sessions at start: %s", got)
	}
	if got := agents(st); got != "[default]" {
		t.Fatalf("agents at start: %s", got)
	}
	if _, ok := st["today"].(map[string]any)["maxCostUsdPerDay"]; ok {
		t.Fatalf("a budget with none set: %v", st["today"])
	}

	sid := newSession(t, a, "")
	if got, want := sessions(status()), fmt.Sprint(1, []any{sid}); got != want {
		t.Fatalf("sessions once one is created: %s, want %s", got, want)
	}
	result(t, a.call("session/close", `{"sessionId":`+quote(sid)+`}`))
	if got := sessions(status()); got != "0 []" {
		t.Fatalf("sessions once it is closed: %s", got)
	}

	if st["model"] == "echo-reloaded" {
		t.Fatalf("the default agent's model before the reload: %v", st["model"])
	}
	more := "[providers.echo]\nkind = \"echo\"\n[agents.default]\nprovider = \"echo\"\nmodel = \"echo-reloaded\"\n" +
		"[agents.second]\nprovider = \"echo\"\n[budget]\nmax_cost_usd_per_day = 2.5\n"
	if err := os.WriteFile(filepath.Join(r.dirs.ConfigDir, "config.toml"), []byte(more), 0o600); err != nil {
		t.Fatal(err)
	}
	result(t, a.call("daemon/reload", `{}`))
	st = status()
	if got := agents(st); got != "[default second]" {
		t.Fatalf("agents after the reload: %s", got)
	}
	if st["model"] != "echo-reloaded" || st["agents"].([]any)[0].(map[string]any)["model"] != "echo-reloaded" {
		t.Fatalf("the default agent's model after the reload: %v, agents %v", st["model"], st["agents"])
	}
	if got := st["today"].(map[string]any)["maxCostUsdPerDay"]; got != 2.5 {
		t.Fatalf("the day's budget after the reload: %v", got)
	}
}
