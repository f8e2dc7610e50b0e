package archive

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// session/list cannot be made to fail by what is stored: a title stored
// longer than a title may be (a sub-agent's task description) is told
// cut, and a page holds fewer sessions than its limit rather than more
// bytes than its bound; the pages still visit every session once.
func TestListIsBoundedWhateverIsStored(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "z.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 30 {
		if err := st.CreateSession(&store.Session{ID: fmt.Sprintf("s%02d", i), AgentAlias: "default", Cwd: "/", Owner: "c",
			Title: strings.Repeat("é", 100000), CreatedMs: 1, UpdatedMs: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	a := &Archive{Store: st, Live: func(string) (Live, bool) { return Live{}, false }, Changed: func(string) {}, Log: slog.New(slog.DiscardHandler)}
	defer func(n int) { listPageBytes = n }(listPageBytes)
	listPageBytes = 4096 // a few sessions a page
	seen := map[string]bool{}
	pages := 0
	for p := (protocol.SessionListParams{Limit: 500}); ; pages++ {
		res, err := a.List(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Sessions) == 0 || len(res.Sessions) > 20 {
			t.Fatalf("a page of %d sessions", len(res.Sessions))
		}
		for _, s := range res.Sessions {
			if n := len([]rune(s.Title)); n != maxListedTitle || !strings.HasSuffix(s.Title, "…") || seen[s.SessionID] {
				t.Fatalf("%s: a title of %d characters (or listed twice)", s.SessionID, n)
			}
			seen[s.SessionID] = true
		}
		if res.NextCursor == nil {
			break
		}
		p.Cursor = *res.NextCursor
	}
	if len(seen) != 30 || pages < 2 {
		t.Fatalf("%d sessions in %d pages", len(seen), pages+1)
	}
}
