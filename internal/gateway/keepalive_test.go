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

// A WebSocket whose peer answers no ping is closed after the ping
// interval and the pong wait; one whose peer reads (and so answers
// pings) stays, idle as it is.
func TestKeepaliveDropsAPeerThatAnswersNoPing(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k, err := pairing.New(context.Background(), st, pairing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan string, 2)
	g, err := Start(Options{Config: config.Gateway{Listen: "127.0.0.1:0"}, Keeper: k,
		Ping: 100 * time.Millisecond, PongWait: 100 * time.Millisecond,
		Serve: func(ctx context.Context, rwc io.ReadWriteCloser, peer rpc.Peer) error {
			io.Copy(io.Discard, rwc) // reads until the connection ends
			ended <- peer.Label
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	code, _ := k.NewCode()
	cred, _, err := k.Pair("test", code, "", false)
	tok := cred.Token
	if err != nil {
		t.Fatal(err)
	}
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
	st, err := store.Open(filepath.Join(t.TempDir(), "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	k, err := pairing.New(context.Background(), st, pairing.Options{TokenTTL: time.Hour, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Start(Options{Config: config.Gateway{Listen: "127.0.0.1:0"}, Keeper: k,
		Ping: 50 * time.Millisecond, PongWait: time.Second,
		Serve: func(ctx context.Context, rwc io.ReadWriteCloser, peer rpc.Peer) error {
			io.Copy(io.Discard, rwc)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	code, _ := k.NewCode()
	cred, _, err := k.Pair("test", code, "", false)
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{"Authorization": {"Bearer " + cred.Token}}
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
