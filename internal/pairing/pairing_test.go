package pairing

import (
	"context"
	"errors"
	"path/filepath"
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
	k, err := New(context.Background(), st)
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
	if _, _, err := k.Pair("a", code, ""); !errors.Is(err, ErrBadCode) {
		t.Fatalf("an expired code: %v", err)
	}
	code, _ = k.NewCode()
	tok, info, err := k.Pair("a", code, "")
	if err != nil || info.Name != "unnamed" {
		t.Fatalf("pair: %v %+v", err, info)
	}
	if _, _, err := k.Pair("b", code, ""); !errors.Is(err, ErrBadCode) {
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
	tok, info, _ := k.Pair("a", code, "laptop")
	k2, err := New(context.Background(), st)
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
	if k3, _ := New(context.Background(), st); len(k3.List()) != 0 {
		t.Fatalf("a revoked token came back: %+v", k3.List())
	}
}

func TestFailedPairingsAreRateLimitedPerAddress(t *testing.T) {
	k, _, now := keeper(t)
	for range FailBurst {
		if _, _, err := k.Pair("1.2.3.4", "WRONG-CODE0", ""); !errors.Is(err, ErrBadCode) {
			t.Fatal(err)
		}
	}
	code, _ := k.NewCode()
	var limited *RateLimitedError
	if _, _, err := k.Pair("1.2.3.4", code, ""); !errors.As(err, &limited) || limited.RetryAfter <= 0 {
		t.Fatalf("sixth attempt: %v", err)
	}
	// Another address is not held back; this one is, until one failure
	// has leaked out.
	if _, _, err := k.Pair("5.6.7.8", code, ""); err != nil {
		t.Fatalf("another address: %v", err)
	}
	*now = now.Add(FailEvery + time.Second)
	code, _ = k.NewCode()
	if _, _, err := k.Pair("1.2.3.4", code, ""); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}
