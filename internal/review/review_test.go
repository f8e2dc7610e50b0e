package review

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/agent"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/session"
	"github.com/zeroclaw/zeroclaw/internal/session/sessiontest"
)

// reviewed is a config with the default agent supervised and a second
// echo agent as the reviewer of its approval requests.
func reviewed(cfg *config.Config) {
	a := cfg.Agents["default"]
	a.Risk = protocol.RiskSupervised
	cfg.Agents["default"] = a
	cfg.Agents["reviewer"] = a
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

// start is a daemon's Manager with reviewer as its reviewer, and a
// client attached to a new session of it.
func start(t *testing.T, tune func(*config.Config), reviewer session.Reviewer) (*sessiontest.Daemon, *session.Client, *sessiontest.Conn, string) {
	t.Helper()
	h := sessiontest.New(t, tune)
	h.Reviewer = reviewer
	d := h.Start(t, nil)
	cl, c := sessiontest.Client(t, "c1", "")
	return d, cl, c, d.Open(t, cl, "")
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
			d, cl, conn, sid := start(t, reviewed, Reviewer{})
			done, err := d.M.Prompt(cl, sid, verdictCall("echo ran-"+c.name, c.verdict))
			if err != nil {
				t.Fatal(err)
			}
			rv := sessiontest.Of[protocol.ApprovalReviewedEvent](t, conn, sid, nil)
			if rv.Reviewer != "reviewer" || rv.Decision != c.decision || rv.Risk != c.risk || rv.ToolName != "shell" || (c.verdict == "") != (rv.Error != "") {
				t.Errorf("approval_reviewed: %+v", rv)
			}
			if c.asks {
				req := sessiontest.Of[protocol.ApprovalRequestEvent](t, conn, sid, nil)
				if req.RequestID != rv.RequestID || (c.risk != "") != (req.Review != nil) || req.Review != nil && (req.Review.Risk != c.risk || req.Review.Rationale == "") {
					t.Errorf("the user's request: %+v (review %+v)", req, req.Review)
				}
				if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
					t.Fatalf("approve: %v %v", ok, err)
				}
			}
			var r protocol.SessionPromptResult
			select {
			case r = <-done:
			case <-time.After(20 * time.Second): // a hang guard, not a measure
				t.Fatal("the turn did not end")
			}
			if ran := strings.Contains(r.Content, "returned: ran-"+c.name); ran != c.runs {
				t.Errorf("the call ran: %v, want %v: %q", ran, c.runs, r.Content)
			}
			if c.decision == "deny" && !strings.Contains(r.Content, "not what the user asked") {
				t.Errorf("the model was not told why: %q", r.Content)
			}
			var asked int
			for _, e := range conn.All(t) {
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

// With no reviewer configured, or none given the Manager, the user is
// asked and nothing is reviewed; a reviewer that cannot be built is a
// review that failed (said on approval_reviewed), and the user is asked.
func TestNoReviewAsksTheUser(t *testing.T) {
	for _, c := range []struct {
		name     string
		tune     func(*config.Config)
		reviewer session.Reviewer
		err      string // the review's error ("": no review)
	}{
		{"none configured", func(cfg *config.Config) { reviewed(cfg); cfg.Approvals.Reviewer = "" }, Reviewer{}, ""},
		{"none given", reviewed, nil, ""},
		{"unknown agent", func(cfg *config.Config) { reviewed(cfg); cfg.Approvals.Reviewer = "nobody" }, Reviewer{}, `unknown agent "nobody"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, cl, conn, sid := start(t, c.tune, c.reviewer)
			done, err := d.M.Prompt(cl, sid, verdictCall("echo ran", `"decision":"allow","risk":"low","rationale":"fine"`))
			if err != nil {
				t.Fatal(err)
			}
			req := sessiontest.Of[protocol.ApprovalRequestEvent](t, conn, sid, nil)
			if req.Review != nil {
				t.Errorf("the request shows a review: %+v", req.Review)
			}
			if ok, err := d.M.Approve(cl, protocol.SessionApproveParams{SessionID: sid, RequestID: req.RequestID, Decision: protocol.DecisionAllowOnce}); !ok || err != nil {
				t.Fatalf("approve: %v %v", ok, err)
			}
			if r := <-done; !strings.Contains(r.Content, "returned: ran") {
				t.Errorf("the call did not run: %q", r.Content)
			}
			var reviews []protocol.ApprovalReviewedEvent
			for _, e := range conn.All(t) {
				if rv, ok := e.Event.(protocol.ApprovalReviewedEvent); ok {
					reviews = append(reviews, rv)
				}
			}
			switch {
			case c.err == "" && len(reviews) != 0:
				t.Errorf("reviewed: %+v", reviews)
			case c.err != "" && (len(reviews) != 1 || reviews[0].Decision != "ask" || reviews[0].RequestID != req.RequestID || !strings.Contains(reviews[0].Error, c.err)):
				t.Errorf("the failed review: %+v", reviews)
			}
		})
	}
}

// What the reviewer reads: the call, the sandbox in force, the
// session's directory and the conversation's last six messages, each
// on one line.
func TestPrompt(t *testing.T) {
	d, cl, _, sid := start(t, nil, nil)
	for _, p := range []string{"one", "two", "three\nlines", "four"} {
		d.Prompt(t, cl, sid, p)
	}
	s, err := d.M.Lookup(cl, sid)
	if err != nil {
		t.Fatal(err)
	}
	got := prompt(s, agent.ApprovalRequest{ToolName: "shell", Kind: protocol.KindExecute, Input: []byte(`{"command":"ls"}`), Summary: "ls", Rule: "the rule"})
	want := "The tool call:\n- tool: shell (execute)\n- input: {\"command\":\"ls\"}\n- summary: ls\n- why it asks: the rule\n" +
		"- sandbox: none (commands may write anywhere the user can)\n" +
		"- the session's directory: " + s.Cwd() + "\n\nThe conversation's last messages:\n" +
		"user: two\nassistant: echo: two\nuser: three lines\nassistant: echo: three lines\nuser: four\nassistant: echo: four\n"
	if got != want {
		t.Errorf("the prompt:\n%s\nwant:\n%s", got, want)
	}
	if c := cut("añb", 2); c != "a…" {
		t.Errorf("cut at a rune's middle: %q", c)
	}
}
