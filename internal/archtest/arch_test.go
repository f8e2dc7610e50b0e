// Package archtest keeps the package arrows of STYLE.md pointing one way:
// cli → daemon → gateway → client/rpc/acp → session → agent →
// provider/tool, with pairing beside rpc, and jsonrpc,
// transport, protocol and store importing nothing that sits above them.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/zeroclaw/zeroclaw/internal/"

// forbidden lists, per package, the packages of ours it must not import.
var forbidden = map[string][]string{
	"jsonrpc":      {"*"},
	"transport":    {"*"},
	"store":        {"*"},
	"protocol":     {"*"},
	"config":       {"*"},
	"tool":         {"agent", "session", "rpc", "jsonrpc", "store", "daemon", "cli", "client", "provider", "acp"},
	"provider":     {"agent", "session", "rpc", "jsonrpc", "store", "daemon", "cli", "client", "tool", "acp"},
	"agent":        {"session", "rpc", "jsonrpc", "store", "daemon", "cli", "client", "acp", "transport"},
	"session":      {"rpc", "jsonrpc", "daemon", "cli", "client", "acp", "transport"},
	"rpc":          {"daemon", "cli", "client", "acp"},
	"client":       {"daemon", "cli", "rpc", "session", "acp"},
	"acp":          {"daemon", "cli", "rpc", "session", "store"},
	"daemon":       {"cli", "client", "acp"},
	"gateway":      {"daemon", "cli"},
	"instructions": {"*"},
	"mdterm":       {"*"},
	"testdir":      {"*"},
	"mcptools":     {"agent", "session", "rpc", "jsonrpc", "store", "daemon", "cli", "client", "provider", "acp", "gateway", "transport"},
	"pairing":      {"agent", "session", "rpc", "jsonrpc", "daemon", "cli", "client", "acp", "gateway", "provider", "tool", "transport"},
}

func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/zeroclaw/zeroclaw/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		rules, ok := forbidden[pkg]
		if !ok {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			for _, r := range rules {
				if r == "*" || r == dep {
					t.Errorf("%s imports %s: the arrows must run the other way", pkg, dep)
				}
			}
		}
	}
	if seen != len(forbidden) {
		t.Errorf("checked %d packages, the rules name %d: a package was renamed or removed", seen, len(forbidden))
	}
}
