package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/store"
)

// Schedules stored before prompts were bounded (two of 7 MiB: the frame
// limit is 8) cannot make schedule/list fail: each prompt is listed cut
// to MaxPrompt, saying so, and the list comes in pages, each far below
// the frame limit, that visit every schedule once in order.
func TestListIsBoundedWhateverIsStored(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "zc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	off := false
	put := func(id string, created int64, prompt, reason string) {
		b := stored{Schedule: protocol.Schedule{ScheduleID: id, CreatedMs: created, PausedReason: reason,
			ScheduleFields: protocol.ScheduleFields{Prompt: prompt, Every: "1h", SessionID: "s", Enabled: &off}}, AnchorMs: created}
		body, _ := json.Marshal(b)
		if err := st.PutSchedule(store.Schedule{ID: id, Body: body, CreatedMs: created}); err != nil {
			t.Fatal(err)
		}
	}
	huge := strings.Repeat("é", 7<<20/2) // 7 MiB, two bytes a character
	put("sch_a", 1, huge, "")
	put("sch_b", 1, huge, strings.Repeat("why ", 10000))
	for i := range 300 {
		put(fmt.Sprintf("sch_c%03d", i), 2, strings.Repeat("p", MaxPrompt), "")
	}
	s := New(Options{Store: st, Max: 1000})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); s.Wait() }()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	pages := 0
	for cursor := ""; ; pages++ {
		page, next, err := s.List(cursor)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(protocol.ScheduleListResult{Schedules: page, NextCursor: next})
		if len(b) > 2<<20 {
			t.Fatalf("a page of %d bytes", len(b))
		}
		for _, v := range page {
			ids = append(ids, v.ScheduleID)
			if big := v.ScheduleID < "sch_c"; v.PromptTruncated != big || len(v.Prompt) > MaxPrompt || !strings.HasPrefix(huge, v.Prompt) && big {
				t.Fatalf("%s: %d bytes of prompt, truncated %v", v.ScheduleID, len(v.Prompt), v.PromptTruncated)
			}
			if len(v.PausedReason) > maxReason+len(" … (cut)") || v.ScheduleID == "sch_b" && !strings.HasSuffix(v.PausedReason, "(cut)") {
				t.Fatalf("%s: a reason of %d bytes", v.ScheduleID, len(v.PausedReason))
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(ids) != 302 || ids[0] != "sch_a" || ids[1] != "sch_b" || ids[2] != "sch_c000" || ids[301] != "sch_c299" || pages < 2 {
		t.Fatalf("%d schedules listed in %d pages: %v ... %v", len(ids), pages+1, ids[:3], ids[len(ids)-1])
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("%s listed twice", id)
		}
		seen[id] = true
	}
	if _, _, err := s.List("nonsense"); err == nil {
		t.Fatal("a bad cursor was taken")
	}
}
