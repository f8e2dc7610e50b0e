package background

import (
	"strings"
	"testing"
)

// Offsets stay absolute across an overflow: a reader behind the ring is
// told how much it missed and goes on from the oldest byte kept.
func TestRingOffsetsAcrossOverflow(t *testing.T) {
	r := NewRing(10)
	r.Write([]byte("0123456789"))
	c := r.Read(0, 4)
	if string(c.Data) != "0123" || c.Next != 4 || c.Dropped != 0 {
		t.Fatalf("first read %+v", c)
	}
	r.Write([]byte("abcdef")) // drops 0..5
	c = r.Read(c.Next, 0)
	if string(c.Data) != "6789abcdef" || c.Dropped != 2 || c.Next != 16 {
		t.Fatalf("after the overflow %+v (%q)", c, c.Data)
	}
	r.Write([]byte(strings.Repeat("x", 25))) // larger than the ring
	c = r.Read(16, 0)
	if string(c.Data) != strings.Repeat("x", 10) || c.Dropped != 15 || c.Next != 41 || r.Total() != 41 {
		t.Fatalf("a write larger than the ring %+v", c)
	}
	if c = r.Read(41, 0); len(c.Data) != 0 || c.Next != 41 || c.Dropped != 0 {
		t.Fatalf("at the end %+v", c)
	}
	if c = r.Read(99, 0); c.Next != 41 {
		t.Fatalf("past the end %+v", c)
	}
}

// Random writes and reads against the whole output kept aside: every
// read gives the bytes at its offsets, or says how many are gone.
func TestRingAgainstTheWholeOutput(t *testing.T) {
	for _, skipped := range []int64{0, 7} {
		r := NewRing(64)
		r.skip(skipped)
		whole := []byte(strings.Repeat("?", int(skipped)))
		seed := uint32(1)
		next := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
		for i := range 2000 {
			p := make([]byte, next(150))
			for j := range p {
				p[j] = byte('a' + (i+j)%26)
			}
			r.Write(p)
			whole = append(whole, p...)
			since := int64(next(len(whole) + 1))
			c := r.Read(since, next(100))
			oldest := max(skipped, int64(len(whole))-64)
			wantDropped := max(0, oldest-since)
			from := since + wantDropped
			if c.Dropped != wantDropped || string(c.Data) != string(whole[from:from+int64(len(c.Data))]) || c.Next != from+int64(len(c.Data)) {
				t.Fatalf("skip %d, write %d: read from %d gave %+v (%q), want dropped %d, bytes of %q", skipped, i, since, c, c.Data, wantDropped, whole[from:])
			}
		}
	}
}
