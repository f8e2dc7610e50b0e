// Package archtest keeps the package arrows of STYLE.md pointing one way:
// cli → daemon → gateway → client/rpc/acp → session → agent →
// provider/tool, with pairing beside rpc, and jsonrpc, transport,
// protocol and store importing nothing that sits above them.
//
// It is an allow-list: each package names the packages of ours it may
// import, and every package must be listed, so a new arrow (or a new
// package) is a reviewed line here, not an accident.
package archtest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/zeroclaw/zeroclaw/"

// allowed lists, per package (relative to the module), the packages of
// ours it may import.
var allowed = map[string][]string{
	"cmd/zeroclaw":                 {"internal/cli", "internal/console"},
	"internal/acp":                 {"internal/client", "internal/form", "internal/jsonrpc", "internal/protocol", "internal/tool"},
	"internal/acp/acptest":         {"internal/schema/schematest"},
	"internal/agent":               {"internal/gate", "internal/metrics", "internal/protocol", "internal/provider", "internal/tool"},
	"internal/agentkit":            {"internal/agent", "internal/config", "internal/instructions", "internal/mcpauth", "internal/mcptools", "internal/permission", "internal/protocol", "internal/provider", "internal/sandbox", "internal/tool"},
	"internal/atomicfile":          {},
	"internal/background":          {},
	"internal/answers":             {"internal/agent", "internal/permission", "internal/protocol"},
	"internal/archive":             {"internal/checkpoint", "internal/protocol", "internal/provider", "internal/store"},
	"internal/archtest":            {},
	"internal/attach":              {"internal/atomicfile", "internal/protocol"},
	"internal/cli":                 {"internal/acp", "internal/atomicfile", "internal/client", "internal/config", "internal/console", "internal/daemon", "internal/jsonrpc", "internal/mcpauth", "internal/protocol", "internal/rpc", "internal/sandbox", "internal/service", "internal/talk", "internal/transport"},
	"internal/client":              {"internal/jsonrpc", "internal/protocol", "internal/transport"},
	"internal/clientcalls":         {"internal/protocol", "internal/tool"},
	"internal/config":              {"internal/protocol", "internal/tool"},
	"internal/eventlog":            {"internal/metrics", "internal/protocol", "internal/store"},
	"internal/console":             {"internal/jsonrpc"},
	"internal/daemon":              {"internal/attach", "internal/config", "internal/continuation", "internal/gate", "internal/gateway", "internal/goals", "internal/hooks", "internal/jsonrpc", "internal/mcpauth", "internal/metrics", "internal/pairing", "internal/permission", "internal/plan", "internal/protocol", "internal/review", "internal/rewind", "internal/rpc", "internal/scheduler", "internal/session", "internal/store", "internal/subagents", "internal/tool", "internal/transport"},
	"internal/goals":               {"internal/agent", "internal/archive", "internal/protocol", "internal/session", "internal/store", "internal/tool"},
	"internal/hooks":               {"internal/agent", "internal/hook", "internal/protocol", "internal/session"},
	"internal/rewind":              {"internal/checkpoint", "internal/protocol", "internal/provider", "internal/session", "internal/store", "internal/tool"},
	"internal/gate":                {"internal/protocol"},
	"internal/gateway":             {"internal/acp", "internal/client", "internal/config", "internal/jsonrpc", "internal/metrics", "internal/pairing", "internal/protocol", "internal/rpc"},
	"internal/form":                {},
	"internal/instructions":        {},
	"internal/jsonrpc":             {},
	"internal/mcpauth":             {"internal/atomicfile"},
	"internal/mcptools":            {"internal/config", "internal/form", "internal/mcpauth", "internal/metrics", "internal/protocol", "internal/tool"},
	"internal/mcptools/mcptest":    {},
	"internal/metrics":             {},
	"internal/mdterm":              {},
	"internal/pairing":             {"internal/protocol", "internal/store"},
	"internal/plan":                {"internal/agent", "internal/gate", "internal/protocol", "internal/session", "internal/tool"},
	"internal/processes":           {"internal/background", "internal/gate", "internal/protocol", "internal/session", "internal/tool"},
	"internal/protocol":            {},
	"internal/provider":            {"internal/config"},
	"internal/review":              {"internal/agent", "internal/metrics", "internal/protocol", "internal/provider", "internal/session"},
	"internal/rpc":                 {"internal/attach", "internal/config", "internal/gate", "internal/goals", "internal/jsonrpc", "internal/pairing", "internal/permission", "internal/processes", "internal/protocol", "internal/rewind", "internal/sandbox", "internal/schema", "internal/scheduler", "internal/session", "internal/archive"},
	"internal/schedule":            {},
	"internal/service":             {},
	"internal/scheduler":           {"internal/metrics", "internal/protocol", "internal/schedule", "internal/session", "internal/store"},
	"internal/schema":              {},
	"internal/schema/schematest":   {},
	"internal/session":             {"internal/agent", "internal/agentkit", "internal/answers", "internal/archive", "internal/background", "internal/attach", "internal/clientcalls", "internal/config", "internal/cut", "internal/eventlog", "internal/gate", "internal/hook", "internal/mcpauth", "internal/mcptools", "internal/metrics", "internal/permission", "internal/protocol", "internal/provider", "internal/sandbox", "internal/sessionlist", "internal/spend", "internal/store", "internal/tool", "internal/turnslot"},
	"internal/session/sessiontest": {"internal/config", "internal/protocol", "internal/session", "internal/store"},
	"internal/sessionlist":         {"internal/archive", "internal/protocol"},
	"internal/spend":               {"internal/archive", "internal/config", "internal/protocol", "internal/store"},
	"internal/permission":          {"internal/atomicfile"},
	"internal/hook":                {},
	"internal/talk":                {"internal/client", "internal/config", "internal/console", "internal/form", "internal/jsonrpc", "internal/mdterm", "internal/protocol"},
	"internal/subagents":           {"internal/agent", "internal/archive", "internal/config", "internal/gate", "internal/protocol", "internal/session", "internal/store", "internal/tool"},
	"internal/store":               {},
	"internal/checkpoint":          {"internal/atomicfile"},
	"internal/continuation":        {"internal/cut", "internal/protocol", "internal/session", "internal/store"},
	"internal/cut":                 {"internal/protocol", "internal/provider", "internal/store"},
	"internal/testdir":             {},
	"internal/tool":                {"internal/background", "internal/gate", "internal/protocol", "internal/sandbox", "internal/schema"},
	"internal/sandbox":             {},
	"internal/transport":           {},
	"internal/turnslot":            {"internal/protocol", "internal/provider"},

	// Test support for the readers of events.
	"internal/protocol/prototest": {"internal/protocol"},
}

func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		seen[pkg] = true
		may, listed := allowed[pkg]
		if !listed {
			t.Errorf("%s is not listed: add it to allowed with the packages of ours it may import", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if dep, ours := strings.CutPrefix(imp, module); ours && !slices.Contains(may, dep) {
				t.Errorf("%s imports %s, which it may not: the arrows must run the other way (or add the arrow here, reviewed)", pkg, dep)
			}
		}
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("%s is listed but does not exist: renamed or removed?", pkg)
		}
	}
}

// docs/architecture.md names every package (its table of rooms).
func TestArchitectureDocNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range allowed {
		if !strings.Contains(string(b), "`"+pkg+"`") {
			t.Errorf("docs/architecture.md does not name %s", pkg)
		}
	}
}
