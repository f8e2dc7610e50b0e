package gateway

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
	"github.com/zeroclaw/zeroclaw/internal/rpc"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// lone starts a gateway alone (its keeper on a store of its own; each
// connection served by reading it to its end, then ended) and pairs a
// script's token.
func lone(t *testing.T, ko pairing.Options, ping, pongWait time.Duration, ended func(rpc.Peer)) (*Gateway, string) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	k, err := pairing.New(context.Background(), st, ko)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Start(Options{Config: config.Gateway{Listen: "127.0.0.1:0"}, Keeper: k, Ping: ping, PongWait: pongWait,
		Serve: func(ctx context.Context, rwc io.ReadWriteCloser, peer rpc.Peer) error {
			io.Copy(io.Discard, rwc) // reads until the connection ends
			if ended != nil {
				ended(peer)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	code, _ := k.NewCode()
	cred, _, err := k.Pair("test", code, "", false)
	if err != nil {
		t.Fatal(err)
	}
	return g, cred.Token
}

// A WebSocket whose peer answers no ping is closed after the ping
// interval and the pong wait; one whose peer reads (and so answers
// pings) stays, idle as it is.
func TestKeepaliveDropsAPeerThatAnswersNoPing(t *testing.T) {
	ended := make(chan string, 2)
	g, tok := lone(t, pairing.Options{}, 100*time.Millisecond, 100*time.Millisecond, func(peer rpc.Peer) { ended <- peer.Label })
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(context.Background(), strings.Replace(g.URL(), "http", "ws", 1)+"/ws",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	deaf := dial() // never reads: its pongs never go out
	defer deaf.CloseNow()
	live := dial()
	defer live.CloseNow()
	readCtx, stopReading := context.WithCancel(context.Background())
	defer stopReading()
	go live.Read(readCtx) // a reader answers pings
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the peer that answers no ping was not dropped")
	}
	select {
	case <-ended:
		t.Fatal("the peer that answers pings was dropped too")
	case <-time.After(600 * time.Millisecond): // several ping rounds
	}
}

// A credential that lapses while its WebSocket is open closes it (1008)
// at the next keepalive round, and its requests are refused from then.
func TestExpiredCredentialClosesItsWebSocket(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	g, tok := lone(t, pairing.Options{TokenTTL: time.Hour, Now: clock}, 50*time.Millisecond, time.Second, nil)
	hdr := http.Header{"Authorization": {"Bearer " + tok}}
	c, _, err := websocket.Dial(context.Background(), strings.Replace(g.URL(), "http", "ws", 1)+"/ws", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("the lapsed credential's WebSocket: %v", err)
	}
	req, _ := http.NewRequest("GET", g.URL()+"/api/status", nil)
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request with the lapsed token: %d", resp.StatusCode)
	}
}
