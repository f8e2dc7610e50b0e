package rpc

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// method is one entry of the method table, built from a typed function
// by def (or defWait): the entry decodes the params into the function's
// P, maps its errors through the one table (wire), and says where it
// runs. A new method is one entry here and its function; initialize's
// capabilities, the unknown-method answer and the schema (P and R) come
// from the table.
type method struct {
	name string
	// params and result are the Go types the method's params are
	// decoded into and its result encoded from (nil params: none); the
	// published schema is written from them.
	params, result reflect.Type
	// ownerOnly: only the daemon's own user may call it, on its socket
	// (so never a gateway client, whose uid is unknown): -32003 else.
	ownerOnly bool
	// inline: a call runs on the connection's read loop before the next
	// frame is read (initialize, which every later call depends on; it
	// never waits). cheap: it runs on the read loop with no hand-off,
	// and should it wait after all (a lock held long elsewhere), the
	// preempter gives the loop to another goroutine; a cheap call about a
	// session holds its lane meanwhile, so its session's calls keep
	// their order (status; the answers to a running turn). Every other
	// call runs on a goroutine of its own: one hand-off.
	inline, cheap bool
	// lane names the lane of a call that keeps its order by something
	// other than its session (an upload's parts); nil: its session's.
	lane func(p any) string
	// decode decodes the params and names the session they concern
	// ("": none).
	decode func(raw json.RawMessage) (p any, session string, err error)
	run    func(ctx context.Context, b *binding, p any) (any, error)
	// after runs once the answer is written (shutdown's stop).
	after func(b *binding)
}

// handler is a method's function: its params decoded, its result or an
// error of any layer (wire maps it).
type handler[P, R any] func(b *binding, ctx context.Context, p *P) (*R, error)

// waiting is a result that comes later: the function took the call (in
// its session's order) and the answer is what wait returns.
type waiting func(ctx context.Context) (any, error)

// noParams is the params of a method that takes none.
type noParams struct{}

// option tunes an entry.
type option func(*method)

var (
	// ownerOnly: only the daemon's own user, on its socket.
	ownerOnly option = func(m *method) { m.ownerOnly = true }
	// inline: on the read loop, the next frame read after it.
	inline option = func(m *method) { m.inline = true }
	// cheap: on the read loop, preempted should it wait.
	cheap option = func(m *method) { m.cheap = true }
	// optionalSession: the params' sessionId may be absent.
	optionalSession option = func(m *method) { m.decode = decoder(m.params, false) }
)

// laneOf: the call's lane is the one key names ("": none).
func laneOf[P any](key func(*P) string) option {
	return func(m *method) { m.lane = func(p any) string { return key(p.(*P)) } }
}

// then runs f once the answer is written.
func then(f func(*binding)) option { return func(m *method) { m.after = f } }

// def makes a method's entry from its function.
func def[P, R any](name string, h handler[P, R], opts ...option) method {
	m := entry[P, R](name)
	m.run = func(ctx context.Context, b *binding, p any) (any, error) {
		r, err := h(b, ctx, p.(*P))
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// defWait makes the entry of a method whose answer comes later (a
// prompt's, when its turn ends): h takes the call and returns the wait.
func defWait[P, R any](name string, h func(b *binding, ctx context.Context, p *P) (waiting, error), opts ...option) method {
	m := entry[P, R](name)
	m.run = func(ctx context.Context, b *binding, p any) (any, error) {
		w, err := h(b, ctx, p.(*P))
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	for _, o := range opts {
		o(&m)
	}
	return m
}

func entry[P, R any](name string) method {
	m := method{name: name, result: typeOf[R]()}
	if t := typeOf[P](); t != typeOf[noParams]() {
		m.params = t
	}
	m.decode = decoder(typeOf[P](), true)
	return m
}

// decoder decodes params into a new t; a t with a SessionID member names
// the session, required unless told otherwise.
func decoder(t reflect.Type, sessionRequired bool) func(json.RawMessage) (any, string, error) {
	if t == nil {
		t = typeOf[noParams]()
	}
	sf, hasSession := t.FieldByName("SessionID")
	return func(raw json.RawMessage) (any, string, error) {
		v := reflect.New(t)
		// No params, or none given ({}: status's), decode to nothing.
		if len(raw) != 2 || raw[0] != '{' || raw[1] != '}' {
			if err := protocol.Decode(raw, v.Interface()); err != nil {
				return nil, "", err
			}
		}
		sid := ""
		if hasSession {
			sid = v.Elem().FieldByIndex(sf.Index).String()
			if sid == "" && sessionRequired {
				return nil, "", &protocol.ParamsError{Field: "sessionId", Reason: "is required"}
			}
		}
		return v.Interface(), sid, nil
	}
}

// methodTable lists every method served, in the order initialize's
// capabilities show them, and indexes them by name. Built at the first
// use (a function value: initialize lists the table), so a process that
// serves nothing (the CLI's commands, the ACP bridge) never builds it.
// (Set in init: initialize, in the table, lists the table.)
var methodTable func() ([]method, map[string]*method)

func init() { methodTable = sync.OnceValues(buildTable) }

func buildTable() ([]method, map[string]*method) {
	table := []method{
		def(protocol.MethodInitialize, (*binding).initialize, inline),
		def(protocol.MethodStatus, (*binding).statusReq, cheap),
		def(protocol.MethodShutdown, (*binding).shutdownReq, ownerOnly, then(func(b *binding) {
			if b.srv.shutdown != nil {
				b.srv.shutdown()
			}
		})),
		def(protocol.MethodReload, (*binding).reloadReq, ownerOnly),
		def(protocol.MethodGatewayPair, (*binding).gatewayPair, ownerOnly),
		def(protocol.MethodGatewayTokens, (*binding).gatewayTokens, ownerOnly),
		def(protocol.MethodGatewayRevoke, (*binding).gatewayRevoke, ownerOnly),
		def(protocol.MethodSessionNew, (*binding).sessionNew, optionalSession),
		defWait[protocol.SessionPromptParams, protocol.SessionPromptResult](protocol.MethodSessionPrompt, (*binding).sessionPrompt),
		defWait[protocol.SessionAwaitParams, protocol.SessionPromptResult](protocol.MethodSessionAwait, (*binding).sessionAwait),
		def(protocol.MethodSessionCancel, (*binding).sessionCancel, cheap),
		def(protocol.MethodSessionClose, (*binding).sessionClose),
		def(protocol.MethodSessionApprove, (*binding).sessionApprove, cheap),
		def(protocol.MethodSessionList, (*binding).sessionList),
		def(protocol.MethodSessionHistory, (*binding).sessionHistory),
		def(protocol.MethodSessionDelete, (*binding).sessionDelete),
		def(protocol.MethodSessionEvent, (*binding).sessionEvent),
		def(protocol.MethodSessionGet, (*binding).sessionGet),
		def(protocol.MethodSessionCompact, (*binding).sessionCompact),
		def(protocol.MethodSessionConfigure, (*binding).sessionConfigure),
		def(protocol.MethodModels, (*binding).models),
		def(protocol.MethodFileAttach, (*binding).fileAttach),
		// An upload's parts write to disk: off the read loop, in order
		// per upload (a first part, naming none, starts one).
		def(protocol.MethodFileUpload, (*binding).fileUpload, laneOf(func(p *protocol.FileUploadParams) string {
			if p.UploadID == "" {
				return ""
			}
			return "upload " + p.UploadID // not a session id: those have no space
		})),
		def(protocol.MethodSessionRename, (*binding).sessionRename),
		def(protocol.MethodSessionWatch, (*binding).sessionWatch),
		// A steer is answered once its input_update is committed: off
		// the read loop, in its session's lane.
		def(protocol.MethodSessionSteer, (*binding).sessionSteer),
		def(protocol.MethodSessionQueue, (*binding).sessionQueue),
		def(protocol.MethodSessionQueueRemove, (*binding).sessionQueueRemove),
		def(protocol.MethodSessionQueueClear, (*binding).sessionQueueClear),
		def(protocol.MethodSessionQueueSteer, (*binding).sessionQueueSteer),
		def(protocol.MethodProcessList, (*binding).processList),
		defWait[protocol.ProcessOutputParams, protocol.ProcessOutputResult](protocol.MethodProcessOutput, (*binding).processOutput),
		def(protocol.MethodProcessKill, (*binding).processKill),
		def(protocol.MethodProcessWrite, (*binding).processWrite),
		def(protocol.MethodSessionCheckpoints, (*binding).sessionCheckpoints),
		def(protocol.MethodSessionRewind, (*binding).sessionRewind),
		def(protocol.MethodSessionDiff, (*binding).sessionDiff),
		def(protocol.MethodSessionFork, (*binding).sessionFork),
		def(protocol.MethodPermissionsList, (*binding).permissionsList, ownerOnly),
		def(protocol.MethodPermissionsRevoke, (*binding).permissionsRevoke, ownerOnly),
		def(protocol.MethodSessionMCP, (*binding).sessionMCP),
		def(protocol.MethodSessionExport, (*binding).sessionExport),
		def(protocol.MethodSessionGoal, (*binding).sessionGoal),
		def(protocol.MethodSessionGoalPause, (*binding).sessionGoalPause),
		def(protocol.MethodSessionGoalResume, (*binding).sessionGoalResume),
		def(protocol.MethodSessionGoalClear, (*binding).sessionGoalClear),
		def(protocol.MethodScheduleCreate, (*binding).scheduleCreate, optionalSession),
		def(protocol.MethodScheduleList, (*binding).scheduleList),
		def(protocol.MethodScheduleUpdate, (*binding).scheduleUpdate, optionalSession),
		def(protocol.MethodScheduleDelete, (*binding).scheduleDelete),
		def(protocol.MethodScheduleRun, (*binding).scheduleRun),
	}
	byName := make(map[string]*method, len(table))
	for i := range table {
		if byName[table[i].name] != nil {
			panic("rpc: method " + table[i].name + " twice in the table")
		}
		byName[table[i].name] = &table[i]
	}
	return table, byName
}

// Methods lists the methods served, in the table's order (initialize's
// capabilities).
func Methods() []string {
	table, _ := methodTable()
	out := make([]string, len(table))
	for i, m := range table {
		out[i] = m.name
	}
	return out
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// lanes keep one connection's calls about one session in the order they
// came: each is taken (run until it answers, or until it returns what it
// waits for) only after the one before it, so a session/prompt sent
// right behind its session/new finds the session attached. Calls about
// other sessions, or none, never wait on a lane.
type lanes struct {
	mu   sync.Mutex
	tail map[string]chan struct{} // closed when the last call of the lane is taken
}

// ticket is one call's place in its lane.
type ticket struct {
	l          *lanes
	key        string
	prev, mine chan struct{}
}

// busy reports whether a call of session key is still to be taken.
func (l *lanes) busy(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tail[key] != nil
}

// enter takes the next place in key's lane (nil for no session).
func (l *lanes) enter(key string) *ticket {
	if key == "" {
		return nil
	}
	mine := make(chan struct{})
	l.mu.Lock()
	if l.tail == nil {
		l.tail = map[string]chan struct{}{}
	}
	prev := l.tail[key]
	l.tail[key] = mine
	l.mu.Unlock()
	return &ticket{l: l, key: key, prev: prev, mine: mine}
}

// wait waits until the call before it was taken (or ctx ends).
func (t *ticket) wait(ctx context.Context) error {
	if t == nil || t.prev == nil {
		return nil
	}
	select {
	case <-t.prev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave lets the next call of the lane go: at once when this one was
// taken, else once the one before it is (the order holds even when a
// call gives up waiting).
func (t *ticket) leave() {
	if t == nil {
		return
	}
	done := func() {
		close(t.mine)
		t.l.mu.Lock()
		if t.l.tail[t.key] == t.mine {
			delete(t.l.tail, t.key)
		}
		t.l.mu.Unlock()
	}
	if t.prev == nil {
		done()
		return
	}
	select {
	case <-t.prev:
		done()
	default:
		go func() { <-t.prev; done() }()
	}
}

// call runs one call of m with its decoded params p: on the read loop
// when m says so (a cheap call about a session only while this
// connection is attached to it, so that the session is live and the
// call's errors need not read the store to say whether it is stored: a
// session another client closed has detached it, and the call goes off
// the loop; and only when nothing waits
// in its lane), else on its own goroutine, after the calls before it in
// its lane (its session's, unless m names another).
func (b *binding) call(ctx context.Context, m *method, p any, sid string) (any, error) {
	if m.inline {
		res, err := m.run(ctx, b, p)
		return b.answer(m, res, err)
	}
	key := sid
	if m.lane != nil {
		key = m.lane(p)
	}
	if m.cheap && (sid == "" || (b.client.Attached(sid) && !b.lanes.busy(key))) {
		// Its lane is held while it runs: should the preempter give the
		// read loop away meanwhile, its session's next calls wait.
		t := b.lanes.enter(key)
		return jsonrpc.Cheap(func(ctx context.Context) (any, error) {
			res, err := m.run(ctx, b, p)
			t.leave()
			return b.answer(m, res, err)
		}), nil
	}
	t := b.lanes.enter(key)
	return jsonrpc.Later(func(ctx context.Context) (any, error) {
		if err := t.wait(ctx); err != nil {
			t.leave()
			return nil, err
		}
		res, err := m.run(ctx, b, p)
		t.leave()
		if w, ok := res.(waiting); ok && err == nil {
			// Taken: what is left only waits (a turn's end), and must
			// not keep the connection's next calls from being read.
			jsonrpc.Waits(ctx)
			res, err = w(ctx)
		}
		return b.answer(m, res, err)
	}), nil
}

// answer is a call's answer: its error through the one table, its
// result with what runs after it is written.
func (b *binding) answer(m *method, res any, err error) (any, error) {
	if err != nil {
		return nil, wire(err)
	}
	if m.after != nil {
		return jsonrpc.Then{Result: res, After: func() { m.after(b) }}, nil
	}
	return res, nil
}
