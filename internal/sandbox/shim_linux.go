package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func available() Support {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		reason := "the kernel has no Landlock"
		if err != nil {
			reason += " (" + err.Error() + ")"
		}
		return Support{EnforcedBy: "none", Reason: reason}
	}
	return Support{EnforcedBy: "landlock", NetworkRules: abi >= 4, Reason: "Landlock ABI " + strconv.Itoa(abi)}
}

// devices are the device files a shell writes to.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// run confines this process, runs argv as its child and waits; it is
// the subreaper of everything the child starts, and kills all of it when
// the child ends, or when the daemon dies (a parent-death signal).
func run(p Policy, argv []string) int {
	switch {
	case p.Init:
		return runInit(p, argv)
	case p.Exec:
		return runExec(p, argv)
	}
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	if p.Parent != 0 && os.Getppid() != p.Parent {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: the daemon is gone; not running the command")
		return 125
	}
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	// In namespaces of its own the command is confined by its init (the
	// second stage); else this process confines itself, and the command
	// inherits it.
	cmd := isolated(p, argv)
	if cmd == nil && !p.Unconfined {
		if code := confine(p); code != 0 {
			return code
		}
	}
	sigs := make(chan os.Signal, 4)
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		// Under a terminal a Ctrl-C (SIGINT to the terminal's foreground
		// group: the command and this process) is the command's to
		// handle, as in any shell; a stop is TERM.
		intr := make(chan os.Signal, 1)
		signal.Notify(intr, syscall.SIGINT)
		go func() {
			for range intr {
			}
		}()
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	} else {
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	start := func(cmd *exec.Cmd) error {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if _, err := unix.FcntlInt(3, unix.F_GETFD, 0); err == nil {
			cmd.ExtraFiles = []*os.File{os.NewFile(3, "gate")} // the daemon's start gate
		}
		return cmd.Start()
	}
	if cmd != nil {
		if err := start(cmd); err != nil {
			// No namespaces after all (a policy of the system's):
			// Landlock alone, as where there are none.
			cmd = nil
			if !p.Unconfined {
				if code := confine(p); code != 0 {
					return code
				}
			}
		}
	}
	if cmd == nil {
		cmd = exec.Command(argv[0], argv[1:]...)
		if err := start(cmd); err != nil {
			fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
			return 127
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		killDescendants()
		return exitCode(cmd, err)
	case sig := <-sigs:
		// The daemon died, or it stops or cancels the command (it then
		// signals the whole group, the command included). A dead daemon
		// is seen by this process's new parent; the parent-death signal
		// comes when the thread that started us exits, which may be
		// before the rest of the daemon (we are first handed to another
		// of its threads): so the parent is looked at again at every
		// signal and a few times a second through the grace.
		orphaned := false
		orphan := func() {
			if !orphaned && p.Parent != 0 && os.Getppid() != p.Parent {
				// No one waits for the command: all it started is told
				// at once, and killed a moment later.
				orphaned = true
				signalDescendants(syscall.SIGTERM)
			}
		}
		orphan()
		start := time.Now()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		exited := false
		for !exited {
			grace := StopGrace
			if orphaned {
				grace = OrphanGrace
			}
			left := grace - time.Since(start)
			if left <= 0 {
				break
			}
			// Else the command has the grace a command out of the
			// sandbox has to end (its traps run); then nothing it
			// started runs on.
			t := time.NewTimer(left)
			select {
			case <-done:
				exited = true
			case <-sigs:
				orphan()
			case <-tick.C:
				orphan()
			case <-t.C:
			}
			t.Stop()
		}
		killDescendants()
		if !exited {
			<-done
		}
		return 128 + int(sig.(syscall.Signal))
	}
}

// confine applies p to this process (and so to all it starts); a
// non-zero exit code when it cannot.
func confine(p Policy) int {
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts", "/dev/shm").IgnoreIfMissing(),
		landlock.RWDirs(p.Writable...).WithRefer().IgnoreIfMissing(),
	}
	cfg := landlock.V7.BestEffort()
	var err error
	if p.Network {
		err = cfg.RestrictPaths(rules...)
	} else {
		err = cfg.Restrict(rules...) // no network rule: no TCP connect or bind
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
		return 126
	}
	return 0
}

func exitCode(cmd *exec.Cmd, err error) int {
	if err == nil {
		return 0
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return 128 + int(st.Signal())
	}
	if cmd.ProcessState != nil {
		return cmd.ProcessState.ExitCode()
	}
	return 127
}

// Supervises says whether the shim can supervise an unconfined command
// (Supervise): here, with the parent-death signal and a subreaper.
func Supervises() bool { return true }

// signalDescendants sends sig to every process below this one.
func signalDescendants(sig syscall.Signal) {
	for _, pid := range descendants() {
		syscall.Kill(pid, sig)
	}
}

// descendants are the processes below this one, read from /proc.
func descendants() []int {
	self := os.Getpid()
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		kids[ppid] = append(kids[ppid], pid)
	}
	var all []int
	for q := kids[self]; len(q) > 0; {
		pid := q[0]
		q = append(q[1:], kids[pid]...)
		all = append(all, pid)
	}
	return all
}

// killDescendants kills every process below this one (orphans come back
// to it: it is their subreaper), until none is left.
func killDescendants() {
	// Every process still below this one is a child of it (an orphan
	// reparented here) or below such a child: with no child, none is.
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); err == syscall.ECHILD {
		return
	}
	for range 50 {
		all := descendants()
		if len(all) == 0 {
			return
		}
		for _, pid := range all {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		// Reap what is ours to reap, then look again.
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}
