package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/acp/acptest"
)

// acpWS is an ACP client over /acp that validates every message the
// bridge sends against the ACP v1 schema.
type acpWS struct {
	t       *testing.T
	c       *websocket.Conn
	next    int
	updates []map[string]any
}

func (a *acpWS) call(method string, params string) map[string]any {
	a.t.Helper()
	a.next++
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.c.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, a.next, method, params))); err != nil {
		a.t.Fatal(err)
	}
	for {
		_, b, err := a.c.Read(ctx)
		if err != nil {
			a.t.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			a.t.Fatalf("not JSON: %q", b)
		}
		if m.Method == "session/update" {
			acptest.Validate(a.t, "SessionNotification", m.Params)
			var u map[string]any
			json.Unmarshal(m.Params, &u)
			a.updates = append(a.updates, u)
			continue
		}
		if m.ID == nil || *m.ID != a.next {
			a.t.Fatalf("unexpected message %s", b)
		}
		if m.Error != nil {
			a.t.Fatalf("%s: error %s", method, m.Error)
		}
		if def := acptest.ResponseDefs[method]; def != "" {
			acptest.Validate(a.t, def, m.Result)
		}
		var r map[string]any
		json.Unmarshal(m.Result, &r)
		return r
	}
}

// lastSeq is the seq of the last update a replay would give again (not
// usage, which is live only).
func lastSeq(us []map[string]any) float64 {
	for i := len(us) - 1; i >= 0; i-- {
		if up, _ := us[i]["update"].(map[string]any); up["sessionUpdate"] != "usage_update" && seqOf(us[i]) > 0 {
			return seqOf(us[i])
		}
	}
	return 0
}

func seqOf(u map[string]any) float64 {
	up, _ := u["update"].(map[string]any)
	meta, _ := up["_meta"].(map[string]any)
	zc, _ := meta["zeroclaw"].(map[string]any)
	s, _ := zc["seq"].(float64)
	return s
}

// ACP over the gateway: the same bridge as `zeroclaw acp`, every message
// valid ACP v1; a client that comes back loads only what it missed.
func TestACPOverWebSocket(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("editor")
	a := &acpWS{t: t, c: wsDial(t, g, "/acp", tok, nil)}
	a.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	ns := a.call("session/new", fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, t.TempDir()))
	id, _ := ns["sessionId"].(string)
	if r := a.call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"first"}]}`, id)); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", r)
	}
	seen := lastSeq(a.updates)
	if seen == 0 {
		t.Fatalf("updates carry no seq: %v", a.updates)
	}
	a.call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"second"}]}`, id))
	total := lastSeq(a.updates)
	a.c.Close(websocket.StatusNormalClosure, "")

	b := &acpWS{t: t, c: wsDial(t, g, "/acp", tok, nil)}
	b.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	b.call("session/load", fmt.Sprintf(`{"sessionId":%q,"cwd":"/","mcpServers":[],"_meta":{"zeroclaw":{"sinceSeq":%d}}}`, id, int(seen)))
	if len(b.updates) == 0 {
		t.Fatal("nothing replayed")
	}
	prev := seen
	var replayed []map[string]any
	for _, u := range b.updates {
		if seqOf(u) > 0 {
			replayed = append(replayed, u)
		}
	}
	for i, u := range replayed {
		if s := seqOf(u); s <= prev {
			t.Fatalf("replayed update %d has seq %v, after %v (only what the client missed, in order)", i, s, prev)
		}
		prev = seqOf(u)
	}
	if b, _ := json.Marshal(b.updates); !strings.Contains(string(b), `"second"`) || strings.Contains(string(b), `"first"`) {
		t.Fatalf("replayed %s", b)
	}
	if last := lastSeq(replayed); last != total {
		t.Fatalf("replay ended at %v, the session at %v", last, total)
	}
}
