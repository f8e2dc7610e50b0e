package gate

import (
	"os"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// docColumns are the actions of docs/protocol.md's table of who may do
// what, each as the gate is asked it (under the supervised mode, the
// sandbox on).
var docColumns = []struct {
	head string
	act  Action
}{
	{"read a file", Action{Kind: ToolCall, Name: "read_file", Known: true, Class: Looks}},
	{"run a command", Action{Kind: ToolCall, Name: "shell", Known: true, Asks: true, Class: RunsCommand}},
	{"call a method", Action{Kind: Method, Name: "session/prompt"}},
	{"call an owner-only method", Action{Kind: Method, Name: "schedule/create", OwnerOnly: true}},
	{"write to a process", Action{Kind: ProcessWrite, Name: "process/write"}},
	{"prompt a sub-agent", Action{Kind: TaskMessage, Name: "task_send", ChildMode: protocol.RiskSupervised}},
	{"change the mode", Action{Kind: ModeChange, Name: "session/configure", To: protocol.RiskFull}},
	{"answer an approval", Action{Kind: Answer, Name: "session/approve"}},
}

// docTable is the table, made by the gate itself.
func docTable() string {
	var b strings.Builder
	b.WriteString("| actor |")
	for _, c := range docColumns {
		b.WriteString(" " + c.head + " |")
	}
	b.WriteString("\n|---|")
	for range docColumns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, a := range Actors {
		b.WriteString("| `" + string(a) + "` |")
		for _, c := range docColumns {
			v := Decide(Request{Actor: a, Action: c.act, Mode: protocol.RiskSupervised, Sandbox: true})
			b.WriteString(" " + string(v.Decision) + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// docs/protocol.md's "Who may do what" shows the gate's answers as a
// table: it is the gate's own, for every actor, so the doc and the
// gate's table test cannot drift apart.
func TestWhoMayDoWhatIsTheGates(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- the gate's table: internal/gate doc_test.go -->\n", "<!-- end of the gate's table -->"
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("docs/protocol.md has no gate table between %q and %q; it should be:\n%s", begin, end, docTable())
	}
	if got := s[i+len(begin) : j]; got != docTable() {
		t.Fatalf("docs/protocol.md's gate table is not the gate's; it should be:\n%s", docTable())
	}
}
