package acp_test

import (
	"context"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Another client's switch of the mode reaches the editor at once, as
// config_option_update with every option and the mode's new value; the
// editor's own switch is not sent back (its answer said it).
func TestAnotherClientsModeSwitchReachesTheEditor(t *testing.T) {
	endpoint := runDaemon(t)
	e := startBridge(t, endpoint)
	result(t, e.call("initialize", `{"protocolVersion":1,"clientCapabilities":{}}`))
	sid := result(t, e.call("session/new", `{"cwd":"`+t.TempDir()+`","mcpServers":[]}`))["sessionId"].(string)
	result(t, e.call("session/set_config_option", `{"sessionId":"`+sid+`","configId":"mode","value":"plan"}`))
	for _, u := range e.updates() {
		if u["sessionUpdate"] == "config_option_update" {
			t.Errorf("the editor's own switch was sent back: %v", u)
		}
	}

	ctx := context.Background()
	phone, err := client.Dial(ctx, endpoint, client.Options{ClientInfo: protocol.ClientInfo{Name: "phone"}})
	if err != nil {
		t.Fatal(err)
	}
	defer phone.Close()
	if _, err := phone.NewSession(ctx, protocol.SessionNewParams{SessionID: sid, KeepSiblings: true}); err != nil {
		t.Fatal(err)
	}
	full := protocol.RiskFull
	if _, err := phone.Configure(ctx, protocol.SessionConfigureParams{SessionID: sid, Risk: &full}); err != nil {
		t.Fatal(err)
	}
	seen := e.until(func(u map[string]any) bool { return u["sessionUpdate"] == "config_option_update" })
	opts := map[string]any{}
	for _, o := range seen[len(seen)-1]["configOptions"].([]any) {
		opts[o.(map[string]any)["id"].(string)] = o.(map[string]any)["currentValue"]
	}
	if opts["mode"] != "full" || opts["model"] != "echo" || opts["thought_level"] != "default" {
		t.Errorf("config_option_update: %v", opts)
	}
}
