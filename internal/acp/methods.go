package acp

import (
	"context"
	"encoding/json"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// method serves one ACP method: it runs on the read loop and answers
// either at once or with a jsonrpc.Later.
type method func(b *Bridge, req *jsonrpc.Request) (any, error)

// methods is every method the bridge serves, each built from a typed
// function by def (or inline for those that must run on the read loop).
// A method not here is answered -32601.
var methods = map[string]method{
	"initialize":   inline((*Bridge).initialize),
	"authenticate": inline(func(*Bridge, *struct{}) (any, error) { return map[string]any{}, nil }),
	"session/new": def(func(b *Bridge, ctx context.Context, p *newParams) (any, error) {
		return b.newSession(ctx, p.Cwd, p.specs)
	}),
	"session/load": def(func(b *Bridge, ctx context.Context, p *loadParams) (any, error) {
		return b.load(ctx, p.SessionID, max(p.Meta.Zeroclaw.SinceSeq, 0), true, p.specs)
	}),
	// resume is load without the replay: the editor has the history.
	"session/resume": def(func(b *Bridge, ctx context.Context, p *loadParams) (any, error) {
		return b.load(ctx, p.SessionID, 0, false, p.specs)
	}),
	"session/fork": def(func(b *Bridge, ctx context.Context, p *newParams) (any, error) {
		return b.fork(ctx, p.SessionID, p.specs)
	}),
	"session/prompt": def((*Bridge).prompt),
	methodSteering:   def((*Bridge).steer),
	methodGoal:       def((*Bridge).goal),
	"session/list":   def((*Bridge).list),
	"session/cancel": relay(protocol.MethodSessionCancel, nil),
	"session/close":  relay(protocol.MethodSessionClose, map[string]any{}),
	"session/delete": relay(protocol.MethodSessionDelete, map[string]any{}),
	"session/set_config_option": def(func(b *Bridge, ctx context.Context, p *configParams) (any, error) {
		return b.setConfigOption(ctx, p.SessionID, p.ConfigID, p.Value)
	}),
}

// preparer is params with work to do on the read loop once decoded:
// checks whose error answers at once, a place in the prompt order.
type preparer interface{ prepare(b *Bridge) error }

// def builds a method from f: the params are decoded into P (and
// prepared) on the read loop, and f runs off it.
func def[P any](f func(b *Bridge, ctx context.Context, p *P) (any, error)) method {
	return func(b *Bridge, req *jsonrpc.Request) (any, error) {
		p, err := decodeInto[P](b, req)
		if err != nil {
			return nil, err
		}
		return jsonrpc.Later(func(ctx context.Context) (any, error) { return f(b, ctx, p) }), nil
	}
}

// inline builds a method that runs on the read loop (initialize: what it
// learns of the editor applies to the requests after it).
func inline[P any](f func(b *Bridge, p *P) (any, error)) method {
	return func(b *Bridge, req *jsonrpc.Request) (any, error) {
		p, err := decodeInto[P](b, req)
		if err != nil {
			return nil, err
		}
		return f(b, p)
	}
}

func decodeInto[P any](b *Bridge, req *jsonrpc.Request) (*P, error) {
	p := new(P)
	if err := decode(req, p); err != nil {
		return nil, err
	}
	if pr, ok := any(p).(preparer); ok {
		if err := pr.prepare(b); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// relay passes a request naming one session on to the daemon's method of
// the same meaning, answering ok when it succeeds.
func relay(daemonMethod string, ok any) method {
	return def(func(b *Bridge, ctx context.Context, p *protocol.SessionRef) (any, error) {
		d, err := b.daemon(ctx)
		if err != nil {
			return nil, err
		}
		if err := d.Call(ctx, daemonMethod, p, nil); err != nil {
			return nil, acpError(err)
		}
		return ok, nil
	})
}

// newParams are session/new's and session/fork's (fork names its source).
type newParams struct {
	SessionID  string      `json:"sessionId"`
	Cwd        string      `json:"cwd"`
	McpServers []mcpServer `json:"mcpServers"`
	specs      []protocol.MCPServerSpec
}

func (p *newParams) prepare(*Bridge) (err error) {
	p.specs, err = mcpSpecs(p.McpServers)
	return err
}

// loadParams are session/load's and session/resume's. A client that saw
// events before (each update carries its seq in _meta.zeroclaw.seq) may
// ask for only those after it.
type loadParams struct {
	SessionID  string      `json:"sessionId"`
	McpServers []mcpServer `json:"mcpServers"`
	Meta       struct {
		Zeroclaw struct {
			SinceSeq int64 `json:"sinceSeq"`
		} `json:"zeroclaw"`
	} `json:"_meta"`
	specs []protocol.MCPServerSpec
}

func (p *loadParams) prepare(*Bridge) (err error) {
	p.specs, err = mcpSpecs(p.McpServers)
	return err
}

// promptParams are session/prompt's; its place in the order of the
// editor's prompts and steers is taken as it is read.
type promptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
	turn      *order
}

func (p *promptParams) prepare(b *Bridge) error {
	p.turn = b.inOrder()
	return nil
}

// steerParams are _session/steering's: a prompt, and what to do when no
// turn runs (the extension's default starts one).
type steerParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
	Meta      struct {
		Steering struct {
			IdleBehavior string `json:"idleBehavior"`
		} `json:"steering"`
	} `json:"_meta"`
	idle string
	turn *order
}

func (p *steerParams) prepare(b *Bridge) error {
	switch p.Meta.Steering.IdleBehavior {
	case "":
		p.idle = "start"
	case "promptRequired":
		p.idle = "promptRequired"
	default:
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, nil, "invalid params: _meta.steering.idleBehavior %q is not supported (promptRequired is)", p.Meta.Steering.IdleBehavior)
	}
	p.turn = b.inOrder()
	return nil
}

type listParams struct {
	Cwd    *string `json:"cwd"`
	Cursor *string `json:"cursor"`
}

type configParams struct {
	SessionID string `json:"sessionId"`
	ConfigID  string `json:"configId"`
	Value     any    `json:"value"`
}

// initParams are initialize's.
type initParams struct {
	ProtocolVersion    *int `json:"protocolVersion"`
	ClientCapabilities struct {
		FS          *protocol.FSCapabilities `json:"fs"`
		Elicitation *struct {
			Form *json.RawMessage `json:"form"`
			URL  *json.RawMessage `json:"url"`
		} `json:"elicitation"`
		Terminal bool `json:"terminal"`
	} `json:"clientCapabilities"`
	ClientInfo struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
}
