// Package gateway is the daemon's second front door (spec 10.1): HTTP
// and WebSocket on a TCP address, for browsers (the dashboard), scripts
// (REST, Server-Sent Events, webhooks) and remote clients (the socket
// protocol over /ws, ACP over /acp). Every route but /health, /pair and
// the dashboard's static files needs a bearer token that a pairing code
// bought; the Host and Origin of every request are checked against DNS
// rebinding and cross-site use; a remote listen address needs TLS.
//
// Behind the routes there is one server: every WebSocket and every REST
// request is a connection to the daemon's JSON-RPC server (rpc), over an
// in-process pipe where HTTP has no stream of its own, so the gateway
// applies the same envelope rules, frame limits and slow-client policy
// as the socket and holds no session logic of its own.
package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/config"
	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/pairing"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/rpc"
)

// DefaultListen is the gateway's address when none is configured.
const DefaultListen = "127.0.0.1:42617"

// HeaderTimeout bounds the reading of a request's headers (and of a TLS
// handshake); IdleTimeout how long a kept-alive connection may wait for
// its next request.
const (
	HeaderTimeout = 5 * time.Second
	IdleTimeout   = 10 * time.Second
)

// Options configure a gateway.
type Options struct {
	Config  config.Gateway
	Version string
	// Serve serves one connection of the JSON-RPC protocol (the daemon's
	// rpc.Server.ServeConn).
	Serve  func(ctx context.Context, rwc io.ReadWriteCloser, peer rpc.Peer) error
	Keeper *pairing.Keeper
	Logger *slog.Logger
	// MaxFrame is the daemon's frame limit (daemon.max_frame_bytes).
	MaxFrame int
	// Connect and Disconnect count the gateway's clients for ephemeral
	// mode (may be nil).
	Connect, Disconnect func()
	// Ping and PongWait: keepalive of WebSockets (0: 20 s and 10 s).
	Ping, PongWait time.Duration
}

// Gateway is a running gateway.
type Gateway struct {
	o      Options
	log    *slog.Logger
	ln     net.Listener
	conns  *budget
	routes *http.ServeMux
	srv    *http.Server
	url    string
	tls    *tls.Config
	ctx    context.Context // ends when the gateway stops
	cancel context.CancelFunc

	mu     sync.Mutex
	wss    map[*wsConn]struct{}
	closed bool
	wg     sync.WaitGroup // WebSocket and stream handlers, and webhook turns
}

// Start listens and serves until Close.
func Start(o Options) (*Gateway, error) {
	if o.Config.Listen == "" {
		o.Config.Listen = DefaultListen
	}
	if err := o.Config.Check(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = protocol.DefaultMaxFrame
	}
	if o.Ping <= 0 {
		o.Ping = 20 * time.Second
	}
	if o.PongWait <= 0 {
		o.PongWait = 10 * time.Second
	}
	g := &Gateway{o: o, log: o.Logger.With("surface", "gateway"), wss: map[*wsConn]struct{}{}}
	g.routes = g.mux()
	if o.Config.TLS() {
		tc, err := tlsConfig(o.Config)
		if err != nil {
			return nil, err
		}
		g.tls = tc
	}
	ln, err := net.Listen("tcp", o.Config.Listen)
	if err != nil {
		return nil, fmt.Errorf("gateway: listen on %s: %w", o.Config.Listen, err)
	}
	scheme := "http"
	g.conns = newBudget(ln, MaxConns, Reserved, PerAddress)
	ln = g.conns
	if g.tls != nil {
		scheme = "https"
		ln = tls.NewListener(ln, g.tls)
	}
	g.ln = ln
	g.url = scheme + "://" + ln.Addr().String()
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.srv = &http.Server{
		Handler:           g,
		ReadHeaderTimeout: HeaderTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(g.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return g.ctx },
		ConnContext:       withConn,
	}
	go g.srv.Serve(ln)
	g.log.Info("gateway listening", "url", g.url, "tls", g.tls != nil, "clientCerts", o.Config.ClientCA != "")
	return g, nil
}

// tlsConfig loads the certificate, and the client CA for mutual TLS.
func tlsConfig(c config.Gateway) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("gateway: tls_cert/tls_key: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.ClientCA != "" {
		pem, err := os.ReadFile(c.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("gateway: client_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("gateway: client_ca %s: no PEM certificate in it", c.ClientCA)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// URL is where the gateway listens ("http://127.0.0.1:42617").
func (g *Gateway) URL() string { return g.url }

// Close stops the gateway: no new requests; open WebSockets are closed
// with a close frame (going away), streams end; waits (bounded by ctx)
// for the handlers.
func (g *Gateway) Close(ctx context.Context) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	wss := make([]*wsConn, 0, len(g.wss))
	for w := range g.wss {
		wss = append(wss, w)
	}
	g.mu.Unlock()
	g.ln.Close()
	// Close frames first, while the connections' contexts still live (a
	// cancelled one drops the connection without its close frame).
	var closing sync.WaitGroup
	for _, w := range wss {
		closing.Add(1)
		go func() {
			defer closing.Done()
			w.c.Close(websocket.StatusGoingAway, "the daemon is stopping")
		}()
	}
	closed := make(chan struct{})
	go func() { closing.Wait(); close(closed) }()
	select {
	case <-closed:
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
	g.cancel()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := g.srv.Shutdown(sctx)
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		g.srv.Close()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return err
}

// busy counts a handler that outlives its request's normal flow, and a
// client for ephemeral mode; false once the gateway is stopping.
func (g *Gateway) busy() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	if g.o.Connect != nil {
		g.o.Connect()
	}
	return true
}

func (g *Gateway) idle() {
	if g.o.Disconnect != nil {
		g.o.Disconnect()
	}
	g.wg.Done()
}

// open connects an in-process client to the daemon's server, as peer
// label, and initializes it.
func (g *Gateway) open(ctx context.Context, label, name string, h jsonrpc.Handler, caps *protocol.ClientCapabilities) (*client.Client, error) {
	here, there := net.Pipe()
	go func() {
		err := g.o.Serve(g.ctx, there, rpc.Peer{Label: label, UID: -1, Remote: true})
		there.Close()
		g.log.Debug("gateway client ended", "peer", label, "err", err)
	}()
	if caps == nil {
		caps = &protocol.ClientCapabilities{}
	}
	if caps.MaxFrameBytes == 0 {
		caps.MaxFrameBytes = g.o.MaxFrame
	}
	c, err := client.Open(ctx, here, client.Options{ClientInfo: protocol.ClientInfo{Name: name, Version: g.o.Version},
		Capabilities: caps, Handler: h})
	if err != nil {
		here.Close()
		return nil, err
	}
	return c, nil
}
