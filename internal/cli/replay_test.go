package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/testdir"
)

// A session that holds every event type (hooks that block, fail, time
// out and are cancelled among them) reads back whole through every
// reader: the Go client's replay, zeroclaw sessions show (JSON and
// text), ACP session/load, the gateway's SSE resume and every export
// format. Before events were decoded into their own types, a hook event
// (its error a string) broke every one of them.
func TestEveryEventTypeReadsBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hooks run sh")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env, out, errb, dir := testEnv(t, "")
	// The reviewer is an echo agent: its answer is text, never a call
	// of its verdict tool, so each approval is reviewed
	// (approval_reviewed: ask) and then asked as always.
	writeConfig(t, dir, echoConfig("echo")+`risk = "supervised"

[agents.rev]
provider = "echo"

[approvals]
reviewer = "rev"

[mcp]
turn_wait_ms = 30000

[mcp.servers.t]
command = "`+mcpServer(t)+`"

[[hooks]]
event = "PreToolUse"
matcher = "write_file"
command = "echo 'no writes here' >&2; exit 2"

[[hooks]]
event = "PreToolUse"
matcher = "read_file"
command = "sleep 30"
timeout_secs = 1

[[hooks]]
event = "PreToolUse"
matcher = "list_dir"
command = "echo 'the hook broke' >&2; exit 3"

[[hooks]]
event = "PreToolUse"
matcher = "glob"
command = "sleep 60"
`)
	daemon, _ := startDaemon(t, env, "--gateway", addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// A client that approves every call and passes on what it sees.
	updates := make(chan protocol.SessionUpdate, 1<<12)
	var c *client.Client
	h := jsonrpc.HandlerFunc(func(_ context.Context, r *jsonrpc.Request) (any, error) {
		if r.Method != protocol.MethodSessionUpdate {
			return nil, nil
		}
		u, err := protocol.ParseUpdate(r.Params)
		if err != nil {
			t.Errorf("a live event: %v", err)
			return nil, nil
		}
		if a, ok := u.Event.(protocol.ApprovalRequestEvent); ok {
			go c.Approve(ctx, protocol.SessionApproveParams{SessionID: u.SessionID, RequestID: a.RequestID, Decision: protocol.DecisionAllowOnce})
		}
		updates <- u
		return nil, nil
	})
	c, err = client.Dial(ctx, endpointOf(dir), client.Options{Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cwd := testdir.New(t)
	ns, err := c.NewSession(ctx, protocol.SessionNewParams{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	sid := ns.SessionID
	waitFor := func(what string, ok func(protocol.SessionUpdate) bool) {
		t.Helper()
		for {
			select {
			case u := <-updates:
				if ok(u) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no %s", what)
			}
		}
	}
	prompt := func(text string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.Prompt(ctx, protocol.SessionPromptParams{SessionID: sid, Prompt: &text})
			done <- err
		}()
		return done
	}

	// One turn with a thought, a reply, tools (one asks), a background
	// process, a sub-agent, a plan, an MCP tool's progress and three hooks: blocked,
	// failed, timed out.
	tl := func(name, args string) string { return "/tool " + name + " " + args + "\n" }
	if err := <-prompt("/think let me see\nhello\n" + tl("write_file", `{"path":"w.txt","content":"x"}`) +
		tl("read_file", `{"path":"nothing.txt"}`) + tl("list_dir", `{}`) +
		tl("plan", `{"entries":[{"content":"look","status":"in_progress","priority":"high"}]}`) +
		tl("shell", `{"command":"echo ran"}`) + tl("shell", `{"command":"echo in the background","background":true}`) + tl("mcp__t__count", `{}`) +
		tl("task", `{"description":"a sub-agent","prompt":"hello, child"}`)); err != nil {
		t.Fatal(err)
	}
	waitFor("the background process's end", func(u protocol.SessionUpdate) bool {
		e, ok := u.Event.(protocol.ProcessUpdateEvent)
		return ok && e.Process.State == "exited"
	})
	// A turn whose hook is cancelled with it, while a prompt queues.
	hung := prompt(tl("glob", `{"pattern":"*"}`))
	waitFor("the glob call", func(u protocol.SessionUpdate) bool {
		e, ok := u.Event.(protocol.ToolCallEvent)
		return ok && e.Name == "glob"
	})
	queued := prompt("after the cancel")
	waitFor("the queued prompt", func(u protocol.SessionUpdate) bool {
		e, ok := u.Event.(protocol.QueueUpdateEvent)
		return ok && len(e.Items) == 1
	})
	if _, err := c.Cancel(ctx, sid); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []<-chan error{hung, queued} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Compact(ctx, sid); err != nil {
		t.Fatal(err)
	}
	var rw protocol.SessionRewindResult
	if err := c.Call(ctx, protocol.MethodSessionRewind, protocol.SessionRewindParams{SessionID: sid, Turn: 3}, &rw); err != nil || !rw.Rewound {
		t.Fatalf("rewind: %+v %v", rw, err)
	}

	// A turn a kill -9 of the daemon cuts, gone on with by the next one
	// (turn_interrupted, turn_resumed).
	long := "/delay 30\n/chunks 100"
	go c.Prompt(ctx, protocol.SessionPromptParams{SessionID: sid, Prompt: &long, ClientMessageID: "replay-cut"})
	cut := ""
	waitFor("the long turn's reply", func(u protocol.SessionUpdate) bool {
		if e, ok := u.Event.(protocol.InputUpdateEvent); ok && e.ClientMessageID == "replay-cut" {
			cut = u.TurnID
		}
		_, ok := u.Event.(protocol.AgentMessageChunkEvent)
		return ok && cut != "" && u.TurnID == cut
	})
	daemon.Process.Signal(syscall.SIGKILL)
	daemon.Wait()
	c.Close()
	startDaemon(t, env, "--gateway", addr)
	if c, err = client.Dial(ctx, endpointOf(dir), client.Options{Handler: h}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.Await(ctx, sid, "replay-cut"); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("the cut turn, gone on with: %+v %v", res, err)
	}

	// A schedule's run in the session (schedule_update), fired now.
	var sched protocol.ScheduleResult
	if err := c.Call(ctx, protocol.MethodScheduleCreate, protocol.ScheduleFields{Prompt: "scheduled", Every: "1h", SessionID: sid}, &sched); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, protocol.MethodScheduleRun, protocol.ScheduleRef{ScheduleID: sched.Schedule.ScheduleID}, &sched); err != nil {
		t.Fatal(err)
	}
	waitFor("the schedule's run", func(u protocol.SessionUpdate) bool {
		e, ok := u.Event.(protocol.ScheduleUpdateEvent)
		return ok && e.Run.State == protocol.RunCompleted
	})

	// A goal met at once (goal_update).
	var goal protocol.SessionGoalResult
	if err := c.Call(ctx, protocol.MethodSessionGoal, protocol.SessionGoalParams{SessionID: sid, Objective: `/tool goal_done {"summary":"done"}`}, &goal); err != nil {
		t.Fatal(err)
	}
	// Its last update counts its turn, after the turn's end.
	waitFor("the goal met and its turn counted", func(u protocol.SessionUpdate) bool {
		e, ok := u.Event.(protocol.GoalUpdateEvent)
		return ok && e.Goal.State == protocol.GoalMet && e.Goal.Turns == 1
	})

	// Its mode switched by a client (config_update).
	full := protocol.RiskFull
	if _, err := c.Configure(ctx, protocol.SessionConfigureParams{SessionID: sid, Risk: &full}); err != nil {
		t.Fatal(err)
	}
	waitFor("the mode switched", func(u protocol.SessionUpdate) bool {
		e, ok := u.Event.(protocol.ConfigUpdateEvent)
		return ok && e.Risk == full
	})

	// The Go client's replay: every event type, each as its own type.
	var raws []json.RawMessage
	seen := map[string]bool{}
	hooks := map[string]string{}
	_, err = c.Replay(ctx, sid, 0, 0, func(raw json.RawMessage, u protocol.SessionUpdate) error {
		raws = append(raws, raw)
		seen[u.Event.EventType()] = true
		if _, ok := u.Event.(protocol.UnknownEvent); ok {
			t.Errorf("event %d of a type this build does not know: %s", u.Seq, raw)
		}
		if e, ok := u.Event.(protocol.HookEvent); ok {
			hooks[e.Command] = e.Outcome + ": " + e.Reason + e.Error
		}
		return nil
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	for _, typ := range protocol.EventTypes {
		if !seen[typ] {
			t.Errorf("no %s event in the session", typ)
		}
	}
	for cmd, want := range map[string]string{
		"echo 'no writes here' >&2; exit 2": "blocked: no writes here",
		"sleep 30":                          "timeout: ",
		"echo 'the hook broke' >&2; exit 3": "error: exit status 3",
		"sleep 60":                          "error: cancelled",
	} {
		if !strings.HasPrefix(hooks[cmd], want) {
			t.Errorf("hook %q: %q, want %q...", cmd, hooks[cmd], want)
		}
	}

	// zeroclaw sessions show, as JSON: every stored event, as stored.
	out.Reset()
	if code := Main(ctx, []string{"sessions", "show", sid, "--output-format", "json"}, env); code != 0 {
		t.Fatalf("sessions show --output-format json: exit %d: %s", code, errb.String())
	}
	var shown struct {
		SessionID string            `json:"sessionId"`
		Events    []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(out.Bytes(), &shown); err != nil || shown.SessionID != sid || len(shown.Events) != len(raws) {
		t.Fatalf("sessions show json: %d events of %d (%v): last %s", len(shown.Events), len(raws), err, shown.Events[len(shown.Events)-1])
	}
	// ... and as text: the hooks that did not pass are said.
	out.Reset()
	if code := Main(ctx, []string{"sessions", "show", sid}, env); code != 0 {
		t.Fatalf("sessions show: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"> /think let me see", "hook PreToolUse (sleep 30) timeout", "hook PreToolUse (sleep 60) error: cancelled", "echo: after the cancel",
		"(mode → full access, by cl_"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("sessions show lacks %q:\n%s", want, out.String())
		}
	}

	// Every export format has the hooks.
	for _, format := range []string{"markdown", "json", "html"} {
		var ex protocol.SessionExportResult
		if err := c.Call(ctx, protocol.MethodSessionExport, protocol.SessionExportParams{SessionID: sid, Format: format}, &ex); err != nil {
			t.Fatalf("export %s: %v", format, err)
		}
		for _, want := range []string{"blocked in", "timeout in", "error in", "cancelled", "exit status 3", "after the cancel", "settings changed by cl_"} {
			if !strings.Contains(ex.Content, want) {
				t.Errorf("export %s lacks %q", format, want)
			}
		}
	}

	// ACP session/load replays it to an editor.
	call := startACP(t, env)
	call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	_, notes := call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	kinds := map[string]bool{}
	for _, n := range notes {
		if n["method"] == "session/update" {
			kinds[n["params"].(map[string]any)["update"].(map[string]any)["sessionUpdate"].(string)] = true
		}
	}
	for _, k := range []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"} {
		if !kinds[k] {
			t.Errorf("session/load sent no %s (sent %v)", k, kinds)
		}
	}

	// The gateway's SSE stream, resumed from the start: every event, then
	// its end.
	out.Reset()
	if code := Main(ctx, []string{"gateway", "pair", "--output-format", "json"}, env); code != 0 {
		t.Fatalf("gateway pair: %d %s", code, errb.String())
	}
	var pc protocol.GatewayPairResult
	json.Unmarshal(out.Bytes(), &pc)
	resp, err := http.Post("http://"+addr+"/pair", "application/json", strings.NewReader(fmt.Sprintf(`{"code":%q,"name":"replay test"}`, pc.Code)))
	if err != nil {
		t.Fatal(err)
	}
	var pr protocol.PairResponse
	json.NewDecoder(resp.Body).Decode(&pr)
	resp.Body.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/sessions/"+sid+"/prompt", nil)
	req.Header.Set("Authorization", "Bearer "+pr.Token)
	req.Header.Set("Last-Event-ID", "0")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []string
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, id)
		}
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			last = ev
		}
	}
	if resp.StatusCode != http.StatusOK || len(ids) != len(raws) || last != "result" {
		t.Errorf("SSE resume: status %d, %d events of %d, last event %q", resp.StatusCode, len(ids), len(raws), last)
	}
}
