package acp

import (
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Every risk level is a mode the editor can pick, under a value of its
// own.
func TestEveryRiskLevelIsAMode(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range protocol.RiskLevels {
		v := acpMode[r.ID]
		if v == "" || seen[v] {
			t.Errorf("risk level %s: ACP mode value %q (empty or taken)", r.ID, v)
		}
		seen[v] = true
		if modeOf(r.ID) != v {
			t.Errorf("modeOf(%s) = %q, want %q", r.ID, modeOf(r.ID), v)
		}
	}
	if len(modes) != len(protocol.RiskLevels) {
		t.Errorf("%d modes for %d risk levels", len(modes), len(protocol.RiskLevels))
	}
}
