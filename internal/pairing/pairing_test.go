package pairing

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/store"
)

func keeper(t *testing.T) (*Keeper, *store.Store, *time.Time) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	k, err := New(context.Background(), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	k.now = func() time.Time { return now }
	return k, st, &now
}

func TestCodesExpireAndWorkOnce(t *testing.T) {
	k, _, now := keeper(t)
	code, exp := k.NewCode()
	if len(code) != 11 || code[5] != '-' || !exp.Equal(now.Add(CodeLife)) {
		t.Fatalf("code %q expires %v", code, exp)
	}
	*now = now.Add(CodeLife)
	if _, _, err := k.Pair("a", code, "", false); !errors.Is(err, ErrBadCode) {
		t.Fatalf("an expired code: %v", err)
	}
	code, _ = k.NewCode()
	cred, info, err := k.Pair("a", code, "", false)
	tok := cred.Token
	if err != nil || info.Name != "unnamed" {
		t.Fatalf("pair: %v %+v", err, info)
	}
	if _, _, err := k.Pair("b", code, "", false); !errors.Is(err, ErrBadCode) {
		t.Fatalf("a code used twice: %v", err)
	}
	if got, ok := k.Check(tok); !ok || got.ID != info.ID {
		t.Fatalf("check: %+v %v", got, ok)
	}
	for _, bad := range []string{"", "zc_", tok + "x", "Bearer " + tok} {
		if _, ok := k.Check(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Tokens survive a restart (the store holds their hashes); a revoked one
// does not, and its holds are closed, a hold taken after it at once.
func TestTokensPersistAndRevoke(t *testing.T) {
	k, st, _ := keeper(t)
	code, _ := k.NewCode()
	cred, info, _ := k.Pair("a", code, "laptop", false)
	tok := cred.Token
	k2, err := New(context.Background(), st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := k2.Check(tok); !ok || got.Name != "laptop" {
		t.Fatalf("after a restart: %+v %v", got, ok)
	}
	closed := 0
	release := k2.Hold(info.ID, func() { closed++ })
	if ok, err := k2.Revoke(info.ID); !ok || err != nil {
		t.Fatal(ok, err)
	}
	release()
	if _, ok := k2.Check(tok); ok || closed != 1 {
		t.Fatalf("revoked: still valid %v, closed %d", ok, closed)
	}
	k2.Hold(info.ID, func() { closed++ })()
	if closed != 2 {
		t.Fatal("a hold on a revoked token was not closed")
	}
	if ok, _ := k2.Revoke(info.ID); ok {
		t.Fatal("revoked twice")
	}
	if k3, _ := New(context.Background(), st, Options{}); len(k3.List()) != 0 {
		t.Fatalf("a revoked token came back: %+v", k3.List())
	}
}

// A remote address may fail FailBurst times, then once a minute; past
// that even its good code is refused unchecked.
func TestFailedPairingsAreRateLimitedPerRemoteAddress(t *testing.T) {
	k, _, now := keeper(t)
	for range FailBurst {
		if _, _, err := k.Pair("1.2.3.4", "WRONG-CODE0", "", false); !errors.Is(err, ErrBadCode) {
			t.Fatal(err)
		}
	}
	code, _ := k.NewCode()
	var limited *RateLimitedError
	if _, _, err := k.Pair("1.2.3.4", code, "", false); !errors.As(err, &limited) || limited.RetryAfter <= 0 {
		t.Fatalf("sixth attempt: %v", err)
	}
	// Another address is not held back; this one is, until one failure
	// has leaked out.
	if _, _, err := k.Pair("5.6.7.8", code, "", false); err != nil {
		t.Fatalf("another address: %v", err)
	}
	*now = now.Add(FailEvery + time.Second)
	code, _ = k.NewCode()
	if _, _, err := k.Pair("1.2.3.4", code, "", false); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}

// Another local user's wrong codes (loopback, the address every local
// user shares) never hold the owner back: however many, the owner's
// fresh code pairs from the same address, at once.
func TestLocalGuessesNeverLockTheOwnerOut(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "::1", "127.0.0.2"} {
		k, _, _ := keeper(t)
		for i := range 100 {
			if _, _, err := k.Pair(addr, fmt.Sprintf("WRONG-%05d", i), "", false); !errors.Is(err, ErrBadCode) {
				t.Fatalf("%s, guess %d: %v", addr, i, err)
			}
		}
		code, _ := k.NewCode()
		if _, _, err := k.Pair(addr, code, "", false); err != nil {
			t.Fatalf("%s: the owner's fresh code after another user's guesses: %v", addr, err)
		}
	}
}

// Every wrong code, from any address, counts against each code valid
// then: the one that has seen CodeGuesses is withdrawn, and its right
// code never pairs after (ErrCodeBurned, which says why), so no code is
// guessed more than CodeGuesses times, from however many addresses. A
// code made after the guesses is untouched by them; a withdrawn code is
// forgotten when it would have expired. A remote address held back by
// its own limit counts against no code.
func TestGuessesWithdrawTheCodeTheyCouldHit(t *testing.T) {
	k, _, now := keeper(t)
	first, _ := k.NewCode()
	for i := range CodeGuesses - 1 {
		addr := "127.0.0.1"
		if i%2 == 1 {
			addr = fmt.Sprintf("10.0.0.%d", i)
		}
		if _, _, err := k.Pair(addr, fmt.Sprintf("WRONG-%05d", i), "", false); !errors.Is(err, ErrBadCode) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	second, _ := k.NewCode()
	if _, _, err := k.Pair("::1", "WRONG-LAST0", "", false); !errors.Is(err, ErrBadCode) {
		t.Fatal(err)
	}
	if _, _, err := k.Pair("127.0.0.1", first, "", false); !errors.Is(err, ErrCodeBurned) || !strings.Contains(err.Error(), "wrong codes were tried while it was valid") {
		t.Fatalf("the right code after %d wrong ones: %v", CodeGuesses, err)
	}
	if _, _, err := k.Pair("127.0.0.1", first, "", false); !errors.Is(err, ErrCodeBurned) {
		t.Fatalf("the withdrawn code again: %v", err)
	}
	if _, _, err := k.Pair("127.0.0.1", second, "", false); err != nil {
		t.Fatalf("a code made after the guesses: %v", err)
	}
	// A remote address past its limit guesses on, refused unchecked:
	// the code waiting is not charged.
	third, _ := k.NewCode()
	for i := range FailBurst + CodeGuesses {
		_, _, err := k.Pair("192.0.2.7", fmt.Sprintf("WRONG-%05d", i), "", false)
		var limited *RateLimitedError
		if i < FailBurst && !errors.Is(err, ErrBadCode) || i >= FailBurst && !errors.As(err, &limited) {
			t.Fatalf("remote guess %d: %v", i, err)
		}
	}
	if _, _, err := k.Pair("127.0.0.1", third, "", false); err != nil {
		t.Fatalf("a code charged by refused guesses: %v", err)
	}
	*now = now.Add(CodeLife)
	k.NewCode()
	if _, _, err := k.Pair("127.0.0.1", first, "", false); !errors.Is(err, ErrBadCode) {
		t.Fatalf("a withdrawn code past its life: %v", err)
	}
	if len(k.burned) != 0 {
		t.Fatalf("withdrawn codes kept past their life: %v", k.burned)
	}
}

// A script's token lives TokenTTL from its pairing, used or not.
func TestTokensExpire(t *testing.T) {
	k, st, now := keeper(t)
	code, _ := k.NewCode()
	cred, info, _ := k.Pair("a", code, "ci", false)
	if info.Kind != KindToken || cred.Key != "" || info.ExpiresMs != now.Add(DefaultTokenTTL).UnixMilli() {
		t.Fatalf("token %+v, %+v", cred, info)
	}
	closed := 0
	defer k.Hold(info.ID, func() { closed++ })()
	*now = now.Add(DefaultTokenTTL - time.Second)
	if _, ok := k.Check(cred.Token); !ok || !k.Alive(info.ID) {
		t.Fatal("refused a second before it expires")
	}
	*now = now.Add(time.Second)
	if _, ok := k.Check(cred.Token); ok {
		t.Fatal("an expired token was accepted")
	}
	if closed != 1 || len(k.List()) != 0 {
		t.Fatalf("expired: closed %d holds, listed %+v", closed, k.List())
	}
	if ts, _ := st.Tokens(context.Background()); len(ts) != 0 {
		t.Fatalf("the store still has the expired token: %+v", ts)
	}
}

// A browser's session is the cookie and the page key together: either
// alone is nothing. It lapses SessionTTL after its last use (an open
// connection's Alive is a use), and TokenTTL after pairing at the latest.
func TestBrowserSessions(t *testing.T) {
	k, st, now := keeper(t)
	code, _ := k.NewCode()
	cred, info, err := k.Pair("a", code, "firefox", true)
	if err != nil || info.Kind != KindBrowser || cred.Key == "" || cred.Token == "" {
		t.Fatalf("session %+v %+v %v", cred, info, err)
	}
	for _, bad := range []string{cred.Token, cred.Key, Join(cred.Token, ""), Join(cred.Token, cred.Token), Join(cred.Key, cred.Token)} {
		if _, ok := k.Check(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
	both := Join(cred.Token, cred.Key)
	if _, ok := k.Check(both); !ok {
		t.Fatal("the cookie and key together were refused")
	}
	// Used every six days, it lives on, across a restart too...
	for range 4 {
		*now = now.Add(6 * 24 * time.Hour)
		if _, ok := k.Check(both); !ok {
			t.Fatalf("refused while in use, at %v", *now)
		}
	}
	st.Sync() // the last use is written behind
	k2, _ := New(context.Background(), st, Options{})
	k2.now = k.now
	*now = now.Add(5 * 24 * time.Hour) // 29 days after pairing
	if !k2.Alive(info.ID) {
		t.Fatal("an open connection's session lapsed while in use")
	}
	// ...but not past TokenTTL after its pairing.
	*now = now.Add(24 * time.Hour)
	if _, ok := k2.Check(both); ok {
		t.Fatal("a session outlived token_ttl")
	}
	// Unused for SessionTTL, it lapses.
	code, _ = k2.NewCode()
	cred, _, _ = k2.Pair("a", code, "chrome", true)
	*now = now.Add(DefaultSessionTTL)
	if _, ok := k2.Check(Join(cred.Token, cred.Key)); ok {
		t.Fatal("an idle session outlived session_ttl")
	}
}

// A wait is said in whole seconds, rounded up, and never as 0.
func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, -time.Second: 1, time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, time.Minute: 60} {
		if got := (&RateLimitedError{RetryAfter: d}).Seconds(); got != want {
			t.Errorf("%v: %d, want %d", d, got, want)
		}
	}
}
