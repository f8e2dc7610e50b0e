package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/daemon"
)

// An ephemeral daemon stays while a gateway client is connected, and
// goes after the last one leaves.
func TestEphemeralCountsGatewayClients(t *testing.T) {
	g := start(t, func(_ *config.Config, o *daemon.Options) {
		o.Ephemeral, o.Grace = true, 300*time.Millisecond
	})
	tok, _ := g.pair("eph") // the socket clients of pairing are gone now
	c := wsDial(t, g, "/ws", tok, nil)
	wsCall(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	select {
	case err := <-g.done:
		t.Fatalf("the daemon stopped with a gateway client connected: %v", err)
	case <-time.After(time.Second): // three grace periods
	}
	c.Close(websocket.StatusNormalClosure, "")
	select {
	case err := <-g.done:
		g.done <- err
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the ephemeral daemon did not stop after its last gateway client left")
	}
}

// A WebSocket client that sends a prompt and never reads is dropped
// after the stall timeout; the daemon and other clients go on.
func TestWebSocketThatNeverReadsIsDropped(t *testing.T) {
	g := start(t, func(_ *config.Config, o *daemon.Options) { o.StallTimeout = 300 * time.Millisecond })
	tok, _ := g.pair("slow")
	slow := wsDial(t, g, "/ws", tok, nil)
	wsCall(t, slow, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	wsCall(t, slow, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"sessionId":"big","cwd":"/"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	slow.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"big","prompt":"/chunks 200000"}}`))
	// It reads nothing from here on. Another client is served meanwhile,
	// and sees the slow one leave.
	other := wsDial(t, g, "/ws", tok, nil)
	wsCall(t, other, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		m := wsCall(t, other, `{"jsonrpc":"2.0","id":2,"method":"status"}`)
		b, _ := json.Marshal(m["result"])
		var st struct{ Clients int }
		json.Unmarshal(b, &st)
		if st.Clients == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client that never reads is still connected: %s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The turn goes on without it and ends.
	deadline = time.Now().Add(30 * time.Second)
	for {
		m := wsCall(t, other, `{"jsonrpc":"2.0","id":3,"method":"status"}`)
		b, _ := json.Marshal(m["result"])
		if !strings.Contains(string(b), `"running"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn never ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A graceful stop closes open WebSockets with a close frame.
func TestStopClosesWebSocketsWithACloseFrame(t *testing.T) {
	g := start(t, nil)
	tok, _ := g.pair("stop")
	c := wsDial(t, g, "/ws", tok, nil)
	wsCall(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	g.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if s := websocket.CloseStatus(err); s != websocket.StatusGoingAway {
		t.Fatalf("on stop: %v (status %d)", err, s)
	}
}
