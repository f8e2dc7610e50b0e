package checkpoint

import (
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// Changes is what turn n changed (n = 0: the whole session, every turn
// not rewound, each path from its first state to its last).
func (s *Store) Changes(n int) ([]Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n != 0 {
		for _, t := range s.turns {
			if t.N == n {
				return t.Changes, nil
			}
		}
		if len(s.turns) > 0 && n < s.turns[0].N && n >= 1 {
			return nil, fmt.Errorf("%w: turn %d", ErrPruned, n)
		}
		return nil, fmt.Errorf("%w: %d", ErrNoTurn, n)
	}
	net := map[string]*Change{}
	var order []string
	for _, t := range s.turns {
		if t.Rewound {
			continue
		}
		for _, c := range t.Changes {
			if prev := net[c.Path]; prev != nil {
				prev.After = c.After
				continue
			}
			cc := c
			net[c.Path] = &cc
			order = append(order, c.Path)
		}
	}
	sort.Strings(order)
	var out []Change
	for _, p := range order {
		if c := net[p]; !c.Before.same(c.After) {
			out = append(out, *c)
		}
	}
	return out, nil
}

// Diff is a unified diff of what turn n changed (0: the whole session),
// as git would print it.
func (s *Store) Diff(n int) (string, error) {
	changes, err := s.Changes(n)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range changes {
		s.diffOne(&b, c)
	}
	return b.String(), nil
}

func (s *Store) diffOne(b *strings.Builder, c Change) {
	fmt.Fprintf(b, "diff --zeroclaw a/%s b/%s\n", c.Path, c.Path)
	switch {
	case !c.Before.Exists:
		fmt.Fprintf(b, "new file mode %s\n", gitMode(c.After.Mode))
	case !c.After.Exists:
		fmt.Fprintf(b, "deleted file mode %s\n", gitMode(c.Before.Mode))
	case c.Before.Mode != c.After.Mode:
		fmt.Fprintf(b, "old mode %s\nnew mode %s\n", gitMode(c.Before.Mode), gitMode(c.After.Mode))
	}
	before, okB := s.content(c.Before)
	after, okA := s.content(c.After)
	if !okB || !okA {
		fmt.Fprintf(b, "(content not kept: larger than max_file_bytes, or unreadable)\n")
		return
	}
	if bytes.Equal(before, after) {
		return
	}
	if binary(before) || binary(after) {
		fmt.Fprintf(b, "Binary files a/%s and b/%s differ\n", c.Path, c.Path)
		return
	}
	from, to := "a/"+c.Path, "b/"+c.Path
	if !c.Before.Exists {
		from = "/dev/null"
	}
	if !c.After.Exists {
		to = "/dev/null"
	}
	b.WriteString(udiff.Unified(from, to, string(before), string(after)))
}

// content is a state's bytes ("" for an absent file); false when they
// were not kept.
func (s *Store) content(st State) ([]byte, bool) {
	if !st.Exists {
		return nil, true
	}
	if st.Hash == "" {
		return nil, false
	}
	b, err := s.obj.get(st.Hash)
	return b, err == nil
}

func binary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) }

// gitMode writes a mode as git does (100644, 100755, 120000).
func gitMode(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "120000"
	}
	if m.Perm()&0o111 != 0 {
		return "100755"
	}
	return "100644"
}
