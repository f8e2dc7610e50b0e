package permission

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/zeroclaw/zeroclaw/internal/atomicfile"
)

// Store keeps the rules made from "always" answers, per project
// directory, in one JSON file (0600) of the data directory, replaced
// whole at each change.
type Store struct {
	path  string
	mu    sync.Mutex
	rules []Rule
}

// OpenStore reads the stored rules at path (none when it is not there).
func OpenStore(path string) (*Store, error) {
	s := &Store{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &s.rules)
	}
	if err != nil {
		return nil, fmt.Errorf("permissions %s: %w", path, err)
	}
	return s, nil
}

// For is the rules stored for dir, in the order they were made.
func (s *Store) For(dir string) []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Rule
	for _, r := range s.rules {
		if dir == "" || r.Dir == dir {
			out = append(out, r)
		}
	}
	return out
}

// Add stores r (once: the same rule for the same directory is kept as
// it was) and returns it with its id.
func (s *Store) Add(r Rule) (Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, old := range s.rules {
		if old.Tool == r.Tool && old.Pattern == r.Pattern && old.Decision == r.Decision && old.Dir == r.Dir {
			return old, nil
		}
	}
	var b [4]byte
	rand.Read(b[:])
	r.ID, r.Origin = "perm_"+hex.EncodeToString(b[:]), "answer"
	s.rules = append(s.rules, r)
	if err := s.save(); err != nil {
		s.rules = s.rules[:len(s.rules)-1]
		return Rule{}, err
	}
	return r, nil
}

// Revoke removes the stored rule id; false when there is none.
func (s *Store) Revoke(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rules {
		if r.ID == id {
			kept := append(append([]Rule(nil), s.rules[:i]...), s.rules[i+1:]...)
			old := s.rules
			s.rules = kept
			if err := s.save(); err != nil {
				s.rules = old
				return false, err
			}
			return true, nil
		}
	}
	return false, nil
}

func (s *Store) save() error {
	b, err := json.MarshalIndent(s.rules, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(s.path, b, 0o600)
}
