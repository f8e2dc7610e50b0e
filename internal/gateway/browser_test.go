package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/mcptools/mcptest"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/protocol/prototest"
)

// browserDir returns a directory holding testdata/browser's npm packages:
// $ZEROCLAW_BROWSER_NODE_MODULES (what .ci/run installs), else an npm
// install into a cache directory.
func browserDir(t *testing.T) string {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the dashboard test needs Node 20 (.ci/run installs it all)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s: .ci/run installs Debian's chromium (or set CHROMIUM)", chromium)
	}
	dir := os.Getenv("ZEROCLAW_BROWSER_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "zeroclaw-browser-test")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
			os.MkdirAll(dir, 0o755)
			pkg, _ := os.ReadFile(filepath.Join("testdata", "browser", "package.json"))
			os.WriteFile(filepath.Join(dir, "package.json"), pkg, 0o644)
			cmd := exec.Command("npm", "install", "--no-audit", "--no-fund")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
			}
		}
	}
	script, _ := os.ReadFile(filepath.Join("testdata", "browser", "dashboard.mjs"))
	if err := os.WriteFile(filepath.Join(dir, "dashboard.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The dashboard in a real browser, used as a person would and attacked
// as another local server would (testdata/browser/dashboard.mjs): pair,
// start a session with the agent and model pickers, approve a command
// with Alt+A and refuse an edit shown as a diff with Alt+R, see tool
// statuses, highlighted code with its copy button, Esc stopping a turn;
// the session list live (another client's session appears, rename,
// search, delete) without polling; a page on another port of 127.0.0.1
// receives the cookie and can do nothing with it, while the dashboard
// keeps working across a reload; the daemon restarts and the page
// reconnects by itself and shows what it missed; contrast of the main
// text colours in both themes; the phone layout; labels on every
// control. Screenshots (desktop and phone, light and dark) go to
// $ZEROCLAW_SCREENSHOTS, else the test's temp dir.
func TestDashboardInABrowser(t *testing.T) {
	dir := browserDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port to come back on
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	dirs, err := config.ResolveDirs(filepath.Join(t.TempDir(), "cfg"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	mcpServer := mcptest.Server(t)
	tune := func(gateway bool) func(*config.Config, *daemon.Options) {
		return func(c *config.Config, _ *daemon.Options) {
			a := c.Agents["default"]
			a.Risk = "supervised"
			c.Agents["default"] = a
			p := c.Providers[a.Provider]
			p.Pricing = &config.Pricing{Input: 3, Output: 15} // so the list shows a cost
			c.Providers[a.Provider] = p
			c.Gateway.Enabled, c.Gateway.Listen = gateway, listen
			c.MCP.TurnWaitMs = 30000 // however slow the machine, the server is there
			c.MCP.Servers = map[string]config.MCPServer{"q": {Command: mcpServer, AutoApprove: []string{"survey"}}}
		}
	}
	g := startOn(t, dirs, tune(true))
	tok, _ := g.pair("the browser test's script")
	shots := os.Getenv("ZEROCLAW_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	os.MkdirAll(shots, 0o755)
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("old line\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "dashboard.mjs", g.url+"/", g.code(), cwd, shots)
	cmd.Dir = dir
	// One event of every type, without a seq (the view takes each).
	var samples []json.RawMessage
	for _, ev := range prototest.Samples() {
		raw := prototest.Update("", 0, ev)
		var fields map[string]json.RawMessage
		json.Unmarshal(raw, &fields)
		delete(fields, "seq")
		delete(fields, "sessionId")
		b, _ := json.Marshal(fields)
		samples = append(samples, b)
	}
	events, _ := json.Marshal(samples)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TOKEN="+tok, "EVENTS="+string(events))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	var phone *phoneClient
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			Step      string          `json:"step"`
			SessionID string          `json:"sessionId"`
			Result    json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			t.Logf("the browser script: %s", sc.Bytes())
			continue
		}
		switch m.Step {
		case "phone":
			phone = startPhone(t, ctx, g.sock, m.SessionID)
		case "phone-done":
			phone.check(t)
		case "other-mode":
			// Another client switches the page's session to full.
			c, err := client.Dial(ctx, g.sock, client.Options{ClientInfo: protocol.ClientInfo{Name: "tablet"}})
			if err != nil {
				t.Fatal(err)
			}
			full := protocol.RiskFull
			if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: m.SessionID, KeepSiblings: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Configure(ctx, protocol.SessionConfigureParams{SessionID: m.SessionID, Risk: &full}); err != nil {
				t.Fatal(err)
			}
			c.Close()
		case "stop":
			g.halt()
		case "missed":
			// While the page is away, a turn runs in its session (on a
			// daemon without the gateway, so the page cannot be back
			// yet); then the daemon comes back with its gateway.
			away := startOn(t, dirs, tune(false))
			c, err := client.Dial(ctx, away.sock, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var res json.RawMessage
			if err := c.Call(ctx, protocol.MethodSessionNew, protocol.SessionNewParams{SessionID: m.SessionID}, &res); err != nil {
				t.Fatal(err)
			}
			prompt := "while you were away"
			if err := c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: m.SessionID, Prompt: &prompt}, &res); err != nil {
				t.Fatal(err)
			}
			c.Close()
			away.halt()
			g = startOn(t, dirs, tune(true))
		}
		if m.Result != nil {
			raw = m.Result
			break
		}
		fmt.Fprintln(stdin, "done")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil || raw == nil {
		t.Fatalf("the browser script: %v\n%s", err, stderr.String())
	}
	var out struct {
		Error, SessionID, WaitingChip, ApprovalCommand, DoneChip, ToolOutput, DiffDel, DiffAdd, RefusedChip                  string
		CodeLang, Copied, LiveRegion, Title, RelativeTime, SearchHit, FromOtherOrigin, Banner, AttachedShown                 string
		Agents, Models, Unlabelled, PageErrors, Steps, Shortcuts, StrayText                                                  []string
		EditCard, ListCost, Footer, UndoDiff, RewindNote, Forked, AlsoHere, OtherLabel, SendWhileRunning                     string
		Queued, Steers, FormLabels, FormValues, FormReplies                                                                  []string
		FormRefusesOutOfBounds                                                                                               bool
		ProcOutput, ProcState, AlwaysResolved                                                                                string
		ApprovalButtons                                                                                                      []string
		ProcStopHidden                                                                                                       bool
		SubagentNote, ChildListed, ChildOpened                                                                               string
		ChildAfterParent                                                                                                     bool
		ReplayStatuses                                                                                                       []int
		CookieVisibleToScript, KeyStored, ApprovalShownOnce, Pwned, OtherPortGotCookie, RenameKeptFocus                      bool
		SendDisabledWhileOffline, SendEnabledAfter, PhonePromptVisible, PhoneListHidden, PhoneDrawerOpens                    bool
		CodeTokens, Images, Bold, JSLinks, WebhookStatus, WebhookAgainStatus, APIRequestsWhileLive, AfterReload, PhoneLogTop int
		AttachedAfterSend                                                                                                    int
		OwnLabelled                                                                                                          int
		Events                                                                                                               []struct {
			Type           string
			Shown, LeftOut bool
			Threw          string
		}
		GoalSpent, SchedWhen               string
		GoalProgress                       float64
		SchedPaused                        bool
		ModeOptions                        []string
		ModeAfter, ModeAfterPlan, PlanCard string
		ModeNote, ModeFooter               string
		ContrastLight, ContrastDark        []struct {
			Sel     string
			Ratio   float64
			Missing bool
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("the browser script printed %s", raw)
	}
	t.Logf("steps: %s", strings.Join(out.Steps, " / "))
	if out.Error != "" {
		t.Fatalf("in the browser, at %s (script errors in the page: %v)", out.Error, out.PageErrors)
	}
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf(format, args...)
		}
	}
	// Credentials.
	check(!out.CookieVisibleToScript, "the session cookie is readable by the page's script (not HttpOnly)")
	check(out.KeyStored, "the page key is not in the origin's storage")
	check(out.OtherPortGotCookie, "the page on another port did not receive the cookie: the attack was not staged")
	for _, s := range out.ReplayStatuses {
		check(s == 401, "the cookie replayed from another local server: %v, want 401 each", out.ReplayStatuses)
	}
	check(out.FromOtherOrigin == "403" || out.FromOtherOrigin == "blocked", "a page on another origin called the API: %s", out.FromOtherOrigin)
	check(out.AfterReload >= 3, "after a reload the dashboard shows %d prompts", out.AfterReload)
	// Pickers, tools, approvals.
	check(len(out.Agents) > 0 && out.Agents[0] == "default" && len(out.Models) > 0, "pickers: agents %v, models %v", out.Agents, out.Models)
	check(out.WaitingChip == "waiting for approval" && out.ApprovalCommand == "$ echo hi" && out.ApprovalShownOnce,
		"a command waiting: chip %q, command %q, shown once %v", out.WaitingChip, out.ApprovalCommand, out.ApprovalShownOnce)
	check(out.DoneChip == "done" && strings.Contains(out.ToolOutput, "hi"), "after Alt+A: chip %q, output %q", out.DoneChip, out.ToolOutput)
	// Each "always" names its scope (issue 50, item 12), on its button
	// and in the answer it leaves.
	check(strings.Join(out.ApprovalButtons, "|") == "Allow once|Always this command, this session only|Always allow shell, this session only|"+
		"Always this command in this project|Always allow shell in this project|Reject", "the approval's buttons: %q", out.ApprovalButtons)
	check(out.AlwaysResolved == "Allowed for the rest of this session (not stored): every call", "after the session's always: %q", out.AlwaysResolved)
	// Forms: the server's order, its defaults shown, a bound kept, the
	// answer typed; several choices; decline and cancel, each as itself.
	check(strings.Join(out.FormLabels, "|") == "Name *|age|score|status|verified", "the form's labels: %q", out.FormLabels)
	check(strings.Join(out.FormValues, "|") == "Ada|36|9.5|active|true", "the form's defaults: %q", out.FormValues)
	check(out.FormRefusesOutOfBounds, "an age of 200 (maximum 150) was not refused")
	for i, w := range []string{`accept {"age":40,"score":9.5,"status":"active","verified":true,"zname":"Ada"}`, `the user chose: ["Mon","Wed"]`,
		"the user declined to answer", "the user cancelled the question"} {
		check(i < len(out.FormReplies) && strings.Contains(out.FormReplies[i], w), "form %d: the tool returned %q, want %q", i, out.FormReplies, w)
	}
	check(out.DiffDel == "- old line" && out.DiffAdd == "+ new line", "the edit's diff: %q / %q", out.DiffDel, out.DiffAdd)
	check(!strings.Contains(out.EditCard, "null") && strings.Contains(out.EditCard, "waiting for approval"), "the edit's card reads %q", out.EditCard)
	check(out.RefusedChip == "refused", "after Alt+R: chip %q", out.RefusedChip)
	b, _ := os.ReadFile(filepath.Join(cwd, "notes.txt"))
	check(string(b) == "old line\n", "the refused edit changed the file: %q", b)
	// Rendering.
	check(out.CodeLang == "go" && out.CodeTokens > 3 && strings.Contains(out.Copied, `fmt.Println("hi")`),
		"code: language %q, %d tokens, copied %q", out.CodeLang, out.CodeTokens, out.Copied)
	check(out.Images == 0 && !out.Pwned && out.JSLinks == 0, "markup in model output became markup: %d images, script ran %v, %d javascript: links", out.Images, out.Pwned, out.JSLinks)
	check(out.Bold > 0, "Markdown not rendered")
	check(strings.Contains(out.ProcOutput, "line-1\nline-2") && strings.Contains(out.ProcOutput, "line-6") && !strings.Contains(out.ProcOutput, "never"), "the process's output in its panel: %q", out.ProcOutput)
	check(strings.HasPrefix(out.ProcState, "killed") && out.ProcStopHidden, "the process after Stop: %q (Stop hidden %v)", out.ProcState, out.ProcStopHidden)
	check(strings.Contains(out.SubagentNote, "sub-agent a helper (default)") && strings.HasPrefix(out.ChildListed, "\u21b3 ") && out.ChildAfterParent && strings.HasPrefix(out.ChildOpened, "ses_"),
		"the sub-agent: note %q, listed %q (after its parent %v), opened %q", out.SubagentNote, out.ChildListed, out.ChildAfterParent, out.ChildOpened)
	check(strings.HasPrefix(out.AttachedShown, "report.md") && out.AttachedAfterSend == 0, "the attachment: shown %q, left after sending %d", out.AttachedShown, out.AttachedAfterSend)
	check(out.LiveRegion == "polite log", "the conversation's live region: %q", out.LiveRegion)
	// The list.
	check(out.Title == "/tool shell {\"command\":\"echo hi\"}", "the session's title: %q", out.Title)
	check(strings.Contains(out.UndoDiff, "+to be undone") && strings.Contains(out.RewindNote, "Rewound to before turn") && strings.Contains(out.RewindNote, "1 removed"),
		"undo from a prompt: diff %q, then %q", out.UndoDiff, out.RewindNote)
	if _, err := os.Stat(filepath.Join(cwd, "undo-me.txt")); err == nil {
		t.Error("undo-me.txt is still there after the dashboard's undo")
	}
	check(out.Forked != "" && out.Forked != out.SessionID, "fork: the page went to %q (from %q)", out.Forked, out.SessionID)
	// Another client on the session.
	// The page's own prompts (made before a reload and a daemon restart:
	// the tab keeps its clientId) are not labelled; the script's one,
	// made while the page was away, is, by its id (it gave no name).
	check(out.AlsoHere == "also here: phone" && strings.HasPrefix(out.OtherLabel, "cl_") && strings.HasSuffix(out.OtherLabel, "|phone") && out.OwnLabelled == 0,
		"the other client: %q, prompts labelled %q, %d of the page's own labelled", out.AlsoHere, out.OtherLabel, out.OwnLabelled)
	check(strings.Join(out.Queued, "|") == "queued by the phone|steer me in", "the queue shown: %q", out.Queued)
	check(out.SendWhileRunning == "Queue", "Send during a turn reads %q", out.SendWhileRunning)
	check(len(out.Steers) == 2 && strings.Contains(out.Steers[0], "steer me in") && strings.Contains(out.Steers[0], "phone") &&
		strings.Contains(out.Steers[1], "steered from the page"), "the steers shown: %q", out.Steers)
	check(strings.HasPrefix(out.ListCost, "$0.") && len(out.ListCost) == len("$0.0000") && strings.Contains(out.Footer, "so far"),
		"the session's cost: %q in the list, footer %q", out.ListCost, out.Footer)
	check(out.WebhookStatus == 200 && out.RelativeTime == "just now", "another client's session: webhook %d, time %q", out.WebhookStatus, out.RelativeTime)
	check(out.WebhookAgainStatus == 200 && out.RenameKeptFocus, "a title edited while the list changed: webhook %d, the edit kept its input: %v", out.WebhookAgainStatus, out.RenameKeptFocus)
	check(out.SearchHit == "made by a script", "search found %q", out.SearchHit)
	check(out.APIRequestsWhileLive == 0, "%d REST requests while the list followed changes (it should not poll)", out.APIRequestsWhileLive)
	// Reconnection.
	check(strings.Contains(out.Banner, "reconnecting") && out.SendDisabledWhileOffline && out.SendEnabledAfter,
		"offline: banner %q, send disabled %v, enabled after %v", out.Banner, out.SendDisabledWhileOffline, out.SendEnabledAfter)
	// Contrast, phone, labels.
	for _, th := range []struct {
		name string
		res  []struct {
			Sel     string
			Ratio   float64
			Missing bool
		}
	}{{"light", out.ContrastLight}, {"dark", out.ContrastDark}} {
		if len(th.res) == 0 {
			t.Errorf("no contrast measured in the %s theme", th.name)
		}
		for _, r := range th.res {
			check(!r.Missing, "%s theme: nothing matches %s to measure", th.name, r.Sel)
			check(r.Missing || r.Ratio >= 4.5, "%s theme: %s has contrast %.2f:1 (want at least 4.5:1)", th.name, r.Sel, r.Ratio)
		}
	}
	check(out.PhoneLogTop < 200 && out.PhonePromptVisible && out.PhoneListHidden && out.PhoneDrawerOpens,
		"phone: conversation at %dpx, prompt visible %v, list hidden %v, drawer opens %v", out.PhoneLogTop, out.PhonePromptVisible, out.PhoneListHidden, out.PhoneDrawerOpens)
	check(len(out.Unlabelled) == 0, "controls without a label: %v", out.Unlabelled)
	check(len(out.Shortcuts) >= 6 && out.Shortcuts[0] == "Alt+N", "the shortcuts dialog lists %q", out.Shortcuts)
	check(len(out.StrayText) == 0, "the page shows %q", out.StrayText)
	check(len(out.PageErrors) == 0, "script errors in the page: %v", out.PageErrors)
	check(strings.HasPrefix(out.GoalSpent, "2 turns of 5") && strings.Contains(out.GoalSpent, "done from the page") && out.GoalProgress == 0.4,
		"the goal's progress: %q, bar %v", out.GoalSpent, out.GoalProgress)
	check(strings.Join(out.ModeOptions, " ") == strings.Join(protocol.RiskIDs(), " ") && out.ModeAfter == "supervised",
		"the mode picker: %v (the daemon's: %v), after %q", out.ModeOptions, protocol.RiskIDs(), out.ModeAfter)
	check(out.ModeNote == "mode \u2192 Full access (by tablet)" && out.ModeFooter == out.ModeNote,
		"another client's switch to full: the conversation says %q, the footer %q", out.ModeNote, out.ModeFooter)
	check(strings.Contains(out.PlanCard, "The plan") && strings.Contains(out.PlanCard, ".zeroclaw/plans/") && out.ModeAfterPlan == "edits",
		"the plan mode: card %q, mode after %q", out.PlanCard, out.ModeAfterPlan)
	check(out.SchedWhen == "every 1h" && out.SchedPaused, "the schedule: %q, paused %v", out.SchedWhen, out.SchedPaused)
	// Every event type: shown by the page, or named in its
	// EVENTS_LEFT_OUT and then not shown.
	check(len(out.Events) == len(protocol.Events), "the page was given %d event types of %d", len(out.Events), len(protocol.Events))
	for i, e := range out.Events {
		check(e.Type == protocol.Events[i].Type, "event %d: %q, want %q", i, e.Type, protocol.Events[i].Type)
		check(e.Threw == "", "%s: the page threw %s", e.Type, e.Threw)
		check(!(e.LeftOut && e.Shown), "%s: named in EVENTS_LEFT_OUT, yet the page changed", e.Type)
		check(e.LeftOut || e.Shown, "%s: the dashboard neither shows it nor names it in EVENTS_LEFT_OUT", e.Type)
	}
	// The page names its prompts: "back again" ran under a
	// clientMessageId of the page's (sent again after a lost
	// connection, it would run once).
	hc, err := client.Dial(ctx, g.sock, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	var h protocol.SessionHistoryResult
	if err := hc.Call(ctx, protocol.MethodSessionHistory, protocol.SessionHistoryParams{SessionID: out.SessionID, Limit: 10000}, &h); err != nil {
		t.Fatal(err)
	}
	turnOf, named := "", map[string]string{} // the prompt's turn; input turns by clientMessageId
	for _, raw := range h.Events {
		u, err := protocol.ParseUpdate(raw)
		if err != nil {
			continue
		}
		switch e := u.Event.(type) {
		case protocol.UserMessageEvent:
			if e.Text == "back again" {
				turnOf = u.TurnID
			}
		case protocol.InputUpdateEvent:
			if e.State == protocol.InputStarted {
				named[e.ClientMessageID] = u.TurnID
			}
		}
	}
	var web []string
	for cmid, turn := range named {
		if strings.HasPrefix(cmid, "web-") && turn == turnOf {
			web = append(web, cmid)
		}
	}
	check(turnOf != "" && len(web) == 1, "the page's prompt %q ran without a clientMessageId of the page's (%v)", turnOf, named)
	for _, f := range []string{"desktop-light.png", "desktop-dark.png", "phone-light.png", "phone-dark.png"} {
		if fi, err := os.Stat(filepath.Join(shots, f)); err != nil || fi.Size() == 0 {
			t.Errorf("no screenshot %s: %v", f, err)
		}
	}
	t.Logf("screenshots in %s", shots)
}

// phoneClient is a second client on the dashboard's session: its turn
// runs while the page steers it, two prompts wait in the queue.
type phoneClient struct {
	c                      *client.Client
	running, removed, into chan error
	results                map[string]*protocol.SessionPromptResult
}

func startPhone(t *testing.T, ctx context.Context, sock, sid string) *phoneClient {
	events := make(chan protocol.SessionUpdate, 4096)
	h := jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method != protocol.MethodSessionUpdate {
			return nil, nil
		}
		if u, err := protocol.ParseUpdate(r.Params); err == nil {
			select {
			case events <- u:
			default:
			}
		}
		return nil, nil
	})
	c, err := client.Dial(ctx, sock, client.Options{ClientInfo: protocol.ClientInfo{Name: "phone"}, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: sid, KeepSiblings: true}); err != nil {
		t.Fatal(err)
	}
	p := &phoneClient{c: c, results: map[string]*protocol.SessionPromptResult{}}
	send := func(text string) chan error {
		done := make(chan error, 1)
		res := &protocol.SessionPromptResult{}
		p.results[text] = res
		go func() {
			done <- c.Call(ctx, protocol.MethodSessionPrompt, protocol.SessionPromptParams{SessionID: sid, Prompt: &text}, res)
		}()
		return done
	}
	wait := func(ok func(u protocol.SessionUpdate) bool) {
		for u := range events {
			if ok(u) {
				return
			}
		}
	}
	p.running = send("/delay 10\n/chunks 600")
	wait(func(u protocol.SessionUpdate) bool { return u.Type == protocol.EventAgentMessageChunk })
	p.removed = send("queued by the phone")
	wait(func(u protocol.SessionUpdate) bool {
		q, ok := u.Event.(protocol.QueueUpdateEvent)
		return ok && len(q.Items) == 1
	})
	p.into = send("steer me in")
	wait(func(u protocol.SessionUpdate) bool {
		q, ok := u.Event.(protocol.QueueUpdateEvent)
		return ok && len(q.Items) == 2
	})
	return p
}

// check: the removed prompt's caller heard cancelled; the one moved into
// the turn, and the turn's own caller, the steered turn's answer.
func (p *phoneClient) check(t *testing.T) {
	t.Helper()
	for _, ch := range []chan error{p.running, p.removed, p.into} {
		if err := <-ch; err != nil {
			t.Errorf("the phone's prompt: %v", err)
		}
	}
	if r := p.results["queued by the phone"]; r.StopReason != "cancelled" {
		t.Errorf("the prompt removed from the queue was answered %+v", r)
	}
	for _, k := range []string{"/delay 10\n/chunks 600", "steer me in"} {
		if r := p.results[k]; r.StopReason != "end_turn" || r.Content != "echo: steered from the page" {
			t.Errorf("%q was answered %+v", k, r)
		}
	}
	p.c.Close()
}
