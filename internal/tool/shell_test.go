//go:build linux

package tool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// gone waits until pid has exited, through a pidfd (readable once the
// process has terminated), bounded.
func gone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10000)
	if err != nil || n != 1 {
		t.Fatalf("process %d still runs (%v)", pid, err)
	}
}

// A command that leaves a child in the background: its output is kept,
// it returns when bash exits, and the child does not outlive it.
func TestShellBackgroundChildIsKilledAndOutputKept(t *testing.T) {
	env := fixture(t)
	r := run(t, env, "shell", `{"command":"sleep 300 & echo child $!; echo hi"}`)
	if r.IsError || !strings.Contains(r.Output, "hi") || !strings.Contains(r.Output, "child ") {
		t.Fatalf("result %+v", r)
	}
	pid, err := strconv.Atoi(strings.Fields(strings.SplitN(r.Output, "child ", 2)[1])[0])
	if err != nil {
		t.Fatalf("no pid in %q", r.Output)
	}
	gone(t, pid)
}

func TestShellEnvironmentAndUmask(t *testing.T) {
	env := fixture(t)
	env.Environ = []string{"PATH=" + os.Getenv("PATH"), "ZC_TEST=visible"}
	env.Umask = "0027"
	r := run(t, env, "shell", `{"command":"echo ${ZC_TEST:-none} ${HOME:-nohome}; umask"}`)
	if r.IsError || r.Output != "visible nohome\n0027\n" {
		t.Fatalf("result %q", r.Output)
	}
	// The umask does not shift bash's line numbers in its messages.
	if r := run(t, env, "shell", `{"command":"no-such-command-zc"}`); !strings.Contains(r.Output, "line 1:") {
		t.Fatalf("error message %q, want it on line 1", r.Output)
	}
}

// The groups of commands a dead daemon left running are killed by the
// next one; a recorded id now used by another process is left alone.
func TestReaperKillsWhatADeadDaemonLeft(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "procs")
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go cmd.Wait()
	(&Reaper{Dir: dir}).Track(cmd.Process.Pid) // the daemon dies without untracking
	// A record whose start time does not match: another process now.
	os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), []byte("1\n"), 0o600)
	if n := (&Reaper{Dir: dir}).Reap(); n != 1 {
		t.Fatalf("reaped %d groups, want 1", n)
	}
	gone(t, cmd.Process.Pid)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("records left: %v", ents)
	}
}

// With a reaper, a command starts only once its group is recorded, and
// its record is gone when it has ended.
func TestShellWithReaperRecordsThenRuns(t *testing.T) {
	env := fixture(t)
	dir := filepath.Join(t.TempDir(), "procs")
	env.Reaper = &Reaper{Dir: dir}
	r := run(t, env, "shell", `{"command":"ls `+dir+`; echo ran"}`)
	if r.IsError || !strings.HasSuffix(r.Output, "ran\n") || len(strings.Fields(r.Output)) != 2 {
		t.Fatalf("result %q: want the command's own record listed, then ran", r.Output)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("records left after the command: %v", ents)
	}
}
