package gateway

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// fakeAddrConn is one end of a pipe with a chosen remote address.
type fakeAddrConn struct {
	net.Conn
	addr string
}

func (c fakeAddrConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.ParseIP(c.addr), Port: 1} }

// closed reports whether the budget closed c's server side: a read on
// the client side then ends.
func closed(t *testing.T, client net.Conn) bool {
	t.Helper()
	client.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err := client.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

// The budget closes the oldest anonymous connection of an address past
// its share, the oldest of all past the anonymous bound, never an
// authenticated one, and refuses a newcomer only when every slot is
// authenticated.
func TestBudgetMakesRoomFromAnonymousConnections(t *testing.T) {
	b := newBudget(nil, 6, 2, 2) // 6 in all, 4 anonymous, 2 per address
	admit := func(addr string) (*budgetConn, net.Conn) {
		here, there := net.Pipe()
		t.Cleanup(func() { here.Close(); there.Close() })
		return b.admit(fakeAddrConn{Conn: there, addr: addr}), here
	}
	a1, a1c := admit("10.0.0.1")
	_, a2c := admit("10.0.0.1")
	if closed(t, a1c) || closed(t, a2c) {
		t.Fatal("closed within the bounds")
	}
	_, a3c := admit("10.0.0.1") // a third from one address: its oldest goes
	if !closed(t, a1c) || closed(t, a3c) {
		t.Fatal("past the per-address bound, the address's oldest connection was not the one closed")
	}
	a1.Close() // closing an evicted connection frees nothing twice
	if total, anon := b.counts(); total != 2 || anon != 2 {
		t.Fatalf("counts %d/%d, want 2/2", total, anon)
	}
	p1, _ := admit("10.0.0.2")
	p1.authenticated()
	_, b1c := admit("10.0.0.3")
	_, b2c := admit("10.0.0.4")
	// Four anonymous now (a2, a3, b1, b2): the next evicts the oldest of all, a2.
	_, c1c := admit("10.0.0.5")
	if !closed(t, a2c) || closed(t, b1c) || closed(t, c1c) {
		t.Fatal("past the anonymous bound, the oldest anonymous connection was not the one closed")
	}
	for _, c := range []*budgetConn{p1} {
		if c.released {
			t.Fatal("an authenticated connection was closed to make room")
		}
	}
	if total, anon := b.counts(); total != 5 || anon != 4 {
		t.Fatalf("counts %d/%d, want 5/4", total, anon)
	}
	_ = b2c
	// Fill every slot with authenticated connections: a newcomer is refused.
	var held []*budgetConn
	for i := range 5 {
		c, _ := admit("10.0.1." + string(rune('1'+i)))
		if c == nil {
			t.Fatalf("admission %d refused with anonymous connections to close", i)
		}
		c.authenticated()
		held = append(held, c)
	}
	if total, anon := b.counts(); total != 6 || anon != 0 {
		t.Fatalf("counts %d/%d, want 6/0", total, anon)
	}
	if c, _ := admit("10.0.2.1"); c != nil {
		t.Fatal("admitted past the budget with every slot authenticated")
	}
	held[0].Close()
	if c, _ := admit("10.0.2.1"); c == nil {
		t.Fatal("refused after an authenticated connection closed")
	}
}

// counts reports the connections held: all, and anonymous.
func (b *budget) counts() (total, anon int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total, b.anon.Len()
}
