package cli

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/client"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// Schedules every 2 s across a daemon's kill -9 and a downtime of
// several due times: each due time that fired did so once (one
// user_message per run's clientMessageId), the runs before and after
// keep the 2 s grid without a gap, and of the due times the downtime
// passed, "missed: once" fires exactly one catch-up run and "skip"
// none.
func TestSchedulesAcrossAKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	cmd, _ := startDaemon(t, env)
	ctx := context.Background()
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{} // missed policy → schedule id
	for _, missed := range []string{protocol.MissedOnce, protocol.MissedSkip} {
		sid := "sch-" + missed
		if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: sid, Cwd: t.TempDir(), Mode: "code"}); err != nil {
			t.Fatal(err)
		}
		var res protocol.ScheduleResult
		if err := c.Call(ctx, protocol.MethodScheduleCreate, protocol.ScheduleFields{Prompt: "tick " + missed, Every: "2s", SessionID: sid, Missed: missed}, &res); err != nil {
			t.Fatal(err)
		}
		ids[missed] = res.Schedule.ScheduleID
	}
	runs := func(c *client.Client, id string) int {
		var l protocol.ScheduleListResult
		if err := c.Call(ctx, protocol.MethodScheduleList, struct{}{}, &l); err != nil {
			t.Fatal(err)
		}
		for _, s := range l.Schedules {
			if s.ScheduleID == id {
				return s.Runs
			}
		}
		t.Fatalf("no schedule %s", id)
		return 0
	}
	waitRuns := func(c *client.Client, n int) {
		for deadline := time.Now().Add(30 * time.Second); runs(c, ids[protocol.MissedOnce]) < n || runs(c, ids[protocol.MissedSkip]) < n; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d runs in 30 s", n)
			}
		}
	}
	waitRuns(c, 2)
	c.Close()
	killed := time.Now()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// Down for more than two due times.
	time.Sleep(5 * time.Second)
	restarted := time.Now()
	startDaemon(t, env)
	c2, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	waitRuns(c2, 5)
	if err := c2.Call(ctx, protocol.MethodScheduleUpdate, protocol.ScheduleUpdateParams{ScheduleID: ids[protocol.MissedOnce], ScheduleFields: protocol.ScheduleFields{Enabled: new(bool)}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c2.Call(ctx, protocol.MethodScheduleUpdate, protocol.ScheduleUpdateParams{ScheduleID: ids[protocol.MissedSkip], ScheduleFields: protocol.ScheduleFields{Enabled: new(bool)}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, missed := range []string{protocol.MissedOnce, protocol.MissedSkip} {
		sid, id := "sch-"+missed, ids[missed]
		if _, err := c2.NewSession(ctx, protocol.SessionNewParams{SessionID: sid}); err != nil {
			t.Fatal(err)
		}
		// Wait for the last run to end.
		var h *protocol.SessionHistoryResult
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if h, err = c2.History(ctx, protocol.SessionHistoryParams{SessionID: sid, Limit: 10000}); err != nil {
				t.Fatal(err)
			}
			started, ended := 0, 0
			for _, raw := range h.Events {
				u, _ := protocol.ParseUpdate(raw)
				if e, ok := u.Event.(protocol.InputUpdateEvent); ok && e.State == protocol.InputStarted {
					started++
				}
				if _, ok := u.Event.(protocol.TurnCompleteEvent); ok {
					ended++
				}
			}
			if started == ended && started > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: a run never ended", sid)
			}
		}
		perDue := map[int64]int{}
		users := 0
		for _, raw := range h.Events {
			u, _ := protocol.ParseUpdate(raw)
			switch e := u.Event.(type) {
			case protocol.InputUpdateEvent:
				if e.State != protocol.InputStarted {
					continue
				}
				due, ok := strings.CutPrefix(e.ClientMessageID, id+":")
				if !ok {
					t.Fatalf("%s: a prompt named %q, not by its schedule", sid, e.ClientMessageID)
				}
				ms, _ := strconv.ParseInt(due, 10, 64)
				perDue[ms]++
			case protocol.UserMessageEvent:
				users++
			}
		}
		var dues []int64
		for ms, n := range perDue {
			if n != 1 {
				t.Errorf("%s: the run due %d started %d times", sid, ms, n)
			}
			dues = append(dues, ms)
		}
		sort.Slice(dues, func(i, j int) bool { return dues[i] < dues[j] })
		if users != len(dues) {
			t.Errorf("%s: %d user_messages for %d runs", sid, users, len(dues))
		}
		inDowntime := 0
		for i, ms := range dues {
			at := time.UnixMilli(ms)
			if at.After(killed) && at.Before(restarted) {
				inDowntime++
			}
			if i > 0 && dues[i-1] < restarted.UnixMilli() && ms > killed.UnixMilli() {
				continue // across the downtime
			}
			if i > 0 && ms-dues[i-1] != 2000 {
				t.Errorf("%s: runs due %d and %d: a gap", sid, dues[i-1], ms)
			}
		}
		want := map[string]int{protocol.MissedOnce: 1, protocol.MissedSkip: 0}[missed]
		if inDowntime != want {
			t.Errorf("%s: %d runs for the due times of the downtime, want %d (dues %v, killed %d, restarted %d)", sid, inDowntime, want, dues, killed.UnixMilli(), restarted.UnixMilli())
		}
		t.Logf("%s: %d runs, %d in the downtime", sid, len(dues), inDowntime)
	}
}

// zeroclaw schedule: add (a cron in a session, every and at in a new
// session per run), list, run, pause, resume, rm, as a user types them;
// a bad when is refused with the reason.
func TestScheduleCommands(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	startDaemon(t, env)
	if code, out, errs := runCLI(t, env, "", "prompt", "--session", "cli-sch", "--cwd", t.TempDir(), "hello"); code != 0 {
		t.Fatalf("a session: %d %q %q", code, out, errs)
	}
	code, out, errs := runCLI(t, env, "", "schedule", "add", "0 9 * * 1-5", "--session", "cli-sch", "--tz", "Europe/Paris", "summarise", "what", "failed")
	if code != 0 || !strings.Contains(out, `0 9 * * 1-5 (Europe/Paris), in session cli-sch: "summarise what failed"; next `) {
		t.Fatalf("add a cron: %d %q %q", code, out, errs)
	}
	// No user service is installed: the user is told that schedules
	// need a running daemon.
	if !strings.Contains(errs, "schedules need a running daemon, and no user service is installed") || !strings.Contains(errs, "zeroclaw daemon install") {
		t.Errorf("add without a service installed says nothing of it: %q", errs)
	}
	id := strings.TrimSuffix(strings.Fields(out)[1], ":")
	if code, out, errs := runCLI(t, env, "", "schedule", "add", "every", "10m", "--cwd", t.TempDir(), "check the deploy"); code != 0 || !strings.Contains(out, "every 10m, in a new session per run") {
		t.Fatalf("add every: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "schedule", "add", "at", "17:30", "--session", "cli-sch", "go home"); code != 0 || !strings.Contains(out, "at 20") {
		t.Fatalf("add at: %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, env, "", "schedule", "add", "61 * * * *", "--session", "cli-sch", "never"); code == 0 || !strings.Contains(errs, "cron") {
		t.Fatalf("a bad cron: %d %q", code, errs)
	}
	code, out, errs = runCLI(t, env, "", "schedule", "list", "--output-format", "json")
	var l []protocol.Schedule
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l) != 3 || l[0].ScheduleID != id {
		t.Fatalf("list: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "schedule", "run", id); code != 0 || !strings.HasPrefix(out, "running "+id) {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "schedule", "pause", id); code != 0 || !strings.Contains(out, "; paused") {
		t.Fatalf("pause: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "schedule", "resume", id); code != 0 || !strings.Contains(out, "; next ") {
		t.Fatalf("resume: %d %q %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, env, "", "schedule", "rm", id); code != 0 || out != "removed "+id+"\n" {
		t.Fatalf("rm: %d %q %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, env, "", "schedule", "rm", id); code == 0 || !strings.Contains(errs, "no schedule") {
		t.Fatalf("rm again: %d %q", code, errs)
	}
	code, out, _ = runCLI(t, env, "", "schedule")
	if code != 0 || strings.Count(out, "sch_") != 2 {
		t.Fatalf("schedule (list): %d %q", code, out)
	}
}

// A goal survives a kill -9: the goal turn it cut goes on in the next
// daemon, the goal's next turns follow it, and it ends met; each goal
// turn ran once. zeroclaw goal set and status, as a user types them.
func TestGoalGoesOnAfterKill9(t *testing.T) {
	env, _, _, dir := testEnv(t, "")
	os.MkdirAll(dir, 0o700)
	cmd, _ := startDaemon(t, env)
	if code, out, errs := runCLI(t, env, "", "prompt", "--session", "goal-k9", "--cwd", t.TempDir(), "hello"); code != 0 {
		t.Fatalf("a session: %d %q %q", code, out, errs)
	}
	objective := "/delay 20\n/chunks 30\n/when \"[Goal, turn 3]\" /tool goal_done {\"summary\":\"survived\"}"
	code, out, errs := runCLI(t, env, "", "goal", "set", "--session", "goal-k9", "--turns", "6", objective)
	if code != 0 || !strings.HasPrefix(out, "active after 0 turns (at most 6 turns) — /delay 20") {
		t.Fatalf("goal set: %d %q %q", code, out, errs)
	}
	ctx := context.Background()
	c, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, protocol.SessionNewParams{SessionID: "goal-k9"}); err != nil {
		t.Fatal(err)
	}
	historyCount(t, c, "goal-k9", `[Goal, turn 2]`, 1)
	c.Close()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	startDaemon(t, env)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, out, errs = runCLI(t, env, "", "goal", "status", "--session", "goal-k9")
		if code == 0 && strings.HasPrefix(out, "met after 3 turns") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the goal after the restart: %d %q %q", code, out, errs)
		}
	}
	if !strings.Contains(out, ": survived — /delay 20") {
		t.Fatalf("goal status: %q", out)
	}
	c2, err := client.Dial(ctx, endpointOf(dir), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	h, err := c2.History(ctx, protocol.SessionHistoryParams{SessionID: "goal-k9", Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	turns := map[string]int{}
	resumed := 0
	for _, raw := range h.Events {
		u, _ := protocol.ParseUpdate(raw)
		switch e := u.Event.(type) {
		case protocol.UserMessageEvent:
			if strings.HasPrefix(e.Text, "[Goal, turn ") {
				turns[e.Text[:strings.Index(e.Text, "]")+1]]++
			}
		case protocol.TurnResumedEvent:
			resumed++
		}
	}
	if len(turns) != 3 || turns["[Goal, turn 1]"] != 1 || turns["[Goal, turn 2]"] != 1 || turns["[Goal, turn 3]"] != 1 || resumed != 1 {
		t.Fatalf("the goal's turns: %v, %d resumed", turns, resumed)
	}
}
