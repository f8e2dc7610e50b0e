package eventlog

import (
	"fmt"
	"testing"
)

func TestRingKeepsWhatClientsHaveNotBeenWritten(t *testing.T) {
	var r ring
	body := func(seq int64) []byte { return []byte(fmt.Sprint(seq)) }
	for seq := int64(1); seq <= 10; seq++ {
		r.push(seq, body(seq))
	}
	r.trim(4) // every client has 1..4
	for seq := int64(1); seq <= 11; seq++ {
		b, ok := r.get(seq)
		if want := seq >= 5 && seq <= 10; ok != want || (ok && string(b) != fmt.Sprint(seq)) {
			t.Fatalf("seq %d: %q %v", seq, b, ok)
		}
	}
	r.trim(10) // emptied: the array is kept, nothing old is found in it
	if r.len() != 0 || cap(r.bodies) == 0 {
		t.Fatalf("emptied ring: %d events, capacity %d", r.len(), cap(r.bodies))
	}
	r.push(11, body(11))
	if _, ok := r.get(10); ok {
		t.Fatal("seq 10 found after the ring emptied")
	}
	if b, ok := r.get(11); !ok || string(b) != "11" {
		t.Fatalf("seq 11: %q %v", b, ok)
	}
	r.push(20, body(20)) // not consecutive: starts again at 20
	if _, ok := r.get(11); ok || r.len() != 1 {
		t.Fatalf("after a gap: %d events", r.len())
	}
	// Past the frame bound the oldest go, however far behind clients are;
	// compaction keeps every kept event where get finds it.
	for seq := int64(21); seq < 20+ringFrames+3000; seq++ {
		r.push(seq, body(seq))
		r.trim(0)
	}
	last := int64(20 + ringFrames + 3000 - 1)
	if r.len() != ringFrames || r.first != last-ringFrames+1 {
		t.Fatalf("bounded ring: %d events from %d", r.len(), r.first)
	}
	for _, seq := range []int64{r.first, r.first + 777, last} {
		if b, ok := r.get(seq); !ok || string(b) != fmt.Sprint(seq) {
			t.Fatalf("seq %d after compaction: %q %v", seq, b, ok)
		}
	}
	r.trim(last) // a large array is not kept
	if cap(r.bodies) > ringKeep {
		t.Fatalf("emptied after a burst: capacity %d kept", cap(r.bodies))
	}
}
