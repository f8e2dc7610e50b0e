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
