package eventlog

// Bounds of a session's memory of recent events: those committed but not
// yet written to every attached client. Past them, a client that is
// behind reads from the store instead. The frame bound matches the byte
// bound for a streamed chunk's event (~130 bytes): at 16,384 it was the
// tighter one, and eight readers sharing two cores fell behind it and
// read from the store (a sixth of the CPU of an eight-client stream).
const (
	ringBytes  = 8 << 20
	ringFrames = 65536
)

// ring holds consecutive recent events: seq first+i is bodies[head+i].
type ring struct {
	first  int64
	bodies [][]byte
	head   int
	bytes  int
}

func (r *ring) len() int { return len(r.bodies) - r.head }

func (r *ring) push(seq int64, body []byte) {
	if r.len() == 0 || seq != r.first+int64(r.len()) {
		clear(r.bodies)
		r.bodies, r.head, r.bytes, r.first = r.bodies[:0], 0, 0, seq
	}
	r.bodies = append(r.bodies, body)
	r.bytes += len(body)
}

// trim drops events every client has been written (seq <= low) and the
// oldest beyond the bounds.
func (r *ring) trim(low int64) {
	for r.len() > 0 && (r.first <= low || r.bytes > ringBytes || r.len() > ringFrames) {
		r.bytes -= len(r.bodies[r.head])
		r.bodies[r.head] = nil
		r.head++
		r.first++
	}
	if r.len() == 0 {
		// Emptied: a small array is kept for the next events (no
		// allocation per event while clients keep up); a large one, left
		// by a burst, goes.
		if cap(r.bodies) > ringKeep {
			r.bodies = nil
		} else {
			clear(r.bodies)
			r.bodies = r.bodies[:0]
		}
		r.head, r.bytes = 0, 0
	} else if r.head > 1024 && r.head > len(r.bodies)/2 {
		n := copy(r.bodies, r.bodies[r.head:])
		clear(r.bodies[n:])
		r.bodies, r.head = r.bodies[:n], 0
	}
}

// ringKeep is the most slots an emptied ring keeps.
const ringKeep = 64

func (r *ring) get(seq int64) ([]byte, bool) {
	i := seq - r.first
	if r.len() == 0 || i < 0 || i >= int64(r.len()) {
		return nil, false
	}
	return r.bodies[r.head+int(i)], true
}
