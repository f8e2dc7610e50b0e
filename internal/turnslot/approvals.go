package turnslot

// Approval is a question the running turn asks: the answers it takes,
// and where the one answer goes (buffered: one).
type Approval[C Client] struct {
	Options []string
	Answer  chan Answer[C]
}

// Answer is a client's answer to an approval.
type Answer[C Client] struct {
	Decision, Reason, Feedback string
	By                         C // the client that answered (nil: the daemon)
}

// Ask opens approval id; Answer takes it (false: unknown, or answered
// already: the first answer wins).
func (t *Slot[J, C]) Ask(id string, a *Approval[C]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.approvals == nil {
		t.approvals = map[string]*Approval[C]{}
	}
	t.approvals[id] = a
}

func (t *Slot[J, C]) Answer(id string) (*Approval[C], bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a, ok := t.approvals[id]
	delete(t.approvals, id)
	return a, ok
}

// Asking is an approval the running turn waits for ("": none), the
// first by id.
func (t *Slot[J, C]) Asking() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := ""
	for id := range t.approvals {
		if first == "" || id < first {
			first = id
		}
	}
	return first
}

// ApprovalOptions are the answers open approval id takes (nil: none
// open).
func (t *Slot[J, C]) ApprovalOptions(id string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.approvals[id]; a != nil {
		return a.Options
	}
	return nil
}
