package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// A session's life through the typed client, as a program would live it:
// make a session, prompt it (its events reach the handler), configure,
// rename, list and walk the list, read its history and one event, follow
// the list, compact, cancel when nothing runs, close, delete; the daemon's
// answers are typed, its refusals are errors with their codes.
func TestTypedClientWalksASessionsLife(t *testing.T) {
	endpoint := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var events []protocol.SessionUpdate
	changed := make(chan protocol.SessionChanged, 64)
	h := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case protocol.MethodSessionUpdate:
			u, err := protocol.ParseUpdate(req.Params)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			events = append(events, u)
			mu.Unlock()
		case protocol.MethodSessionChanged:
			var c protocol.SessionChanged
			json.Unmarshal(req.Params, &c)
			changed <- c
		}
		return nil, nil
	})
	c, err := client.Dial(ctx, endpoint, client.Options{Handler: h, ClientInfo: protocol.ClientInfo{Name: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Init.ClientID == "" || c.Init.MaxFrameBytes == 0 {
		t.Fatalf("initialize: %+v", c.Init)
	}
	if err := c.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	ns, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "typed", Cwd: t.TempDir()})
	if err != nil || ns.SessionID != "typed" || ns.Model != "echo" {
		t.Fatalf("new session: %+v %v", ns, err)
	}
	text := "hello\n/tool list_dir {}"
	res, err := c.Prompt(ctx, protocol.SessionPromptParams{SessionID: "typed", Prompt: &text})
	if err != nil || res.StopReason != protocol.StopEndTurn || !strings.Contains(res.Content, "tool list_dir returned") {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	mu.Lock()
	var kinds []string
	for _, u := range events {
		if c, ok := u.Event.(protocol.ToolCallEvent); ok {
			kinds = append(kinds, c.Kind)
		}
	}
	last := events[len(events)-1]
	end, _ := last.Event.(protocol.TurnCompleteEvent)
	mu.Unlock()
	if fmt.Sprint(kinds) != "[read]" || end.Outcome != protocol.OutcomeCompleted {
		t.Errorf("events: tool kinds %v, last %+v", kinds, last)
	}
	model := "echo"
	if cr, err := c.Configure(ctx, protocol.SessionConfigureParams{SessionID: "typed", Model: &model}); err != nil || cr.Model != "echo" {
		t.Errorf("configure: %+v %v", cr, err)
	}
	if info, err := c.Rename(ctx, "typed", "a typed session"); err != nil || info.Title != "a typed session" {
		t.Errorf("rename: %+v %v", info, err)
	}
	for seen := false; !seen; {
		select {
		case ch := <-changed:
			seen = ch.SessionID == "typed" && ch.Session != nil && ch.Session.Title == "a typed session"
		case <-ctx.Done():
			t.Fatal("no session/changed for the rename")
		}
	}
	if got, err := c.Get(ctx, "typed"); err != nil || got.Title != "a typed session" || got.LastSeq != last.Seq {
		t.Errorf("get: %+v %v", got, err)
	}
	page, err := c.List(ctx, protocol.SessionListParams{Query: "typed"})
	if err != nil || len(page.Sessions) != 1 {
		t.Errorf("list: %+v %v", page, err)
	}
	n := 0
	if err := c.EachSession(ctx, func(protocol.SessionInfo) bool { n++; return true }); err != nil || n != 1 {
		t.Errorf("each session: %d %v", n, err)
	}
	hist, err := c.History(ctx, protocol.SessionHistoryParams{SessionID: "typed"})
	if err != nil || int64(len(hist.Events)) != last.Seq || hist.More {
		t.Errorf("history: %d events, more %v, %v", len(hist.Events), hist.More, err)
	}
	if ev, err := c.Event(ctx, "typed", 2); err != nil || !strings.Contains(string(ev), `"user_message"`) {
		t.Errorf("event 2: %s %v", ev, err)
	}
	if cr, err := c.Compact(ctx, "typed"); err != nil || cr.SessionID != "typed" {
		t.Errorf("compact: %+v %v", cr, err)
	}
	if cancelled, err := c.Cancel(ctx, "typed"); err != nil || cancelled {
		t.Errorf("cancel with nothing running: %v %v", cancelled, err)
	}
	if ok, err := c.Approve(ctx, protocol.SessionApproveParams{SessionID: "typed", RequestID: "apr_none", Decision: protocol.DecisionAllowOnce}); err != nil || ok {
		t.Errorf("approve an unknown request: %v %v", ok, err)
	}
	if ml, err := c.Models(ctx, ""); err != nil || len(ml.Models) == 0 {
		t.Errorf("models: %+v %v", ml, err)
	}
	if st, err := c.Status(ctx); err != nil || len(st.Agents) == 0 || st.Agents[0].Alias != "default" {
		t.Errorf("status: %+v %v", st, err)
	}
	if err := c.CloseSession(ctx, "typed"); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := c.DeleteSession(ctx, "typed"); err != nil {
		t.Errorf("delete: %v", err)
	}
	// Refusals keep their codes.
	var je *jsonrpc.Error
	if _, err := c.Get(ctx, "typed"); !errors.As(err, &je) || je.Code != protocol.CodeSessionNotFound {
		t.Errorf("get a deleted session: %v", err)
	}
	if _, err := c.GatewayPair(ctx); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("pairing without a gateway: %v", err)
	}
	if toks, err := c.GatewayTokens(ctx); err != nil || len(toks.Tokens) != 0 {
		t.Errorf("tokens: %+v %v", toks, err)
	}
	if revoked, err := c.GatewayRevoke(ctx, "tok_none"); err != nil || revoked {
		t.Errorf("revoke nothing: %v %v", revoked, err)
	}
	if r, err := c.Reload(ctx); err != nil || !r.Reloaded || !strings.HasSuffix(r.Config, "config.toml") {
		t.Errorf("reload: %+v %v", r, err)
	}
}
