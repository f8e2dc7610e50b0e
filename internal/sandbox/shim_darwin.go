package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// sandboxExec is Seatbelt's command line tool, by its absolute path (a
// PATH could name another).
const sandboxExec = "/usr/bin/sandbox-exec"

func available() Support {
	if _, err := os.Stat(sandboxExec); err != nil {
		return Support{EnforcedBy: "none", Reason: "no " + sandboxExec + " here"}
	}
	return Support{EnforcedBy: "seatbelt", NetworkRules: true, Reason: "sandbox-exec with a generated profile (writes and network)"}
}

// run runs argv under sandbox-exec with p's profile, as its child, and
// waits; when the daemon dies (this process's parent changes: macOS has
// no parent-death signal) or the command is cancelled, it kills its
// process group, which the command and what it started are in.
func run(p Policy, argv []string) int {
	if p.Parent != 0 && os.Getppid() != p.Parent {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: the daemon is gone; not running the command")
		return 125
	}
	profile, params := Seatbelt(p, nil)
	args := []string{"-p", profile}
	for _, kv := range params {
		args = append(args, "-D", kv)
	}
	cmd := exec.Command(sandboxExec, append(args, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if f := os.NewFile(3, "gate"); f != nil {
		if _, err := f.Stat(); err == nil {
			cmd.ExtraFiles = []*os.File{f} // the daemon's start gate
		}
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	orphaned := make(chan struct{})
	go func() {
		for p.Parent != 0 && os.Getppid() == p.Parent {
			time.Sleep(200 * time.Millisecond)
		}
		close(orphaned)
	}()
	killGroup := func() {
		// The daemon starts the shim as its own group's leader: the
		// group is the command and all it started (and this process).
		if pg, err := syscall.Getpgid(0); err == nil && pg == os.Getpid() {
			syscall.Kill(-pg, syscall.SIGKILL)
		}
		cmd.Process.Kill()
	}
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return cmd.ProcessState.ExitCode()
	case sig := <-sigs:
		killGroup()
		return 128 + int(sig.(syscall.Signal))
	case <-orphaned:
		killGroup()
		return 137
	}
}

// Supervises says whether the shim can supervise an unconfined command
// (Supervise): not here yet.
func Supervises() bool { return false }

func isolation() string { return "no namespaces on darwin" }

// Confines says whether process pid runs under a sandbox shim. Not
// known on darwin yet: Seatbelt's profile denies the socket instead.
func Confines(pid int) bool { return false }
