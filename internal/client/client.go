// Package client is the typed Go client of the zeroclaw daemon, shared by
// the CLI, the ACP bridge and the tests.
package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"syscall"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/transport"
)

// ErrNoDaemon is returned by Dial when nothing listens at the endpoint.
var ErrNoDaemon = errors.New("no daemon is running")

// Options configure a client connection. The zero value initializes with
// no client info and refuses daemon->client requests.
type Options struct {
	ClientInfo   protocol.ClientInfo
	ClientID     string
	Capabilities *protocol.ClientCapabilities
	// Handler serves notifications and requests from the daemon.
	Handler jsonrpc.Handler
}

// Client is one initialized connection to the daemon.
type Client struct {
	conn *jsonrpc.Conn
	done chan struct{}
	// Init is the daemon's answer to initialize.
	Init protocol.InitializeResult
}

// Dial connects to the daemon at endpoint and performs initialize.
func Dial(ctx context.Context, endpoint string, o Options) (*Client, error) {
	nc, err := transport.Dial(ctx, endpoint)
	if err != nil {
		if isNoDaemon(err) {
			return nil, fmt.Errorf("%w at %s", ErrNoDaemon, endpoint)
		}
		return nil, fmt.Errorf("connect to %s: %w", endpoint, err)
	}
	return Open(ctx, nc, o)
}

// Open performs initialize on an established stream (a socket, or an
// in-process pipe to the daemon's server) and returns the client; it
// closes nc when initialize fails.
func Open(ctx context.Context, nc net.Conn, o Options) (*Client, error) {
	c := New(nc, o.Handler)
	v := protocol.Version
	// Say how big a frame we read, so the daemon never sends a bigger one.
	caps := protocol.ClientCapabilities{}
	if o.Capabilities != nil {
		caps = *o.Capabilities
	}
	if caps.MaxFrameBytes == 0 {
		caps.MaxFrameBytes = jsonrpc.DefaultMaxFrame
	}
	p := protocol.InitializeParams{ProtocolVersion: &v, ClientID: o.ClientID, ClientCapabilities: &caps}
	if o.ClientInfo.Name != "" {
		p.ClientInfo = &o.ClientInfo
	}
	if err := c.Call(ctx, protocol.MethodInitialize, p, &c.Init); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

// New runs a client on an established stream without initializing it.
func New(nc net.Conn, h jsonrpc.Handler) *Client {
	c := &Client{conn: jsonrpc.NewConn(nc, h, jsonrpc.Options{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		_ = c.conn.Run(context.Background())
	}()
	return c
}

func isNoDaemon(err error) bool {
	// No socket file, or no pipe (Windows: ERROR_FILE_NOT_FOUND), match
	// fs.ErrNotExist; a socket file nobody listens on is refused.
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)
}

// Call calls a daemon method.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// Start sends a request now, its answer awaited with the Pending's
// Wait: requests started one after another reach the daemon in order.
func (c *Client) Start(method string, params any) (*jsonrpc.Pending, error) {
	return c.conn.Start(method, params)
}

// Notify sends a notification to the daemon.
func (c *Client) Notify(method string, params any) error { return c.conn.Notify(method, params) }

// Status calls status.
func (c *Client) Status(ctx context.Context) (*protocol.StatusResult, error) {
	var r protocol.StatusResult
	if err := c.Call(ctx, protocol.MethodStatus, struct{}{}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Shutdown asks the daemon to stop.
func (c *Client) Shutdown(ctx context.Context) error {
	return c.Call(ctx, protocol.MethodShutdown, struct{}{}, nil)
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close closes the connection and waits for its reader to stop.
func (c *Client) Close() error {
	c.conn.Close()
	<-c.done
	return nil
}
