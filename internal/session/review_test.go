package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// reviewed is a config with the default agent supervised and a second
// echo agent as the reviewer of its approval requests.
func reviewed(cfg *config.Config) {
	supervised(cfg)
	cfg.Agents["reviewer"] = cfg.Agents["default"]
	cfg.Approvals.Reviewer = "reviewer"
	cfg.Daemon.ApprovalTimeoutSecs = 60
}

// verdictCall is a shell call whose input carries the verdict the echo
// reviewer answers. The reviewer reads the call's input whole, and the
// conversation cut short (the user's message past 600 bytes, a call's
// input past 300): the padding leaves no "}" after the input's own, so
// the object the reviewer's echoed reply holds is the input, verdict
// and all. An input with no verdict is an answer that is not one.
func verdictCall(command, verdict string) string {
	fields := ""
	if verdict != "" {
		fields = verdict + ","
	}
	return fmt.Sprintf(`/tool shell {%s"command":%q,"pad":%q}`, fields, command, strings.Repeat("p", 700))
}

// The reviewer answers each approval request first: an allow at most
// reviewer_allows runs the call unasked, a deny refuses it (the model is
// told why), an ask, an allow rated above reviewer_allows, or an answer
// that is no verdict asks the user, with the rating shown. Every review
// is an approval_reviewed event.
func TestReviewerAllowsDeniesOrAsks(t *testing.T) {
	for _, c := range []struct {
		name, verdict, decision, risk string
		asks, runs                    bool
	}{
		{"allow", `"decision":"allow","risk":"low","rationale":"prints a word"`, "allow", "low", false, true},
		{"deny", `"decision":"deny","risk":"high","rationale":"not what the user asked"`, "deny", "high", false, false},
		{"ask", `"decision":"ask","risk":"medium","rationale":"worth a look"`, "ask", "medium", true, true},
		{"high", `"decision":"allow","risk":"high","rationale":"risky but fine"`, "ask", "high", true, true},
		{"garbage", ``, "ask", "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, reviewed)
			cl, conn := h.client(t, "c1")
			h.open(t, cl, "s")
			done, err := h.m.Prompt(cl, "s", verdictCall("echo ran-"+c.name, c.verdict))
			if err != nil {
				t.Fatal(err)
			}
			rv := waitFor[protocol.ApprovalReviewedEvent](t, conn, 0)
			if rv.Reviewer != "reviewer" || rv.Decision != c.decision || rv.Risk != c.risk || rv.ToolName != "shell" || (c.verdict == "") != (rv.Error != "") {
				t.Errorf("approval_reviewed: %+v", rv)
			}
			if c.asks {
				req := waitFor[protocol.ApprovalRequestEvent](t, conn, 0)
				if req.RequestID != rv.RequestID || (c.risk != "") != (req.Review != nil) || req.Review != nil && (req.Review.Risk != c.risk || req.Review.Rationale == "") {
					t.Errorf("the user's request: %+v (review %+v)", req, req.Review)
				}
				if ok, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
					t.Fatalf("approve: %v %v", ok, err)
				}
			}
			var r protocol.SessionPromptResult
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the turn did not end")
			}
			if ran := strings.Contains(r.Content, "returned: ran-"+c.name); ran != c.runs {
				t.Errorf("the call ran: %v, want %v: %q", ran, c.runs, r.Content)
			}
			if c.decision == "deny" && !strings.Contains(r.Content, "not what the user asked") {
				t.Errorf("the model was not told why: %q", r.Content)
			}
			var asked int
			for _, e := range conn.events(t) {
				if _, ok := e.Event.(protocol.ApprovalRequestEvent); ok {
					asked++
				}
			}
			if asked != map[bool]int{true: 1, false: 0}[c.asks] {
				t.Errorf("the user was asked %d times", asked)
			}
		})
	}
}
