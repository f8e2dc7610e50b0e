package rpc

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// docs/protocol.md has a heading for every method of the table (a "###"
// line under "## Methods" that names it), and none for a method the
// table lacks.
func TestProtocolDocNamesEveryMethod(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	methods := Methods()
	section := doc[strings.Index(doc, "\n## Methods\n"):]
	section = section[:strings.Index(section[1:], "\n## ")+1]
	headed := map[string]bool{}
	for _, l := range strings.Split(section, "\n") {
		h, ok := strings.CutPrefix(l, "### ")
		if !ok {
			continue
		}
		for _, w := range strings.FieldsFunc(h, func(r rune) bool { return r == ',' || r == ' ' || r == '(' || r == ')' }) {
			if strings.Contains(w, "/") || slices.Contains(methods, w) {
				headed[w] = true
				if !slices.Contains(methods, w) {
					t.Errorf("docs/protocol.md has a heading for %s, which the daemon does not serve", w)
				}
			}
		}
	}
	for _, m := range methods {
		if !headed[m] {
			t.Errorf("docs/protocol.md has no heading for %s", m)
		}
	}
	if methods[0] != protocol.MethodInitialize || len(methods) != len(func() map[string]*method { _, m := methodTable(); return m }()) {
		t.Errorf("the table: %v", methods)
	}
	for _, m := range []string{protocol.MethodShutdown, protocol.MethodReload, protocol.MethodGatewayPair, protocol.MethodGatewayTokens, protocol.MethodGatewayRevoke} {
		if !OwnerOnly(m) {
			t.Errorf("%s is not the daemon's own user's only", m)
		}
	}
	if OwnerOnly(protocol.MethodStatus) || OwnerOnly("nope") {
		t.Error("status or an unknown method is owner-only")
	}
}

// The lists docs/protocol.md gives are the code's: initialize's events
// (protocol.Events, in order) and approval_request's options
// (protocol.Decisions).
func TestProtocolDocListsAreTheCodes(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, `"events":[`)
	if i < 0 {
		t.Fatal("initialize's events are not listed")
	}
	list := doc[i+len(`"events":[`):]
	list = list[:strings.Index(list, "]")]
	if want := `"` + strings.Join(protocol.EventTypes, `","`) + `"`; list != want {
		t.Errorf("initialize's events in docs/protocol.md:\n%s\nthe code's:\n%s", list, want)
	}
	i = strings.Index(doc, "`approval_request.options` lists the ")
	if i < 0 {
		t.Fatal("approval_request.options is not described")
	}
	sentence := doc[i : i+strings.Index(doc[i:], ")")]
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if !strings.Contains(sentence, " "+words[len(protocol.Decisions)]+" decisions") {
		t.Errorf("the options' count: %q (the code has %d)", sentence, len(protocol.Decisions))
	}
	for _, d := range protocol.Decisions {
		if !strings.Contains(sentence, "`"+d+"`") {
			t.Errorf("the options lack %s: %q", d, sentence)
		}
	}
}

// OwnerOnly reports whether name is only the daemon's own user's.
func OwnerOnly(name string) bool {
	_, byName := methodTable()
	m := byName[name]
	return m != nil && m.ownerOnly
}
