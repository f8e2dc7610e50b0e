// Package pairing keeps the gateway's credentials: one-time pairing codes
// (in memory, five minutes), what they are exchanged for (stored as
// SHA-256 hashes only), the open connections each credential holds (so a
// revocation or an expiry closes them), and the limits on failed
// pairing attempts: per code (a code is withdrawn once CodeGuesses wrong
// codes were tried while it was valid, which bounds guessing whoever
// guesses) and per remote address, never per loopback address (every
// local user shares it, so its limit would let one lock the others out).
//
// A code buys one of two kinds of credential. A script's token is one
// secret, sent as a bearer token, valid for TokenTTL from its pairing.
// A browser's session is two secrets that are worth nothing apart: one
// travels in an HttpOnly cookie (which the browser also sends to every
// other server on the same host, whatever its port, so it must not be
// enough), the other is kept by the dashboard's page in its origin's
// storage and sent with every request. A session lapses SessionTTL after
// its last use, and TokenTTL after its pairing at the latest.
package pairing

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/protocol"

	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Lifetimes and limits.
const (
	CodeLife = 5 * time.Minute
	// MaxCodes bounds the codes waiting to be used.
	MaxCodes = 16
	// CodeGuesses wrong codes tried, from anywhere, while a code is valid
	// withdraw it: a code of 50 bits is guessed with a chance of at most
	// CodeGuesses in 2^50, however many addresses guess, and a fresh code
	// must be made (the withdrawn one says why).
	CodeGuesses = 10
	// A remote client address may fail FailBurst pairing attempts, then
	// one per FailEvery. Loopback addresses are not limited so: every
	// local user shares them.
	FailBurst = 5
	FailEvery = time.Minute
	// touchEvery bounds how often a token's last use is written.
	touchEvery = time.Minute

	// Default lifetimes.
	DefaultTokenTTL   = 30 * 24 * time.Hour
	DefaultSessionTTL = 7 * 24 * time.Hour
)

// Kinds of credential.
const (
	KindToken   = "token"
	KindBrowser = "browser"
)

// Options set the lifetimes (0: the defaults).
type Options struct {
	// TokenTTL: how long any credential lives after its pairing.
	TokenTTL time.Duration
	// SessionTTL: how long a browser's session lives after its last use.
	SessionTTL time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Credential is what a pairing gives out, shown this once. For a browser
// session, Token goes in the cookie and Key to the page; Check takes
// them joined by Join.
type Credential struct {
	Token string
	Key   string // a browser session's page key; "" for a script's token
}

// Join makes the one string Check takes from a browser session's cookie
// and page key.
func Join(cookie, key string) string {
	if cookie == "" || key == "" {
		return ""
	}
	return cookie + " " + key
}

// Errors of Pair.
var (
	ErrBadCode = errors.New("pairing code unknown, used or expired")
	// ErrCodeBurned is a code that was withdrawn before its use.
	ErrCodeBurned = fmt.Errorf("pairing code withdrawn: %d wrong codes were tried while it was valid (someone may be guessing)", CodeGuesses)
)

// RateLimitedError says a remote client address failed too often.
type RateLimitedError struct{ RetryAfter time.Duration }

// Seconds is the wait in whole seconds, rounded up and never under 1 (an
// HTTP Retry-After of 0 would invite the retry at once).
func (e *RateLimitedError) Seconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("too many failed pairing attempts from this address; retry in %ds", e.Seconds())
}

// Info describes a credential (never its secrets).
type Info struct {
	ID         string
	Name       string
	Kind       string // KindToken or KindBrowser
	CreatedMs  int64
	LastUsedMs int64
	ExpiresMs  int64 // when it lapses unless used before (a session) or at all (a token)
}

type token struct {
	Info
	touched time.Time
}

// code is a pairing code waiting to be used.
type code struct {
	exp   time.Time
	wrong int // wrong codes tried while it was valid
}

type failures struct {
	n    float64 // attempts charged, leaking at one per FailEvery
	last time.Time
}

// Keeper holds the credentials of one daemon.
type Keeper struct {
	st  *store.Store
	now func() time.Time
	o   Options

	mu     sync.Mutex
	byHash map[[32]byte]*token
	codes  map[string]*code
	burned map[string]time.Time // a withdrawn code → when it would have expired
	held   map[string]map[*hold]struct{}
	fails  map[string]*failures // per remote address
}

type hold struct{ close func() }

// New loads the stored credentials; those that lapsed are deleted.
func New(ctx context.Context, st *store.Store, o Options) (*Keeper, error) {
	if o.TokenTTL <= 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	k := &Keeper{st: st, now: o.Now, o: o, byHash: map[[32]byte]*token{}, codes: map[string]*code{}, burned: map[string]time.Time{},
		held: map[string]map[*hold]struct{}{}, fails: map[string]*failures{}}
	ts, err := st.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		var h [32]byte
		copy(h[:], t.Hash)
		kind := t.Kind
		if kind != KindBrowser {
			kind = KindToken
		}
		k.byHash[h] = &token{Info: Info{ID: t.ID, Name: t.Name, Kind: kind, CreatedMs: t.CreatedMs, LastUsedMs: t.LastUsedMs}}
	}
	k.prune()
	return k, nil
}

// Lifetimes returns the lifetimes in force.
func (k *Keeper) Lifetimes() Options { return k.o }

// expiresMs is when t lapses, as things stand (k.mu held).
func (k *Keeper) expiresMs(t *token) int64 {
	exp := t.CreatedMs + k.o.TokenTTL.Milliseconds()
	if t.Kind == KindBrowser {
		exp = min(exp, max(t.CreatedMs, t.LastUsedMs)+k.o.SessionTTL.Milliseconds())
	}
	return exp
}

// prune forgets and deletes the credentials that lapsed, and closes
// what they hold open.
func (k *Keeper) prune() {
	now := k.now().UnixMilli()
	var gone []string
	var holds []*hold
	k.mu.Lock()
	for h, t := range k.byHash {
		if now >= k.expiresMs(t) {
			delete(k.byHash, h)
			gone = append(gone, t.ID)
			for hd := range k.held[t.ID] {
				holds = append(holds, hd)
			}
			delete(k.held, t.ID)
		}
	}
	k.mu.Unlock()
	for _, id := range gone {
		k.st.RevokeToken(id)
	}
	for _, h := range holds {
		h.close()
	}
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
	for c, pc := range k.codes {
		if !now.Before(pc.exp) {
			delete(k.codes, c)
		}
	}
	for c, exp := range k.burned {
		if !now.Before(exp) {
			delete(k.burned, c)
		}
	}
	for len(k.codes) >= MaxCodes { // the oldest goes
		oldest := ""
		for c, pc := range k.codes {
			if oldest == "" || pc.exp.Before(k.codes[oldest].exp) {
				oldest = c
			}
		}
		delete(k.codes, oldest)
	}
	exp := now.Add(CodeLife)
	k.codes[raw] = &code{exp: exp}
	return raw[:5] + "-" + raw[5:], exp
}

// normalize reads a code as typed: any case, with or without the dash
// or spaces.
func normalize(code string) string {
	code = strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	return code
}

// leak lets f's charged attempts leak out at one per every up to now,
// and says how long until another is allowed when burst are charged.
func (f *failures) leak(now time.Time, burst int, every time.Duration) (wait time.Duration) {
	f.n = max(0, f.n-now.Sub(f.last).Seconds()/every.Seconds())
	f.last = now
	if f.n > float64(burst-1) {
		return time.Duration((f.n - float64(burst-1)) * float64(every))
	}
	return 0
}

// loopback says whether addr is a loopback address, which every local
// user shares.
func loopback(addr string) bool {
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// Pair exchanges a code for a new credential, shown this once: a
// script's token, or with browser a browser's session. addr is the
// client's address (its IP).
//
// A wrong code counts against every code then valid: the one that
// reaches CodeGuesses is withdrawn (ErrCodeBurned to whoever brings it
// after), so no code can be guessed more than CodeGuesses times. A
// remote address's failures are counted too, and past its limit its
// every attempt is refused unchecked, a good code too, so that its
// guesses teach nothing; a loopback address is never held back, since
// another local user's guesses would lock its owner out.
func (k *Keeper) Pair(addr, typed, name string, browser bool) (cred Credential, info Info, err error) {
	now := k.now()
	remote := !loopback(addr)
	k.mu.Lock()
	if f := k.fails[addr]; remote && f != nil {
		if wait := f.leak(now, FailBurst, FailEvery); wait > 0 {
			k.mu.Unlock()
			return Credential{}, Info{}, &RateLimitedError{RetryAfter: wait}
		}
	}
	c := normalize(typed)
	if exp, ok := k.burned[c]; ok && now.Before(exp) {
		k.mu.Unlock()
		return Credential{}, Info{}, ErrCodeBurned
	}
	if pc, ok := k.codes[c]; !ok || !now.Before(pc.exp) {
		k.wrongLocked(now)
		if remote {
			k.failedLocked(addr, now)
		}
		k.mu.Unlock()
		return Credential{}, Info{}, ErrBadCode
	}
	delete(k.codes, c)
	k.mu.Unlock()

	cred.Token = secret("zc_")
	kind := KindToken
	if browser {
		cred.Key, kind = secret("zk_"), KindBrowser
	}
	if name = strings.TrimSpace(name); name == "" {
		name = "unnamed"
	}
	if len(name) > 128 {
		name = name[:128]
	}
	prefix := "tok_"
	if browser {
		prefix = "web_"
	}
	info = Info{ID: protocol.NewID(prefix, 6), Name: name, Kind: kind, CreatedMs: now.UnixMilli()}
	whole := cred.Token
	if browser {
		whole = Join(cred.Token, cred.Key)
	}
	h := sha256.Sum256([]byte(whole))
	if err := k.st.CreateToken(store.Token{ID: info.ID, Name: info.Name, Kind: kind, Hash: h[:], CreatedMs: info.CreatedMs}); err != nil {
		return Credential{}, Info{}, err
	}
	t := &token{Info: info, touched: now}
	k.mu.Lock()
	k.byHash[h] = t
	info.ExpiresMs = k.expiresMs(t)
	k.mu.Unlock()
	return cred, info, nil
}

// failedLocked counts a failure of remote address addr (k.mu held).
func (k *Keeper) failedLocked(addr string, now time.Time) {
	f := k.fails[addr]
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
}

// wrongLocked counts a wrong code against every valid code, and
// withdraws those that reach CodeGuesses (k.mu held).
func (k *Keeper) wrongLocked(now time.Time) {
	for c, pc := range k.codes {
		if !now.Before(pc.exp) {
			delete(k.codes, c)
			continue
		}
		if pc.wrong++; pc.wrong >= CodeGuesses {
			delete(k.codes, c)
			k.burned[c] = pc.exp
		}
	}
}

// secret is prefix and 256 random bits.
func secret(prefix string) string {
	var b [32]byte
	rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// Check returns the credential's description if cred is a live one (a
// token, or a session's cookie and key joined by Join), and records its
// use, which renews a browser's session.
func (k *Keeper) Check(cred string) (Info, bool) {
	if !strings.HasPrefix(cred, "zc_") || len(cred) > 128 {
		return Info{}, false
	}
	// A map lookup by the hash: what an attacker can time is the hash of
	// their guess, which tells them nothing about a stored token.
	h := sha256.Sum256([]byte(cred))
	k.mu.Lock()
	t, ok := k.byHash[h]
	if !ok {
		k.mu.Unlock()
		return Info{}, false
	}
	info, ok, touch := k.useLocked(t)
	k.mu.Unlock()
	k.after(info, ok, touch)
	return info, ok
}

// after writes a use down, or prunes a lapsed credential.
func (k *Keeper) after(info Info, ok, touch bool) {
	if !ok {
		k.prune()
	} else if touch {
		k.st.TouchToken(info.ID, info.LastUsedMs)
	}
}

// useLocked records a use of t, unless it lapsed; touch: the use is
// due to be written.
func (k *Keeper) useLocked(t *token) (info Info, ok, touch bool) {
	now := k.now()
	if now.UnixMilli() >= k.expiresMs(t) {
		return Info{}, false, false
	}
	touch = now.Sub(t.touched) >= touchEvery
	if touch {
		t.touched = now
	}
	t.LastUsedMs = now.UnixMilli()
	info = t.Info
	info.ExpiresMs = k.expiresMs(t)
	return info, true, touch
}

// Alive says whether credential id is still live, as a connection it
// holds open asks from time to time: such a connection is a use, so it
// renews a browser's session. A lapsed one closes what it holds.
func (k *Keeper) Alive(id string) bool {
	k.mu.Lock()
	for _, t := range k.byHash {
		if t.ID == id {
			info, ok, touch := k.useLocked(t)
			k.mu.Unlock()
			k.after(info, ok, touch)
			return ok
		}
	}
	k.mu.Unlock()
	return false
}

// List describes every live credential, oldest first.
func (k *Keeper) List() []Info {
	k.prune()
	k.mu.Lock()
	out := make([]Info, 0, len(k.byHash))
	for _, t := range k.byHash {
		info := t.Info
		info.ExpiresMs = k.expiresMs(t)
		out = append(out, info)
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
