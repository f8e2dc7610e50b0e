package jsonrpc

import (
	"context"
	"testing"
)

// boundHandler answers "slow" later, once release lets it; "park" later
// too, but it says first that it only waits (Waits); "block" as a Cheap
// that holds the read loop until release lets it; anything else at once
// with its params.
func boundHandler(release chan struct{}) HandlerFunc {
	return func(ctx context.Context, r *Request) (any, error) {
		switch r.Method {
		case "slow":
			return Later(func(ctx context.Context) (any, error) { <-release; return "slow done", nil }), nil
		case "park":
			return Later(func(ctx context.Context) (any, error) { Waits(ctx); <-release; return "parked", nil }), nil
		case "block":
			return Cheap(func(ctx context.Context) (any, error) { <-release; return "unblocked", nil }), nil
		}
		return r.Params, nil
	}
}

// Past MaxCalls calls in flight the read loop waits: with two slow calls
// running, the echo behind them is read only once one of them has been
// answered, so its answer comes after that one's (without the bound it is
// answered at once, first).
func TestCallsInFlightBounded(t *testing.T) {
	release := make(chan struct{})
	_, p := startConn(t, boundHandler(release), Options{MaxCalls: 2})
	p.send(`{"jsonrpc":"2.0","method":"slow","id":1}`)
	p.send(`{"jsonrpc":"2.0","method":"slow","id":2}`)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		p.conn.Write([]byte(`{"jsonrpc":"2.0","method":"echo","params":[3],"id":3}` + "\n"))
	}()
	release <- struct{}{}
	if got := canon(t, p.next("a slow call")); got != `{"id":1,"jsonrpc":"2.0","result":"slow done"}` && got != `{"id":2,"jsonrpc":"2.0","result":"slow done"}` {
		t.Fatalf("got %s first, want a slow call's answer (the echo must wait for room)", got)
	}
	if got := canon(t, p.next("the echo")); got != `{"id":3,"jsonrpc":"2.0","result":[3]}` {
		t.Fatalf("got %s, want the echo", got)
	}
	<-sent
	release <- struct{}{}
	p.next("the other slow call")
}

// A call that only waits (Waits) leaves the bound of running calls: two
// parked calls with MaxCalls 2 do not keep the next call from being read.
func TestWaitingCallsLeaveTheBound(t *testing.T) {
	release := make(chan struct{})
	_, p := startConn(t, boundHandler(release), Options{MaxCalls: 2})
	p.send(`{"jsonrpc":"2.0","method":"park","id":1}`)
	p.send(`{"jsonrpc":"2.0","method":"park","id":2}`)
	p.send(`{"jsonrpc":"2.0","method":"echo","params":[3],"id":3}`)
	if got := canon(t, p.next("the echo")); got != `{"id":3,"jsonrpc":"2.0","result":[3]}` {
		t.Fatalf("got %s, want the echo", got)
	}
	close(release)
	p.next("a parked call")
	p.next("the other parked call")
}

// A Cheap call that holds the read loop past PreemptAfter is preempted:
// the frames behind it are read and answered on another goroutine while
// it still runs, and it is answered once it ends.
func TestCheapCallPreempted(t *testing.T) {
	release := make(chan struct{})
	_, p := startConn(t, boundHandler(release), Options{})
	p.send(`{"jsonrpc":"2.0","method":"block","id":1}`)
	p.send(`{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}`)
	if got := canon(t, p.next("the echo")); got != `{"id":2,"jsonrpc":"2.0","result":[2]}` {
		t.Fatalf("got %s, want the echo while the blocked call runs", got)
	}
	close(release)
	if got := canon(t, p.next("the blocked call")); got != `{"id":1,"jsonrpc":"2.0","result":"unblocked"}` {
		t.Fatalf("got %s", got)
	}
	// The loop goes on where it went: more frames, more answers.
	p.send(`{"jsonrpc":"2.0","method":"block","id":3}`)
	if got := canon(t, p.next("a cheap call that does not block")); got != `{"id":3,"jsonrpc":"2.0","result":"unblocked"}` {
		t.Fatalf("got %s", got)
	}
}
