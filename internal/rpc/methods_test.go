package rpc

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// docs/protocol.md describes every method of the table, and describes
// no method the table lacks: a method heading names methods served.
func TestProtocolDocNamesEveryMethod(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	methods := Methods()
	section := doc[strings.Index(doc, "\n## Methods\n"):]
	section = section[:strings.Index(section[1:], "\n## ")+1]
	named := regexp.MustCompile("`([a-z]+/[a-z_]+|[a-z]+)[` ]")
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
		if headed[m] {
			continue
		}
		found := false
		for _, n := range named.FindAllStringSubmatch(doc, -1) {
			found = found || n[1] == m
		}
		if !found {
			t.Errorf("docs/protocol.md does not describe %s", m)
		}
	}
	if methods[0] != protocol.MethodInitialize || len(methods) != len(byName) {
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
