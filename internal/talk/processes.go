package talk

import (
	"context"
	"fmt"
	"strings"

	"github.com/zeroclaw/zeroclaw/internal/protocol"
)

// The session's background processes in the chat: /ps lists them,
// /logs ID shows one's output and follows it, /kill ID stops one.

// followWait is how long one read of /logs waits for more output
// (process/output's waitMs): it is followed without polling.
const followWait = 10000

// ps serves /ps.
func (ch *chat) ps(ctx context.Context, _, _ string) error {
	var res protocol.ProcessListResult
	if err := ch.cv.c.Call(ctx, protocol.MethodProcessList, protocol.SessionRef{SessionID: ch.cv.r.sessionID}, &res); err != nil {
		return err
	}
	if len(res.Processes) == 0 {
		ch.say("no background processes")
		return nil
	}
	for _, p := range res.Processes {
		ch.say(processRow(p))
	}
	return nil
}

// processRow is one process as /ps shows it.
func processRow(p protocol.ProcessInfo) string {
	state := p.State
	switch {
	case p.ExitCode != nil:
		state += fmt.Sprintf(" (%d)", *p.ExitCode)
	case p.Signal != "":
		state += " (" + p.Signal + ")"
	}
	tty := ""
	if p.TTY {
		tty = " tty"
	}
	return fmt.Sprintf("%s  pid %-7d %-12s %8s%s  %s", p.ID, p.Pid, state, sizeOf(p.OutputBytes), tty, p.Command)
}

func sizeOf(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// processNamed finds the process arg names: its id, or the start of it
// (with or without p_) when only one matches.
func (ch *chat) processNamed(ctx context.Context, arg string) (protocol.ProcessInfo, error) {
	var res protocol.ProcessListResult
	if err := ch.cv.c.Call(ctx, protocol.MethodProcessList, protocol.SessionRef{SessionID: ch.cv.r.sessionID}, &res); err != nil {
		return protocol.ProcessInfo{}, err
	}
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return protocol.ProcessInfo{}, fmt.Errorf("name a process: /ps lists them")
	}
	var found []protocol.ProcessInfo
	for _, p := range res.Processes {
		if p.ID == arg {
			return p, nil
		}
		if strings.HasPrefix(p.ID, arg) || strings.HasPrefix(p.ID, "p_"+arg) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return protocol.ProcessInfo{}, fmt.Errorf("no process %q in this session: /ps lists them", arg)
	case 1:
		return found[0], nil
	}
	return protocol.ProcessInfo{}, fmt.Errorf("%q names %d processes: give more of the id", arg, len(found))
}

// logs serves /logs ID: the last of its output, then what it prints,
// until it ends or /logs stops following (alone, or naming another).
func (ch *chat) logs(ctx context.Context, _, arg string) error {
	ch.mu.Lock()
	stop := ch.following
	ch.following = nil
	ch.mu.Unlock()
	if stop != nil {
		stop()
		if strings.TrimSpace(arg) == "" {
			ch.note("stopped following")
			return nil
		}
	}
	p, err := ch.processNamed(ctx, arg)
	if err != nil {
		ch.note(err.Error())
		return nil
	}
	sid := ch.cv.r.sessionID
	const tail = 4 << 10
	since := max(0, p.OutputBytes-tail)
	fctx, cancel := context.WithCancel(context.Background())
	ch.mu.Lock()
	ch.following = cancel
	ch.mu.Unlock()
	if p.State == "running" {
		ch.note(fmt.Sprintf("following %s (%s); /logs alone stops", p.ID, p.Command))
	}
	read := func(wait int) (protocol.ProcessOutputResult, bool) {
		var o protocol.ProcessOutputResult
		err := ch.cv.c.Call(fctx, protocol.MethodProcessOutput, protocol.ProcessOutputParams{SessionID: sid, ID: p.ID, Since: since, PlainText: true, WaitMs: wait}, &o)
		if err != nil {
			return o, false
		}
		if o.Output != "" {
			for _, line := range strings.Split(strings.TrimRight(o.Output, "\n"), "\n") {
				ch.say(ch.dim(p.ID+"│ ") + line)
			}
		}
		since = o.Next
		return o, true
	}
	o, ok := read(0)
	if !ok || o.State != "running" {
		cancel()
		if ok {
			ch.note(fmt.Sprintf("%s %s", p.ID, endedHow(o.State, o.ExitCode)))
		}
		return nil
	}
	go func() {
		defer cancel()
		for {
			o, ok := read(followWait)
			if !ok {
				return
			}
			if o.State != "running" {
				read(0) // what it printed last
				ch.note(fmt.Sprintf("%s %s", p.ID, endedHow(o.State, o.ExitCode)))
				return
			}
		}
	}()
	return nil
}

func endedHow(state string, code *int) string {
	if code != nil {
		return fmt.Sprintf("%s with exit code %d", state, *code)
	}
	return state
}

// kill serves /kill ID.
func (ch *chat) kill(ctx context.Context, _, arg string) error {
	p, err := ch.processNamed(ctx, arg)
	if err != nil {
		ch.note(err.Error())
		return nil
	}
	var res protocol.ProcessKillResult
	if err := ch.cv.c.Call(ctx, protocol.MethodProcessKill, protocol.ProcessKillParams{SessionID: ch.cv.r.sessionID, ID: p.ID}, &res); err != nil {
		return err
	}
	if !res.Killed {
		ch.note(p.ID + " had ended already")
		return nil
	}
	ch.say(fmt.Sprintf("stopped %s (%s)", p.ID, p.Command))
	return nil
}
