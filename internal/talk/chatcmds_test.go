package talk

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// expectMatch waits until the screen shows a match of re after what
// was expected before, moves past it and returns its first group (or
// the whole match without one).
func (s *screen) expectMatch(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(20 * time.Second)
	for {
		all := s.out.String()
		if m := rx.FindStringSubmatchIndex(all[s.pos:]); m != nil {
			got := all[s.pos+m[0] : s.pos+m[1]]
			if len(m) >= 4 && m[2] >= 0 {
				got = all[s.pos+m[2] : s.pos+m[3]]
			}
			s.pos += m[1]
			return got
		}
		select {
		case <-s.out.changed:
		case err := <-s.done:
			s.t.Fatalf("the chat ended (%v) before showing /%s/:\n%s", err, re, all[s.pos:])
		case <-deadline:
			s.t.Fatalf("the screen never showed /%s/; after the last expected:\n%s", re, all[s.pos:])
		}
	}
}

// The session's background processes in the chat: /ps lists none, then
// the one a tool started (running, its command); /logs follows its
// output by an id's start and stops when asked; /kill stops it; a
// process that exits is followed to its end, its exit code said; a
// name that matches none, or several, is refused saying so.
func TestChatLinesProcesses(t *testing.T) {
	h := startDaemon(t, "")
	s := h.lines("all", "procs")
	s.typed("/ps\n")
	s.expect("no background processes")
	s.typed("/logs\n")
	s.expect("name a process: /ps lists them")
	s.typed("/kill nope\n")
	s.expect(`no process "nope" in this session: /ps lists them`)

	s.typed(`//tool shell {"command":"echo first-line; exec sleep 300","background":true}` + "\n")
	s.expect("tool shell returned")
	s.typed("/ps\n")
	id := s.expectMatch(`(p_[0-9a-f]{12})  pid +\d+ +running`)
	s.expect("exec sleep 300")

	// By the start of its id, without the p_.
	s.typed("/logs " + strings.TrimPrefix(id, "p_")[:6] + "\n")
	s.expect("following " + id + " (echo first-line; exec sleep 300); /logs alone stops")
	s.expect(id + "│ first-line")
	s.typed("/logs\n")
	s.expect("stopped following")

	s.typed(`//tool shell {"command":"echo second-start; read x; echo second-end; exit 3","background":true}` + "\n")
	s.expect("tool shell returned")
	s.typed("/kill p_\n")
	s.expect(`"p_" names 2 processes: give more of the id`)

	s.typed("/kill " + id + "\n")
	s.expect("stopped " + id + " (echo first-line; exec sleep 300)")
	s.typed("/ps\n")
	s.expectMatch(regexp.QuoteMeta(id) + `  pid +\d+ +killed \(\d+\)`)
	s.typed("/kill " + id + "\n")
	s.expect(id + " had ended already")

	// One that ends by itself is followed to its end, whether it ended
	// before /logs or while followed.
	s.typed(`//tool shell {"command":"echo third-start; sleep 0.2; echo third-end; exit 3","background":true}` + "\n")
	third := s.expectMatch(`tool shell returned: started (p_[0-9a-f]{12})`)
	s.typed("/logs " + third + "\n")
	s.expect(third + "│ third-start")
	s.expect(third + "│ third-end")
	s.expect(third + " exited with exit code 3")
}

// /goal shows that there is none, sets one with its budget (the flags
// read, the objective without them), refuses a budget that is not an
// amount, and clears it.
func TestChatLinesGoal(t *testing.T) {
	h := startDaemon(t, "")
	s := h.lines("all", "goals")
	s.typed("/goal\n")
	s.expect("no goal (/goal OBJECTIVE")
	s.typed("/goal --budget five dollars\n")
	s.expect(`error: --budget "five": an amount in USD, such as $5`)
	s.typed("/goal --turns many things\n")
	s.expect(`error: --turns "many": a number`)
	s.typed("/goal --minutes few things\n")
	s.expect(`error: --minutes "few": a number`)
	s.typed("/goal --tokens lots things\n")
	s.expect(`error: --tokens "lots": a number`)

	s.typed("/goal tidy the docs --budget $5 --turns 1 --minutes 30 --tokens 100000\n")
	s.expectMatch(`goal [a-z ]+, \d+ turns, \$\d+\.\d{4} of \$5\.00 \(of 1\)`)
	s.expect("tidy the docs\n")
	s.expect("the session works toward it turn after turn; /goal pause, /goal clear")
	s.typed("/goal pause\n")
	s.expectMatch(`goal [a-z ]+, \d+ turns, \$\d+\.\d{4} of \$5\.00 \(of 1\)(: .*)? — tidy the docs`)
	s.typed("/goal\n")
	s.expectMatch(`goal [a-z ]+, \d+ turns, \$\d+\.\d{4} of \$5\.00 \(of 1\)(: .*)? — tidy the docs`)
	s.typed("/goal clear\n")
	s.expect("goal cleared, ")
	s.expect(": cleared by zeroclaw-chat — tidy the docs")
	s.typed("/goal\n")
	s.expect("no goal (")
	// Kept: what its turns start runs on after it ends (set or cleared
	// with --keep).
	s.typed("/goal keep the server up --keep --turns 1\n")
	s.expectMatch(`goal [a-z ]+, \d+ turns \(of 1\)(: .*)? \(what it started runs on\) — keep the server up`)
	s.typed("/goal clear --keep\n")
	s.expect("goal cleared, ")
	s.expect(": cleared by zeroclaw-chat (what it started runs on) — keep the server up")
}

// /schedule lists none, adds one every 10m (its when and prompt said,
// and its next run), pauses and resumes it, removes it, and says what
// is wrong with one it cannot add or find.
func TestChatLinesSchedule(t *testing.T) {
	h := startDaemon(t, "")
	s := h.lines("all", "sched")
	s.typed("hi\n")
	s.expect("echo: hi") // the session exists
	s.typed("/schedule\n")
	s.expect("no schedules run in this session")
	s.typed("/schedule sometimes say hi\n")
	s.expect(`error: /schedule every DURATION PROMPT, at TIME PROMPT or "CRON" PROMPT`)
	s.typed(`/schedule "0 9 * * 1-5 say hi` + "\n")
	s.expect("error: the cron expression's quotes do not close")
	s.typed("/schedule every 10m\n")
	s.expect("error: a schedule wants a prompt after its when")
	s.typed("/schedule pause\n")
	s.expect("error: /schedule pause wants a schedule's id (/schedule lists them)")

	s.typed("/schedule every 10m say hello\nsay more\n")
	id := s.expectMatch(`added (\S+)  every 10m: say hello \(next `)
	s.typed(`/schedule "0 9 * * 1-5" morning report` + "\n")
	cron := s.expectMatch(`added (\S+)  0 9 \* \* 1-5: morning report`)
	s.typed("/schedule\n")
	s.expect(id + "  every 10m: say hello (next ")
	s.expect(cron + "  0 9 * * 1-5: morning report")
	s.typed("/schedule run " + cron + "\n")
	s.expect(cron + "  0 9 * * 1-5: morning report")
	s.typed("/schedule pause " + id + "\n")
	s.expect(id + "  every 10m: say hello (paused)")
	s.typed("/schedule resume " + id + "\n")
	s.expect(id + "  every 10m: say hello (next ")
	s.typed("/schedule rm " + id + "\n")
	s.expect("removed " + id)
	s.typed("/schedule rm " + id + "\n")
	s.expect("error: no schedule " + id)
}

// /mode shows the mode, switches it by name or by ACP's word for it,
// and refuses a name that is none, listing them.
func TestChatLinesMode(t *testing.T) {
	h := startDaemon(t, "")
	s := h.lines("all", "modes")
	s.typed("/mode\n")
	s.expect("mode: Ask (asks before changes and commands)")
	s.typed("/mode plan\n")
	s.expect("mode: Plan (")
	s.typed("/mode accept-edits\n")
	s.expect("mode: Accept edits (edits files in the project without asking")
	s.typed("/mode Read-Only\n")
	s.expect("mode: Read-only (reads, never changes)")
	s.typed("/mode reckless\n")
	s.expect(`error: no mode "reckless": one of read-only, plan, ask, accept edits, full access`)
	s.typed("/mode\n")
	s.expect("mode: Read-only")
}

// Shift-Tab in the full-screen chat cycles the mode: Ask, Accept
// edits, Plan, and back to Ask.
func TestChatTUIShiftTabCyclesMode(t *testing.T) {
	h := startDaemon(t, "")
	s := h.tui("ask", "cycle")
	s.expect("type /help for commands")
	const shiftTab = "\x1b[Z"
	s.typed(shiftTab)
	s.expect("mode: Accept edits (")
	s.typed(shiftTab)
	s.expect("mode: Plan (")
	s.typed(shiftTab)
	s.expect("mode: Ask (")
}
