package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// answering is a connection whose client answers the daemon's requests
// (questions, file reads and writes, terminal runs) with answer, and
// keeps the notifications it is sent.
type answering struct {
	*conn
	answer  func(method string, params any) (any, error)
	mu      sync.Mutex
	notices []protocol.SessionChanged
}

func (a *answering) Call(ctx context.Context, method string, params, result any) error {
	res, err := a.answer(method, params)
	if err != nil || result == nil {
		return err
	}
	b, _ := json.Marshal(res)
	return json.Unmarshal(b, result)
}

func (a *answering) Notify(method string, params any) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch, ok := params.(protocol.SessionChanged); ok && method == protocol.MethodSessionChanged {
		a.notices = append(a.notices, ch)
	}
	return nil
}

// events drains c and returns the session/update params it got so far.
func (c *conn) events(t *testing.T) []protocol.SessionUpdate {
	t.Helper()
	c.drain(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []protocol.SessionUpdate
	for _, f := range c.frames {
		var m struct{ Params json.RawMessage }
		json.Unmarshal(f, &m)
		u, err := protocol.ParseUpdate(m.Params)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// waitFor drains c until an event of type T arrives after the first
// skip events, and returns it.
func waitFor[T protocol.EventBody](t *testing.T, c *conn, skip int) T {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		evs := c.events(t)
		for _, e := range evs[min(skip, len(evs)):] {
			if e, ok := e.Event.(T); ok {
				return e
			}
		}
		select {
		case <-c.pending:
		case <-deadline:
			var none T
			t.Fatalf("no %s event", none.EventType())
		}
	}
}

func supervised(cfg *config.Config) {
	a := cfg.Agents["default"]
	a.Risk = "supervised"
	cfg.Agents["default"] = a
}

// Approvals: a call that asks says so on its tool_call; "always" answers
// stand for the rest of the session (the next such call neither asks nor
// says it will); an unknown request or a bad decision is refused; nobody
// answering within the timeout is a rejection by "timeout".
func TestApprovalsAskThenStand(t *testing.T) {
	h := newHarness(t, func(cfg *config.Config) {
		supervised(cfg)
		cfg.Daemon.ApprovalTimeoutSecs = 1
	})
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	ask := func(prompt, decision string) (protocol.ToolCallEvent, protocol.SessionPromptResult) {
		t.Helper()
		skip := len(c.events(t))
		done, err := h.m.Prompt(cl, "s", prompt)
		if err != nil {
			t.Fatal(err)
		}
		call := waitFor[protocol.ToolCallEvent](t, c, skip)
		if call.NeedsApproval && decision != "" {
			req := waitFor[protocol.ApprovalRequestEvent](t, c, skip)
			if req.ToolCallID != call.ToolCallID || req.Kind != call.Kind {
				t.Errorf("approval_request %+v for call %+v", req, call)
			}
			ok, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: req.RequestID, Decision: decision})
			if !ok || err != nil {
				t.Fatalf("approve: %v %v", ok, err)
			}
			if again, _ := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: req.RequestID, Decision: decision}); again {
				t.Error("a second answer was accepted")
			}
		}
		select {
		case r := <-done:
			return call, r
		case <-time.After(20 * time.Second):
			t.Fatal("the turn did not end")
		}
		return call, protocol.SessionPromptResult{}
	}
	shell := `/tool shell {"command":"echo hi"}`
	if call, r := ask(shell, protocol.DecisionAllowAlways); !call.NeedsApproval || call.Kind != "execute" || call.Title != "shell: echo hi" || !strings.Contains(r.Content, "hi") {
		t.Errorf("first shell: %+v, %+v", call, r)
	}
	if call, r := ask(`/tool shell {"command":"echo again"}`, ""); call.NeedsApproval || !strings.Contains(r.Content, "again") {
		t.Errorf("a shell after allow_always: %+v, %+v", call, r)
	}
	write := `/tool write_file {"path":"x.txt","content":"y"}`
	ask(write, protocol.DecisionRejectAlways)
	if call, r := ask(write, ""); call.NeedsApproval || !strings.Contains(r.Content, "rejected write_file for the rest of this session") {
		t.Errorf("a write after reject_always: %+v, %+v", call, r)
	}
	if ok, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: "apr_none", Decision: protocol.DecisionAllowOnce}); ok || err != nil {
		t.Errorf("an unknown request: %v %v", ok, err)
	}
	if _, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: "apr_none", Decision: "maybe"}); err == nil {
		t.Error("a bad decision was taken")
	}
	// Nobody answers: refused by the timeout.
	_, r := ask(`/tool edit_file {"path":"x.txt","old":"a","new":"b"}`, "")
	if !strings.Contains(r.Content, "edit_file was not run") {
		t.Errorf("unanswered: %+v", r)
	}
	var resolved protocol.ApprovalResolvedEvent
	for _, e := range c.events(t) {
		if e, ok := e.Event.(protocol.ApprovalResolvedEvent); ok {
			resolved = e
		}
	}
	if resolved.By != "timeout" || resolved.Decision != protocol.DecisionRejectOnce {
		t.Errorf("the last resolution: %+v", resolved)
	}
}

// The stored sessions as the list methods see them, renamed, followed by
// a watcher, configured, compacted, cancelled when idle, and deleted;
// attaching elsewhere closes a client's idle siblings unless asked not
// to; a client not attached may not prompt.
func TestSessionsListedRenamedWatchedConfiguredDeleted(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	cl, _ := h.client(t, "c1")
	watcher := &answering{conn: newConn()}
	wcl := NewClient(watcher)
	wcl.SetIdentity("w", "", false, 0)
	defer wcl.Close()
	h.m.Watch(wcl)
	h.open(t, cl, "one")
	if r := h.prompt(t, cl, "one", "# first **prompt**"); r.StopReason != protocol.StopEndTurn {
		t.Fatalf("prompt: %+v", r)
	}
	info, err := h.m.Archive().Get(ctx, "one")
	if err != nil || info.Title != "first prompt" || info.LastSeq == 0 || !info.Live {
		t.Fatalf("get: %+v %v", info, err)
	}
	if _, err := h.m.Rename(ctx, "one", strings.Repeat("x", MaxTitle+1)); err == nil {
		t.Error("a title too long was taken")
	}
	if info, err := h.m.Rename(ctx, "one", "zebra crossing"); err != nil || info.Title != "zebra crossing" {
		t.Errorf("rename: %+v %v", info, err)
	}
	// A second session from the same client, without keep_siblings:
	// the idle sibling of the same mode is closed (it stays stored).
	res, err := h.m.New(ctx, cl, protocol.SessionNewParams{SessionID: "two", Cwd: t.TempDir()})
	if err != nil || len(res.Evicted) != 1 || res.Evicted[0] != "one" {
		t.Fatalf("new without keep_siblings: %+v %v", res, err)
	}
	if _, err := h.m.Prompt(cl, "one", "hi"); !errors.Is(err, ErrForbidden) && !errors.Is(err, ErrNotFound) {
		t.Errorf("prompting a closed sibling: %v", err)
	}
	list, err := h.m.Archive().List(ctx, protocol.SessionListParams{})
	if err != nil || len(list.Sessions) != 2 || *list.Total != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if found, _ := h.m.Archive().List(ctx, protocol.SessionListParams{Query: "ZEBRA"}); len(found.Sessions) != 1 || found.Sessions[0].SessionID != "one" {
		t.Errorf("query: %+v", found)
	}
	page, err := h.m.Archive().List(ctx, protocol.SessionListParams{Limit: 1})
	if err != nil || page.NextCursor == nil {
		t.Fatalf("a page of one: %+v %v", page, err)
	}
	if next, err := h.m.Archive().List(ctx, protocol.SessionListParams{Limit: 1, Cursor: *page.NextCursor}); err != nil || len(next.Sessions) != 1 || next.Sessions[0].SessionID == page.Sessions[0].SessionID {
		t.Errorf("the next page: %+v %v", next, err)
	}
	if _, err := h.m.Archive().List(ctx, protocol.SessionListParams{Cursor: "bogus"}); err == nil {
		t.Error("a bogus cursor was taken")
	}
	hist, err := h.m.Archive().History(ctx, protocol.SessionHistoryParams{SessionID: "one", Limit: 2}, 1<<20)
	if err != nil || len(hist.Events) != 2 || !hist.More {
		t.Errorf("history: %+v %v", hist, err)
	}
	if ev, err := h.m.Archive().Event(ctx, protocol.SessionEventParams{SessionID: "one", Seq: 1}, 1<<20); err != nil || ev.TotalBytes == 0 || ev.More {
		t.Errorf("event: %+v %v", ev, err)
	}
	model, risk := "echo", "readonly"
	if cr, err := h.m.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: "two", Model: &model, Risk: &risk}); err != nil || cr.Risk != "readonly" {
		t.Errorf("configure: %+v %v", cr, err)
	}
	bad := "sometimes"
	if _, err := h.m.Configure(ctx, cl, protocol.SessionConfigureParams{SessionID: "two", Risk: &bad}); err == nil {
		t.Error("a bad risk was taken")
	}
	h.prompt(t, cl, "two", "a")
	h.prompt(t, cl, "two", "b")
	if cr, err := h.m.Compact(ctx, cl, "two"); err != nil || cr.SessionID != "two" {
		t.Errorf("compact: %+v %v", cr, err)
	}
	if ok, err := h.m.Cancel(cl, "two"); ok || err != nil {
		t.Errorf("cancel with nothing running: %v %v", ok, err)
	}
	if err := h.m.Delete(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.m.Archive().Get(ctx, "one"); !errors.Is(err, ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if err := h.m.Delete(ctx, "one"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if ml, err := h.m.Models(ctx, ""); err != nil || len(ml.Models) == 0 {
		t.Errorf("models: %+v %v", ml, err)
	}
	if _, err := h.m.Models(ctx, "nobody"); err == nil {
		t.Error("models of an unknown agent")
	}
	// The watcher was told of the changes as they committed (several
	// that came while one was told are told once, as they stand): each
	// session's last word is its state now (Stop waits for the telling
	// of all that committed).
	h.st.Sync()
	h.m.list.Stop()
	watcher.mu.Lock()
	last := map[string]protocol.SessionChanged{}
	for _, ch := range watcher.notices {
		last[ch.SessionID] = ch
	}
	watcher.mu.Unlock()
	if !last["one"].Deleted || last["two"].Session == nil || last["two"].Session.SessionID != "two" {
		t.Errorf("the watcher's last word: %+v", last)
	}
}

// What a turn asks of the prompting client goes to it: questions
// (elicitation/create), file reads and writes through an editor
// (fs/*_text_file), commands in its terminal (terminal/run).
func TestTurnsUseTheClientsQuestionsFilesAndTerminal(t *testing.T) {
	h := newHarness(t, func(cfg *config.Config) {
		a := cfg.Agents["default"]
		a.Risk = "full"
		cfg.Agents["default"] = a
	})
	var mu sync.Mutex
	asked := map[string]int{}
	a := &answering{conn: newConn(), answer: func(method string, params any) (any, error) {
		mu.Lock()
		asked[method]++
		mu.Unlock()
		switch method {
		case protocol.MethodElicitationCreate:
			return protocol.ElicitationResult{Action: "accept", Content: json.RawMessage(`{"answer":"blue"}`)}, nil
		case protocol.MethodFSReadTextFile:
			return protocol.FSReadResult{Content: "from the editor"}, nil
		case protocol.MethodFSWriteTextFile:
			return struct{}{}, nil
		case protocol.MethodTerminalRun:
			code := 0
			return protocol.TerminalRunResult{Output: "ran in the editor\n", ExitCode: &code}, nil
		}
		return nil, errors.New("unexpected " + method)
	}}
	cl := NewClient(a)
	cl.SetIdentity("editor", "", true, 0)
	cl.SetFS(true, true, true)
	defer cl.Close()
	h.open(t, cl, "s")
	for _, c := range []struct{ prompt, want string }{
		{`/tool ask_user {"question":"which colour?"}`, "blue"},
		{`/tool read_file {"path":"f.txt"}`, "from the editor"},
		{`/tool write_file {"path":"f.txt","content":"new"}`, "returned"},
		{`/tool shell {"command":"echo x"}`, "ran in the editor"},
	} {
		if r := h.prompt(t, cl, "s", c.prompt); !strings.Contains(r.Content, c.want) {
			t.Errorf("%s: %q", c.prompt, r.Content)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range []string{protocol.MethodElicitationCreate, protocol.MethodFSReadTextFile, protocol.MethodFSWriteTextFile, protocol.MethodTerminalRun} {
		if asked[m] != 1 {
			t.Errorf("%s asked %d times", m, asked[m])
		}
	}
}
