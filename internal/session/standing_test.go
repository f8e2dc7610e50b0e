package session

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/permission"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// An "always" answer holds in the scope its option names, and no wider
// (issue 50, item 12): one for the session (allow_always,
// allow_always_input, reject_always) is gone for a new session of the
// same project, which asks again; one for the project (allow_project,
// allow_project_input, reject_project) is stored, and a new session
// there does not ask. Permissions says each one's scope, and a
// session's answer can be revoked like a stored one.
func TestAnswersHoldInTheirScope(t *testing.T) {
	perms, err := permission.OpenStore(filepath.Join(t.TempDir(), "permissions.json"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, supervised, func(o *Options) { o.Permissions = perms })
	cwd := t.TempDir()
	type session struct {
		id string
		cl *Client
		c  *conn
	}
	open := func(id string) session {
		t.Helper()
		cl, c := h.client(t, "c-"+id)
		if _, err := h.m.New(context.Background(), cl, protocol.SessionNewParams{SessionID: id, Cwd: cwd, KeepSiblings: true}); err != nil {
			t.Fatal(err)
		}
		return session{id, cl, c}
	}
	// call runs one tool call in s; when it asks, decision answers it.
	call := func(s session, line, decision string) (asked *protocol.ApprovalRequestEvent, reply string) {
		t.Helper()
		skip := len(s.c.events(t))
		done, err := h.m.Prompt(s.cl, s.id, line)
		if err != nil {
			t.Fatal(err)
		}
		if tc := waitFor[protocol.ToolCallEvent](t, s.c, skip); tc.NeedsApproval {
			req := waitFor[protocol.ApprovalRequestEvent](t, s.c, skip)
			asked = &req
			if ok, err := h.m.Approve(s.cl, protocol.SessionApproveParams{SessionID: s.id, RequestID: req.RequestID, Decision: decision}); !ok || err != nil {
				t.Fatalf("approve %s: %v %v", decision, ok, err)
			}
		}
		select {
		case r := <-done:
			return asked, r.Content
		case <-time.After(20 * time.Second):
			t.Fatal("the turn did not end")
		}
		return nil, ""
	}
	rules := func(scope string) []protocol.PermissionRule {
		var out []protocol.PermissionRule
		for _, r := range h.m.Permissions(cwd) {
			if r.Scope == scope {
				out = append(out, r)
			}
		}
		return out
	}
	shell := `/tool shell {"command":"echo hi"}`

	// The options offered name both scopes.
	a := open("a")
	req, _ := call(a, shell, protocol.DecisionAllowAlways)
	if req == nil || !slices.Equal(req.Options, protocol.Decisions) {
		t.Fatalf("the first shell: asked %+v, want the options %v", req, protocol.Decisions)
	}
	if req, _ := call(a, `/tool shell {"command":"echo again"}`, ""); req != nil {
		t.Errorf("asked again in the session after allow_always: %+v", req)
	}
	if got := rules(protocol.ScopeSession); len(got) != 1 || got[0].SessionID != "a" || got[0].Tool != "shell" || got[0].Pattern != "*" ||
		got[0].Decision != permission.Allow || got[0].Dir != cwd || !strings.HasPrefix(got[0].ID, "session#") {
		t.Errorf("the session's answer listed as %+v", got)
	}
	if got := rules(protocol.ScopeProject); len(got) != 0 {
		t.Errorf("an answer for the session was stored for the project: %+v", got)
	}
	// The attack: the answer shown for the session must not reach
	// another session of the project.
	b := open("b")
	if req, _ := call(b, shell, protocol.DecisionAllowProject); req == nil {
		t.Fatal("a new session of the project ran shell unasked after an answer for the session")
	}
	if got := rules(protocol.ScopeProject); len(got) != 1 || got[0].Tool != "shell" || got[0].Pattern != "*" || got[0].Dir != cwd || got[0].SessionID != "" {
		t.Errorf("the project's answer listed as %+v", got)
	}
	if req, reply := call(open("c"), shell, ""); req != nil || !strings.Contains(reply, "hi") {
		t.Errorf("a new session after allow_project: asked %+v, %q", req, reply)
	}

	// Exact inputs and refusals, each in its scope.
	write := `/tool write_file {"path":"w.txt","content":"x"}`
	if req, _ := call(b, write, protocol.DecisionAllowProjectInput); req == nil {
		t.Fatal("write_file did not ask")
	}
	if got := rules(protocol.ScopeProject); len(got) != 2 || got[1].Tool != "write_file" || got[1].Pattern != "w.txt" {
		t.Errorf("the exact answer for the project: %+v", got)
	}
	d := open("d")
	if req, _ := call(d, write, ""); req != nil {
		t.Errorf("the same write in a new session asked: %+v", req)
	}
	if req, _ := call(d, `/tool write_file {"path":"other.txt","content":"x"}`, protocol.DecisionRejectAlways); req == nil {
		t.Error("another path did not ask")
	}
	if req, reply := call(d, `/tool edit_file {"path":"w.txt","old":"x","new":"y"}`, protocol.DecisionRejectProject); req == nil || !strings.Contains(reply, "rejected") {
		t.Errorf("edit_file: asked %+v, %q", req, reply)
	}
	e := open("e")
	if req, _ := call(e, `/tool write_file {"path":"other.txt","content":"x"}`, protocol.DecisionAllowOnce); req == nil {
		t.Error("a rejection for session d reached session e")
	}
	if req, reply := call(e, `/tool edit_file {"path":"w.txt","old":"x","new":"y"}`, ""); req != nil || !strings.Contains(reply, `refused by the permission rule deny edit_file "*" (answer)`) {
		t.Errorf("a rejection for the project: asked %+v, %q", req, reply)
	}
	// A session's answer is revoked as a stored one is.
	sess := rules(protocol.ScopeSession)
	if len(sess) != 2 { // a's shell, d's write_file
		t.Fatalf("the sessions' answers: %+v", sess)
	}
	if ok, err := h.m.Revoke(sess[0].ID); !ok || err != nil {
		t.Fatalf("revoke %s: %v %v", sess[0].ID, ok, err)
	}
	for _, r := range rules(protocol.ScopeProject) {
		h.m.Revoke(r.ID)
	}
	if req, _ := call(a, shell, protocol.DecisionRejectOnce); req == nil {
		t.Error("session a did not ask after its answer was revoked")
	}
	if ok, _ := h.m.Revoke(sess[0].ID); ok {
		t.Error("revoked twice")
	}
}

// Where no answers are stored, none for the project is offered; an
// input whose exact rule would allow more than it (a compound command)
// gets no exact option for the project.
func TestProjectOptionsOnlyWhereTheyHold(t *testing.T) {
	h := newHarness(t, supervised)
	cl, c := h.client(t, "c1")
	h.open(t, cl, "s")
	done, err := h.m.Prompt(cl, "s", `/tool shell {"command":"echo hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	req := waitFor[protocol.ApprovalRequestEvent](t, c, 0)
	for _, o := range req.Options {
		if strings.HasSuffix(o, "_project") || strings.HasSuffix(o, "_project_input") {
			t.Errorf("offered %s with no store of answers: %v", o, req.Options)
		}
	}
	if _, err := h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: req.RequestID, Decision: protocol.DecisionAllowProject}); err == nil {
		t.Error("allow_project taken where it was not offered")
	}
	h.m.Approve(cl, protocol.SessionApproveParams{SessionID: "s", RequestID: req.RequestID, Decision: protocol.DecisionRejectOnce})
	<-done

	perms, _ := permission.OpenStore(filepath.Join(t.TempDir(), "permissions.json"))
	h2 := newHarnessWith(t, supervised, func(o *Options) { o.Permissions = perms })
	cl2, c2 := h2.client(t, "c2")
	h2.open(t, cl2, "s")
	done, err = h2.m.Prompt(cl2, "s", `/tool shell {"command":"echo a && echo b"}`)
	if err != nil {
		t.Fatal(err)
	}
	req = waitFor[protocol.ApprovalRequestEvent](t, c2, 0)
	if !slices.Contains(req.Options, protocol.DecisionAllowProject) || slices.Contains(req.Options, protocol.DecisionAllowProjectInput) {
		t.Errorf("a compound command's options: %v", req.Options)
	}
	h2.m.Approve(cl2, protocol.SessionApproveParams{SessionID: "s", RequestID: req.RequestID, Decision: protocol.DecisionRejectOnce})
	<-done
}
