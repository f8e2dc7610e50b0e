package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeroclaw/zeroclaw/internal/background"
	"github.com/zeroclaw/zeroclaw/internal/metrics"
	"github.com/zeroclaw/zeroclaw/internal/protocol"
	"github.com/zeroclaw/zeroclaw/internal/provider"
)

// The session side of its background processes (internal/background
// runs them): the table made on first use, their starts and ends told
// to the clients (process_update) and an end to the model (Notices),
// those a dead daemon left reported lost. The process methods (list,
// output, kill, write) as a client calls them are internal/processes.

// processes is the session's table of background processes, made on
// first use.
func (s *Session) processes() *background.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.procs == nil {
		dir := ""
		if s.m.procDir != "" && protocol.ValidID(s.id) {
			dir = filepath.Join(s.m.procDir, s.id)
		}
		t := s.m.conf().Config().Tools
		s.procs = background.NewTable(dir, t.OutputRingBytes, t.ProcessLogBytes, t.MaxProcesses, s.processChanged)
	}
	return s.procs
}

// processChanged tells every client of a background process that
// started or ended (process_update), and the model of one that ended on
// its own: at its next call (Notices).
func (s *Session) processChanged(p *background.Process) {
	info := wireProcess(p.Info())
	ev := protocol.ProcessUpdateEvent{Process: info}
	if info.State == background.Running {
		metrics.ProcessStarted()
		p.SetSeq(s.emit(ev))
		return
	}
	metrics.ProcessEnded(info.State)
	s.nmu.Lock()
	s.procsEnded = true
	s.nmu.Unlock()
	if info.State != background.Exited || p.Killed() {
		s.emit(ev)
		return
	}
	how := "exited"
	switch {
	case info.ExitCode != nil:
		how = fmt.Sprintf("exited with exit code %d", *info.ExitCode)
	case info.Signal != "":
		how = "ended by " + info.Signal
	}
	text := fmt.Sprintf("[background process %s (%s) %s", info.ID, info.Command, how)
	if tail := strings.TrimRight(p.Tail(2048), "\n"); tail != "" {
		text += "; its last output:\n" + tail + "\n"
	}
	text += "]"
	if s.m.conf().Config().Tools.WakeOnExit && s.t.Idle() {
		// An idle session wakes: a turn of its own tells the model.
		s.emit(ev)
		j := &job{prompt: text, done: make(chan protocol.SessionPromptResult, 1)}
		if s.enqueue(j) != nil {
			s.addNotice(notice{text: text, process: p}) // it closes: the notice waits
		}
		return
	}
	// The model's notice is kept before the clients hear of the exit: a
	// prompt sent on hearing it finds the notice.
	s.addNotice(notice{text: text, process: p})
	s.emit(ev)
}

func (s *Session) addNotice(n notice) {
	s.nmu.Lock()
	s.notices = append(s.notices, n)
	s.nmu.Unlock()
}

// reportLost reports lost, as a stored session is loaded, the
// background processes a previous daemon left running (it died without
// ending them: a kill -9, a crash); the reaper or the sandbox's shim
// ended them. Those that ran on while the session was closed (kept) are
// not lost.
func (s *Session) reportLost() {
	if s.m.procDir == "" || !protocol.ValidID(s.id) {
		return
	}
	dir := filepath.Join(s.m.procDir, s.id)
	if _, err := os.Stat(dir); err != nil {
		return // none ever ran
	}
	s.m.mu.Lock()
	kept := s.m.kept[s.id]
	s.m.mu.Unlock()
	for _, i := range background.LostIn(dir, kept) {
		metrics.ProcessEnded(background.Lost)
		s.emit(protocol.ProcessUpdateEvent{Process: wireProcess(i)})
	}
}

// notice is what the model is told before its next call: a background
// process that ended, unless a tool's read already showed it the end.
type notice struct {
	text    string
	process *background.Process
}

// Notices implements agent.Host: what the model must hear before its
// next call (a background process that ended), taken once each.
func (s *Session) Notices() []provider.Message {
	s.nmu.Lock()
	ns := s.notices
	s.notices = nil
	s.nmu.Unlock()
	var out []provider.Message
	for _, n := range ns {
		if n.process != nil && n.process.Seen() {
			continue
		}
		out = append(out, provider.Message{Role: provider.RoleUser, Text: n.text})
	}
	return out
}

// wireProcess is a process as the wire describes it.
func wireProcess(i background.Info) protocol.ProcessInfo {
	w := protocol.ProcessInfo{ID: i.ID, Command: i.Command, Pid: i.Pid, TTY: i.TTY, State: i.State, ExitCode: i.ExitCode,
		Signal: i.Signal, StartedAt: i.StartedAt.Format(time.RFC3339Nano), OutputBytes: i.OutputBytes}
	if i.EndedAt != nil {
		w.EndedAt = i.EndedAt.Format(time.RFC3339Nano)
	}
	return w
}

// processInfos describes the session's background processes.
func (s *Session) processInfos() []protocol.ProcessInfo {
	s.mu.Lock()
	t := s.procs
	s.mu.Unlock()
	out := []protocol.ProcessInfo{}
	if t != nil {
		for _, i := range t.List() {
			out = append(out, wireProcess(i))
		}
	}
	return out
}
