package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Namespaces. The shim's first stage starts a second stage (this
// binary again, Policy.Init) in a user, pid and mount namespace of its
// own (and a network namespace with nothing in it, without Network).
// The second stage is the init of the command's pid namespace: it makes
// Hide empty (a tmpfs on each), mounts a /proc of its own, confines
// itself with Landlock, starts the command and reaps what ends, and
// ends with the command: its end ends everything in the namespace (the
// kernel kills it). Nothing in the namespace can see or signal the
// first stage, the daemon or any process outside its tree, and the
// init ignores what they send it; the first stage's death kills the
// init (a parent-death signal), and the daemon's death ends the first
// stage as before. So no command can kill its wrapper to outlive its
// session, nor reach the daemon's socket or store.

var isolationOnce = sync.OnceValue(func() string {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	switch {
	case os.Getenv(NamespacesEnv) == "off":
		return NamespacesEnv + "=off"
	case read("/proc/sys/user/max_user_namespaces") == "0":
		return "user namespaces are off (user.max_user_namespaces = 0)"
	case read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
		return "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)"
	case read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
		return "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"
	}
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return "the kernel has no user namespaces"
	}
	return ""
})

func isolation() string { return isolationOnce() }

// isolated is the command that runs argv through the second stage, in
// namespaces of its own (see above); nil when this machine gives none.
func isolated(p Policy, argv []string) *exec.Cmd {
	if isolation() != "" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	q := p
	q.Init = true
	cmd := exec.Command(exe, Wrap(exe, q, argv)[1:]...)
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS)
	if !p.Network && !p.Unconfined {
		flags |= unix.CLONE_NEWNET
	}
	// The init is root of its user namespace (it keeps the
	// capabilities it mounts with); the command runs in a user
	// namespace below it as the user again, with none.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	return cmd
}

// outsideID is the id this user namespace's root is outside it (the
// user's own uid or gid), read from its map.
func outsideID(mapFile string) int {
	b, err := os.ReadFile(mapFile)
	if err != nil {
		return 0
	}
	var in, out, n int
	if _, err := fmt.Sscan(string(b), &in, &out, &n); err != nil {
		return 0
	}
	return out
}

// runInit is the second stage: the init of the command's namespaces.
// It starts the last stage (this binary again, Policy.Exec) in a user
// namespace of its own as the user, which confines itself and becomes
// the command.
func runInit(p Policy, argv []string) int {
	if err := hide(p); err != nil {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
		return 126
	}
	// Signals are the command's: this init only waits (a signal with
	// no handler would be dropped anyway; a handled one must not end
	// it before the command).
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for range sigs {
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
		return 127
	}
	q := p
	q.Init, q.Exec = false, true
	files := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	if _, err := unix.FcntlInt(3, unix.F_GETFD, 0); err == nil {
		files = append(files, os.NewFile(3, "gate"))
	}
	uid, gid := outsideID("/proc/self/uid_map"), outsideID("/proc/self/gid_map")
	proc, err := os.StartProcess(exe, Wrap(exe, q, argv), &os.ProcAttr{Files: files, Env: os.Environ(), Sys: &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: 0, Size: 1}},
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
		return 127
	}
	// Reap everything that ends here (orphans come to the init) until
	// the command does.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 127
		}
		if pid != proc.Pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// hide makes each of p.Hide an empty directory to this mount namespace
// (and what it starts), and gives it a /proc of its own pid namespace.
// A directory that holds one the command may write (a project inside
// the data directory) is left as it is: the Landlock rules still keep
// writes out of it.
func hide(p Policy) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("a mount namespace of its own: %w", err)
	}
	for _, d := range p.Hide {
		if d == "" || holdsAny(d, p.Writable) {
			continue
		}
		fi, err := os.Stat(d)
		if err != nil {
			continue
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "size=4k,mode=0500")
		} else {
			// A file (a socket in a shared directory): /dev/null over it.
			if err = unix.Mount("/dev/null", d, "", unix.MS_BIND, ""); err == nil {
				err = unix.Mount("", d, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
			}
		}
		if err != nil {
			return fmt.Errorf("hiding %s from the command: %w", d, err)
		}
	}
	// Best effort: without it the command sees the system's processes
	// in /proc (it still cannot signal them: they are not in its pid
	// namespace).
	unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	return nil
}

// runExec is the last stage: it confines itself and becomes the command.
func runExec(p Policy, argv []string) int {
	if !p.Unconfined {
		if code := confine(p); code != 0 {
			return code
		}
	}
	path, err := exec.LookPath(argv[0])
	if err == nil {
		err = syscall.Exec(path, argv, os.Environ())
	}
	fmt.Fprintln(os.Stderr, "zeroclaw sandbox: "+err.Error())
	return 127
}
