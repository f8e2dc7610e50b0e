// Package pairing keeps the gateway's credentials: one-time pairing codes
// (in memory, five minutes), the bearer tokens they are exchanged for
// (stored as SHA-256 hashes only), the open connections each token
// holds (so a revocation closes them at once), and the rate limit on
// failed pairing attempts.
package pairing

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Lifetimes and limits.
const (
	CodeLife = 5 * time.Minute
	// MaxCodes bounds the codes waiting to be used.
	MaxCodes = 16
	// A client address may fail FailBurst pairing attempts, then one per
	// FailEvery.
	FailBurst = 5
	FailEvery = time.Minute
	// touchEvery bounds how often a token's last use is written.
	touchEvery = time.Minute
)

// Errors of Pair.
var (
	ErrBadCode = errors.New("pairing code unknown, used or expired")
)

// RateLimitedError says a client address failed too often.
type RateLimitedError struct{ RetryAfter time.Duration }

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("too many failed pairing attempts from this address; retry in %s", e.RetryAfter.Round(time.Second))
}

// Info describes a token (never the token itself).
type Info struct {
	ID         string
	Name       string
	CreatedMs  int64
	LastUsedMs int64
}

type token struct {
	Info
	touched time.Time
}

type failures struct {
	n    float64 // attempts charged, leaking at one per FailEvery
	last time.Time
}

// Keeper holds the credentials of one daemon.
type Keeper struct {
	st  *store.Store
	now func() time.Time

	mu     sync.Mutex
	byHash map[[32]byte]*token
	codes  map[string]time.Time // code → expiry
	held   map[string]map[*hold]struct{}
	fails  map[string]*failures
}

type hold struct{ close func() }

// New loads the stored tokens.
func New(ctx context.Context, st *store.Store) (*Keeper, error) {
	k := &Keeper{st: st, now: time.Now, byHash: map[[32]byte]*token{}, codes: map[string]time.Time{},
		held: map[string]map[*hold]struct{}{}, fails: map[string]*failures{}}
	ts, err := st.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		var h [32]byte
		copy(h[:], t.Hash)
		k.byHash[h] = &token{Info: Info{ID: t.ID, Name: t.Name, CreatedMs: t.CreatedMs, LastUsedMs: t.LastUsedMs}}
	}
	return k, nil
}

// codeAlphabet is base32 without the letters people misread.
var codeEncoding = base32.NewEncoding("ABCDEFGHJKMNPQRSTVWXYZ0123456789").WithPadding(base32.NoPadding)

// NewCode makes a one-time pairing code: ten characters (50 bits),
// shown as two groups of five, valid for CodeLife.
func (k *Keeper) NewCode() (string, time.Time) {
	var b [7]byte
	rand.Read(b[:])
	raw := codeEncoding.EncodeToString(b[:])[:10]
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	for c, exp := range k.codes {
		if !now.Before(exp) {
			delete(k.codes, c)
		}
	}
	for len(k.codes) >= MaxCodes { // the oldest goes
		oldest := ""
		for c, exp := range k.codes {
			if oldest == "" || exp.Before(k.codes[oldest]) {
				oldest = c
			}
		}
		delete(k.codes, oldest)
	}
	exp := now.Add(CodeLife)
	k.codes[raw] = exp
	return raw[:5] + "-" + raw[5:], exp
}

// normalize reads a code as typed: any case, with or without the dash
// or spaces.
func normalize(code string) string {
	code = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	return code
}

// Pair exchanges a code for a new token, shown this once. addr is the
// client's address (its IP): failures are counted per address.
func (k *Keeper) Pair(addr, code, name string) (tok string, info Info, err error) {
	now := k.now()
	k.mu.Lock()
	f := k.fails[addr]
	if f != nil {
		f.n = max(0, f.n-now.Sub(f.last).Seconds()/FailEvery.Seconds())
		f.last = now
		if f.n > FailBurst-1 { // a sixth attempt before one has leaked out
			wait := time.Duration((f.n - (FailBurst - 1)) * float64(FailEvery))
			k.mu.Unlock()
			return "", Info{}, &RateLimitedError{RetryAfter: wait}
		}
	}
	c := normalize(code)
	exp, ok := k.codes[c]
	if !ok || !now.Before(exp) {
		if f == nil {
			if len(k.fails) > 4096 { // forget the ones that have leaked out
				for a, g := range k.fails {
					if now.Sub(g.last) > FailBurst*FailEvery {
						delete(k.fails, a)
					}
				}
			}
			f = &failures{last: now}
			k.fails[addr] = f
		}
		f.n++
		k.mu.Unlock()
		return "", Info{}, ErrBadCode
	}
	delete(k.codes, c)
	k.mu.Unlock()

	var secret [32]byte
	rand.Read(secret[:])
	tok = "zc_" + base64.RawURLEncoding.EncodeToString(secret[:])
	var idb [6]byte
	rand.Read(idb[:])
	if name = strings.TrimSpace(name); name == "" {
		name = "unnamed"
	}
	if len(name) > 128 {
		name = name[:128]
	}
	info = Info{ID: "tok_" + hex.EncodeToString(idb[:]), Name: name, CreatedMs: now.UnixMilli()}
	h := sha256.Sum256([]byte(tok))
	if err := k.st.CreateToken(store.Token{ID: info.ID, Name: info.Name, Hash: h[:], CreatedMs: info.CreatedMs}); err != nil {
		return "", Info{}, err
	}
	k.mu.Lock()
	k.byHash[h] = &token{Info: info}
	k.mu.Unlock()
	return tok, info, nil
}

// Check returns the token's description if tok is a live token, and
// records its use.
func (k *Keeper) Check(tok string) (Info, bool) {
	if !strings.HasPrefix(tok, "zc_") || len(tok) > 128 {
		return Info{}, false
	}
	// A map lookup by the hash: what an attacker can time is the hash of
	// their guess, which tells them nothing about a stored token.
	h := sha256.Sum256([]byte(tok))
	now := k.now()
	k.mu.Lock()
	t, ok := k.byHash[h]
	if !ok {
		k.mu.Unlock()
		return Info{}, false
	}
	touch := now.Sub(t.touched) >= touchEvery
	if touch {
		t.touched = now
	}
	t.LastUsedMs = now.UnixMilli()
	info := t.Info
	k.mu.Unlock()
	if touch {
		k.st.TouchToken(info.ID, info.LastUsedMs)
	}
	return info, true
}

// List describes every token, oldest first.
func (k *Keeper) List() []Info {
	k.mu.Lock()
	out := make([]Info, 0, len(k.byHash))
	for _, t := range k.byHash {
		out = append(out, t.Info)
	}
	k.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int {
		if c := cmp.Compare(a.CreatedMs, b.CreatedMs); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// Revoke deletes a token and closes every connection it holds open;
// false when there is no token with that id.
func (k *Keeper) Revoke(id string) (bool, error) {
	ok, err := k.st.RevokeToken(id)
	if err != nil {
		return false, err
	}
	k.mu.Lock()
	for h, t := range k.byHash {
		if t.ID == id {
			delete(k.byHash, h)
			ok = true
		}
	}
	hs := k.held[id]
	delete(k.held, id)
	k.mu.Unlock()
	for h := range hs {
		h.close()
	}
	return ok, nil
}

// Hold registers an open connection authenticated by token id: a
// revocation calls closeFn. The connection calls release when it ends.
// A token revoked between its check and its hold is closed at once.
func (k *Keeper) Hold(id string, closeFn func()) (release func()) {
	h := &hold{close: closeFn}
	k.mu.Lock()
	live := false
	for _, t := range k.byHash {
		if t.ID == id {
			live = true
			break
		}
	}
	if !live {
		k.mu.Unlock()
		closeFn()
		return func() {}
	}
	if k.held[id] == nil {
		k.held[id] = map[*hold]struct{}{}
	}
	k.held[id][h] = struct{}{}
	k.mu.Unlock()
	return func() {
		k.mu.Lock()
		delete(k.held[id], h)
		if len(k.held[id]) == 0 {
			delete(k.held, id)
		}
		k.mu.Unlock()
	}
}
