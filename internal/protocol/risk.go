package protocol

// Risk levels: how much an agent may do without asking (an agent's
// `risk`, session/configure's, status's). The one list: config
// validation, session/configure, the agent and every client's picker read
// it.
const (
	RiskReadonly   = "readonly"
	RiskPlan       = "plan"
	RiskSupervised = "supervised"
	RiskEdits      = "edits"
	RiskFull       = "full"
)

// RiskLevel is a risk level and what a client shows for it.
type RiskLevel struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// RiskLevels are the risk levels, least allowed first.
var RiskLevels = []RiskLevel{
	{RiskReadonly, "Read-only", "reads, never changes"},
	{RiskPlan, "Plan", "looks around and writes a plan; changes nothing (commands run read-only, asking)"},
	{RiskSupervised, "Ask", "asks before changes and commands"},
	{RiskEdits, "Accept edits", "edits files in the project without asking; asks before commands"},
	{RiskFull, "Full access", "never asks"},
}

// RiskIDs are the risk levels' ids, least allowed first.
func RiskIDs() []string {
	out := make([]string, len(RiskLevels))
	for i, r := range RiskLevels {
		out[i] = r.ID
	}
	return out
}
